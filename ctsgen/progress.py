"""Progress of long work: one live line on a terminal, a summary line every few seconds in a log.

On a terminal the line is a tqdm bar (tqdm: small, pure Python, one dependency-free package that
redraws one line in place and clears it for messages; rich would bring a whole rendering stack for
one line). Elsewhere (CI logs, files) a plain line is written at most every ``interval`` seconds
and once when the count completes: never one line per example. Messages such as a fuzzer's
"found:" go through :meth:`Progress.write`, which puts them on a line of their own.
"""

from __future__ import annotations

import sys
import time
from typing import IO

from tqdm import tqdm


class Progress:
    """Call with (done, total[, note]); ``total`` None for open-ended work (a timed fuzz run)."""

    def __init__(self, label: str, stream: IO[str] | None = None, interval: float | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval if interval is not None else (0.1 if self.tty else 5.0)
        self._last = time.monotonic()
        self._finished = False
        self._bar: tqdm | None = None

    def __call__(self, done: int, total: int | None = None, note: str = "") -> None:
        if self.tty:
            self._live(done, total, note)
            return
        now = time.monotonic()
        finished = total is not None and done >= total
        if (finished and not self._finished) or now - self._last >= self.interval:
            self._finished = self._finished or finished
            self._last = now
            count = f"{done}/{total}" if total is not None else f"{done}"
            self.stream.write(f"{self.label} [{count}] {note}".rstrip() + "\n")
            self.stream.flush()

    def _live(self, done: int, total: int | None, note: str) -> None:
        if self._bar is None:
            self._bar = tqdm(total=total, desc=self.label, file=self.stream, mininterval=self.interval,
                             leave=True, dynamic_ncols=True)
        if self._bar.total != total:
            self._bar.total = total
        if note:
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.update(done - self._bar.n)
        if total is not None and done >= total:
            self.close()

    def write(self, message: str) -> None:
        """``message`` on a line of its own (the live line is cleared and redrawn below it)."""
        if self._bar is not None:
            self._bar.write(message, file=self.stream)
        else:
            self.stream.write(message + "\n")
            self.stream.flush()

    def close(self) -> None:
        """End the live line (a terminal keeps its last state)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
