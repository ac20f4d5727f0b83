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

ctsgen writes the two files only where it owns them (:func:`check_csv_dir`): a file that is absent,
or one it wrote itself, as the folder's ``.ctsgen-owned.json`` records (each file's SHA-256). A file
there that ctsgen did not write, or that was changed since, is the user's: the run is refused
before any case runs. Each file is written to a temporary beside it and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ctsgen.core.textlines import read_lines
from ctsgen.errors import UserError
from ctsgen.pack.lock import write_beside
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


#: The two files of a CSV folder, deqp-runner's names.
CSV_FILES = ("results.csv", "failures.csv")
#: The record, inside a CSV folder, of the files ctsgen wrote there (name -> SHA-256 of each version it may hold).
OWNED = ".ctsgen-owned.json"


class CsvOutputError(UserError):
    """A CSV folder holds a file ctsgen did not write, or is no folder; the message names it and the fix."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _owned(out_dir: Path) -> dict[str, list[str]] | None:
    """The SHA-256 digests ``out_dir``'s record says ctsgen wrote for each file ({}: no record; None:
    something else is at the record's path)."""
    record = out_dir / OWNED
    if not record.exists() and not record.is_symlink():
        return {}
    try:
        rec = json.loads(record.read_text()) if record.is_file() and not record.is_symlink() else None
    except (OSError, ValueError):
        return None
    files = rec.get("files") if isinstance(rec, dict) and rec.get("format") == "ctsgen-owned" else None
    if not isinstance(files, dict):
        return None
    return {k: [d for d in v if isinstance(d, str)] for k, v in files.items() if isinstance(v, list)}


def check_csv_dir(out_dir: Path) -> None:
    """Refuse ``out_dir`` unless it is absent or a folder whose results.csv, failures.csv and record
    are each absent or as ctsgen wrote them (a user's baseline copied there is refused, not replaced)."""
    fix = "-> move it out of the way, or choose another --csv-dir"
    if (out_dir.is_symlink() and not out_dir.exists()) or (out_dir.exists() and not out_dir.is_dir()):
        raise CsvOutputError(f"{out_dir}: not a folder, so results.csv and failures.csv cannot go there {fix}")
    if not out_dir.exists():
        return
    owned = _owned(out_dir)
    if owned is None:
        raise CsvOutputError(f"{out_dir / OWNED}: not ctsgen's record of the files it wrote there {fix}")
    for name in CSV_FILES:
        path = out_dir / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise CsvOutputError(f"{path}: not a plain file ctsgen wrote, so it will not replace it {fix}")
        if path.exists() and _sha256(path) not in owned.get(name, ()):
            raise CsvOutputError(f"{path}: not written by ctsgen (or changed since), so it will not replace it "
                                 f"{fix}")


def _write_record(out_dir: Path, files: dict[str, list[str]]) -> None:
    _replace(out_dir / OWNED, json.dumps({"format": "ctsgen-owned", "files": files}, indent=1, sort_keys=True) + "\n")


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``."""
    tmp = write_beside(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_csvs(rows: list[Row], out_dir: Path) -> tuple[Path, Path]:
    """Write ``out_dir/results.csv`` and ``out_dir/failures.csv`` where ctsgen owns them
    (:func:`check_csv_dir`, checked again here); returns their paths. The record lists both the old
    and the new digest of each file while they are renamed in, so a run stopped half-way leaves
    files ctsgen still owns."""
    check_csv_dir(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = dict(zip(CSV_FILES, (format_results(rows), format_failures(rows))))
    new = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in texts.items()}
    old = {name: _sha256(out_dir / name) for name in CSV_FILES if (out_dir / name).is_file()}
    _write_record(out_dir, {name: sorted({new[name], *([old[name]] if name in old else [])}) for name in CSV_FILES})
    for name, text in texts.items():
        _replace(out_dir / name, text)
    _write_record(out_dir, {name: [new[name]] for name in CSV_FILES})
    return out_dir / CSV_FILES[0], out_dir / CSV_FILES[1]


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
