"""deqp-runner's CSV files, read and written: ``results.csv``, ``failures.csv`` and baselines.

The layout deqp-runner writes (its ``RunnerResults``: one line per case, sorted by name):

    results.csv     name,Status,duration      every case; duration in seconds
    failures.csv    name,Status               only the unexpected cases: failures and UnexpectedPass

and reads back as a baseline (``--baseline``): ``name,Status`` lines, anything after the second
field ignored (so a results.csv or failures.csv is a baseline as it is), blank lines and lines
starting with ``#`` skipped, a name listed twice an error. Status is one of
:class:`~ctsgen.results.status.DeqpStatus`. Names never hold a comma (ctsgen's are dotted
identifiers), so no field is quoted, as in deqp-runner.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ctsgen.errors import UserError
from ctsgen.results.status import DeqpStatus


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
    """failures.csv: the unexpected cases (failures and UnexpectedPass), sorted by name."""
    return "".join(f"{r.name},{r.status.value}\n" for r in sorted(rows, key=lambda r: r.name)
                   if r.status.is_unexpected)


def write_csvs(rows: list[Row], out_dir: Path) -> tuple[Path, Path]:
    """Write ``out_dir/results.csv`` and ``out_dir/failures.csv``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results, failures = out_dir / "results.csv", out_dir / "failures.csv"
    results.write_text(format_results(rows))
    failures.write_text(format_failures(rows))
    return results, failures


def read_rows(path: Path) -> list[tuple[int, str, DeqpStatus]]:
    """(line number, name, status) of each line of a deqp-runner CSV file or baseline."""
    try:
        text = Path(path).read_text()
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError) as exc:
        raise CsvError(f"{path}: cannot be read as a name,Status file ({type(exc).__name__}) -> name a "
                       "fails file, failures.csv or results.csv") from None
    out, seen = [], {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 2:
            raise CsvError(f"{path}:{n}: expected 'name,Status', got {line[:60]!r} -> write one case a line")
        name, status = fields[0].strip(), fields[1].strip()
        try:
            st = DeqpStatus(status)
        except ValueError:
            raise CsvError(f"{path}:{n}: unknown status {status[:40]!r} -> a status is one of "
                           f"{', '.join(s.value for s in DeqpStatus)}") from None
        if name in seen:
            raise CsvError(f"{path}:{n}: {name} is already listed on line {seen[name]} -> list each case once")
        seen[name] = n
        out.append((n, name, st))
    return out
