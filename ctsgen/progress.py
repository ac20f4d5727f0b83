"""Progress lines for long work: redrawn in place on a terminal, rate-limited in logs."""

from __future__ import annotations

import sys
import time
from typing import IO


class Progress:
    """Call with (done, total[, note]); prints at most every ``interval`` seconds and at the end."""

    def __init__(self, label: str, stream: IO[str] | None = None, interval: float | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval if interval is not None else (0.1 if self.tty else 5.0)
        self._last = 0.0

    def __call__(self, done: int, total: int, note: str = "") -> None:
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        line = f"{self.label} [{done}/{total}] {note}".rstrip()
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done >= total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
