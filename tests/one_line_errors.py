"""What the trust tests share: a usage error is one line, exit 2, naming the fix (docs: errors.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ctsgen.cli import main

REPO = Path(__file__).resolve().parents[1]


def fails_with(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``ctsgen argv``: it must exit 2 with one ``ctsgen: error: WHAT -> FIX`` line; that line."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if ln.startswith("ctsgen")]
    assert len(err) == 1 and err[0].startswith("ctsgen: error: ") and " -> " in err[0], err
    return err[0]


@contextmanager
def held_by_another_process(path: Path, flag: str) -> Iterator[None]:
    """While the block runs, another process holds the write lock of output ``path`` (``flag``: its option)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom ctsgen.pack.lock import out_lock\n"
         f"with out_lock({str(path)!r}, {flag!r}):\n    print('held', flush=True)\n    sys.stdin.read()"],
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.communicate("", timeout=30)
