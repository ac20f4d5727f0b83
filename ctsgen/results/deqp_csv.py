"""deqp-runner's CSV files, read and written: ``results.csv``, ``failures.csv`` and baselines.

The layout deqp-runner 0.20 writes (its ``RunnerResults``: one line per case, sorted by name):

    results.csv     name,Status,duration      every case; duration in seconds
    failures.csv    name,Status               the cases whose status is not a success

and reads back as a baseline (``--baseline``): each line matched by its pattern
:data:`DEQP_LINE` (a name up to the first comma, a status up to the next, anything after
ignored, so a results.csv or failures.csv is a baseline as it is), blank lines and lines starting
with ``#`` skipped, a name listed twice an error. Status is one of
:class:`~ctsgen.results.status.DeqpStatus`. Case names never hold a comma (ctsgen's are dotted
identifiers), so no field is quoted, as in deqp-runner; a ``re:`` rule's regex may (``{1,3}``),
so its status is found from the right (:func:`split_line`). Lines are read as
:func:`ctsgen.core.textlines.read_lines` reads them (a BOM and CRLF line ends are dropped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ctsgen.core.textlines import read_lines
from ctsgen.errors import UserError
from ctsgen.results.status import DeqpStatus


#: deqp-runner's reader (``RunnerResults::from_csv``): a name, a status, then anything
DEQP_LINE = re.compile(r"^([^,]+),([^,]+)")
#: a baseline line naming a regex rule, not a case (:mod:`ctsgen.results.expectations`)
REGEX_PREFIX = "re:"


class CsvError(UserError):
    """A CSV results or baseline file cannot be read; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Row:
    """One case of a results.csv: its name, status and duration in seconds."""

    name: str
    status: DeqpStatus
    duration_s: float = 0.0


def format_results(rows: Iterable[Row]) -> str:
    """results.csv: every case, sorted by name."""
    return "".join(f"{r.name},{r.status.value},{r.duration_s:.6f}\n" for r in sorted(rows, key=lambda r: r.name))


def format_failures(rows: Iterable[Row]) -> str:
    """failures.csv: the cases whose status is not a success, sorted by name."""
    return "".join(f"{r.name},{r.status.value}\n" for r in sorted(rows, key=lambda r: r.name)
                   if not r.status.is_success)


def write_csvs(rows: list[Row], out_dir: Path) -> tuple[Path, Path]:
    """Write ``out_dir/results.csv`` and ``out_dir/failures.csv``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results, failures = out_dir / "results.csv", out_dir / "failures.csv"
    results.write_text(format_results(rows))
    failures.write_text(format_failures(rows))
    return results, failures


def _status(path: Path, n: int, text: str) -> DeqpStatus:
    try:
        return DeqpStatus(text.strip())
    except ValueError:
        raise CsvError(f"{path}:{n}: unknown status {text.strip()[:40]!r} -> a status is one of "
                       f"{', '.join(s.value for s in DeqpStatus)}") from None


def _is_duration(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def split_line(path: Path, n: int, line: str) -> tuple[str, DeqpStatus]:
    """A line's name and status: deqp-runner's :data:`DEQP_LINE`, except for a ``re:`` rule, whose
    regex may hold commas (``{1,3}``): its status is the last field, or the one before a duration."""
    if line.startswith(REGEX_PREFIX):
        name, _, status = line.rpartition(",")
        if _is_duration(status) and "," in name:
            name, _, status = name.rpartition(",")
        if name:
            return name.strip(), _status(path, n, status)
    m = DEQP_LINE.match(line)
    if not m:
        raise CsvError(f"{path}:{n}: expected 'name,Status', got {line[:60]!r} -> write one case a line")
    return m.group(1).strip(), _status(path, n, m.group(2))


def read_rows(path: Path) -> list[tuple[int, str, DeqpStatus]]:
    """(line number, name, status) of each line of a deqp-runner CSV file or baseline."""
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise CsvError(f"{path}: cannot be read as a name,Status file ({type(exc).__name__}) -> name a "
                       "fails file, failures.csv or results.csv (UTF-8 text)") from None
    out, seen = [], {}
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, st = split_line(path, n, line)
        if name in seen:
            raise CsvError(f"{path}:{n}: {name} is already listed on line {seen[name]} -> list each case once")
        seen[name] = n
        out.append((n, name, st))
    return out
