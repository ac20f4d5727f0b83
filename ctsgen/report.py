"""Results files a CTS user can diff, and the comparison of two runs.

``ctsgen run`` writes two results files: the JSON-lines file (one object per
case, with the mismatches) and, next to it with the suffix ``.txt`` (``.cts.txt`` when the
JSON-lines file itself ends in ``.txt``), the
CTS-style summary in the spirit of VK-GL-CTS's ``TestResults.qpa`` -> CSV
summaries (``testlog-to-csv``): one line per case, sorted by name,

    # ctsgen results: pack PACK, backend BACKEND
    name,status,detail

in CSV (RFC 4180 quoting: a detail with a comma or quote is quoted),
``status`` one of the CTS's result codes (Pass, Fail, NotSupported,
QualityWarning, Timeout, DeviceLost, Crash). Lines starting with ``#`` are
comments. Two such files diff line by line.

``ctsgen report A B`` reads either format and lists regressions (a case
that did not fail in A and fails in B: Pass -> Fail, NotSupported ->
Timeout, ...), fixes (the reverse), other status changes (e.g. Pass ->
NotSupported), and cases new in B or removed from A.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from ctsgen.errors import CtsgenError
from ctsgen.runner.verdict import Status


class ResultsError(CtsgenError, ValueError):
    """A results file cannot be read; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Verdict:
    status: Status
    detail: str = ""


def read_results(path: str | Path) -> dict[str, Verdict]:
    """name -> verdict from a JSON-lines or CTS-style text results file (the last line of a name wins)."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such results file -> name a file `ctsgen run PACK` wrote (PACK/results-BACKEND.jsonl or .txt)") \
            from None
    except IsADirectoryError:
        raise ResultsError(f"{path}: a directory, not a results file -> name a file `ctsgen run PACK` wrote "
                           "(PACK/results-BACKEND.jsonl or .txt)") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not a ctsgen results file (not UTF-8 text) -> name a file `ctsgen run` "
                           "wrote") from None
    body = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    out: dict[str, Verdict] = {}
    if body and body[0][1].lstrip().startswith("{"):
        for n, line in body:
            try:
                rec = json.loads(line)
                out[rec["name"]] = Verdict(Status(rec["status"]), rec.get("detail", ""))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ResultsError(f"{path}:{n}: not a ctsgen result record ({exc}) -> name a results file written by `ctsgen run`") from None
        return out
    for n, line in body:
        row = next(csv.reader([line]))
        if len(row) < 2:
            raise ResultsError(f"{path}:{n}: expected 'name,status,detail', got {line[:60]!r} -> name a results file written by `ctsgen run`")
        try:
            out[row[0]] = Verdict(Status(row[1]), row[2] if len(row) > 2 else "")
        except ValueError:
            raise ResultsError(f"{path}:{n}: unknown status {row[1][:40]!r} -> a status is one of "
                               f"{', '.join(s.value for s in Status)}") from None
    return out


def format_cts(results: dict[str, Verdict], header: str = "") -> str:
    """The CTS-style text (see the module docstring), sorted by case name."""
    buf = io.StringIO()
    if header:
        buf.write(f"# {header}\n")
    w = csv.writer(buf, lineterminator="\n")
    for name in sorted(results):
        v = results[name]
        w.writerow([name, v.status.value, " ".join(v.detail.split())])
    return buf.getvalue()


def write_cts_results(jsonl: Path, out: Path, header: str = "") -> None:
    """Write the CTS-style text of the JSON-lines results file ``jsonl`` to ``out``."""
    out.write_text(format_cts(read_results(jsonl), header))


@dataclass
class Comparison:
    regressions: list[tuple[str, Verdict, Verdict]] = field(default_factory=list)
    fixes: list[tuple[str, Verdict, Verdict]] = field(default_factory=list)
    changed: list[tuple[str, Verdict, Verdict]] = field(default_factory=list)
    new: list[tuple[str, Verdict]] = field(default_factory=list)
    removed: list[tuple[str, Verdict]] = field(default_factory=list)
    unchanged: int = 0


def compare(a: dict[str, Verdict], b: dict[str, Verdict]) -> Comparison:
    """How run ``b`` differs from run ``a`` (regression: not failing in a, failing in b)."""
    c = Comparison()
    for name in sorted(a.keys() | b.keys()):
        if name not in b:
            c.removed.append((name, a[name]))
        elif name not in a:
            c.new.append((name, b[name]))
        elif a[name].status is b[name].status:
            c.unchanged += 1
        elif b[name].status.is_failure and not a[name].status.is_failure:
            c.regressions.append((name, a[name], b[name]))
        elif a[name].status.is_failure and not b[name].status.is_failure:
            c.fixes.append((name, a[name], b[name]))
        else:
            c.changed.append((name, a[name], b[name]))
    return c


def format_comparison(c: Comparison, a: str, b: str) -> str:
    lines = [f"{a} -> {b}: {len(c.regressions)} regressions, {len(c.fixes)} fixes, {len(c.changed)} other "
             f"changes, {len(c.new)} new, {len(c.removed)} removed, {c.unchanged} unchanged"]
    for title, rows in (("regressions", c.regressions), ("fixes", c.fixes), ("other changes", c.changed)):
        if rows:
            lines.append(f"{title}:")
            lines += [f"  {name}: {old.status.value} -> {new.status.value}" + (f"  ({new.detail})" if new.detail
                                                                               else "")
                      for name, old, new in rows]
    for title, items in (("new", c.new), ("removed", c.removed)):
        if items:
            lines.append(f"{title}:")
            lines += [f"  {name}: {v.status.value}" for name, v in items]
    return "\n".join(lines)
