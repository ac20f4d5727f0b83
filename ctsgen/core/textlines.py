"""The lines of a line-based input file (baselines, flakes, skips, caselists, results files).

Editors on Windows save UTF-8 with a byte-order mark and CRLF line ends: a U+FEFF at the start of
a line (the file's first, or one of two files pasted together) and a CR at its end are dropped,
so ``\\ufeffname`` is ``name``. Lines end at LF only, as deqp-runner's ``BufRead::lines`` reads
them: a form feed or U+2028 inside a line stays in it.
"""

from __future__ import annotations

from pathlib import Path

BOM = "\ufeff"


def read_lines(path: str | Path) -> list[str]:
    """The lines of UTF-8 text file ``path``, each without its BOM, CR and LF (OSError and
    UnicodeDecodeError propagate: the caller names the file and what it should hold)."""
    text = Path(path).read_bytes().decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.removesuffix("\r").lstrip(BOM) for ln in lines]
