"""Results files a CTS user can diff, and the comparison of two runs.

``ctsgen run`` writes two results files: the JSON-lines file (one object per
case, with the mismatches) and, next to it with the suffix ``.txt`` (``.cts.txt`` when the
JSON-lines file itself ends in ``.txt``), the
CTS-style summary in the spirit of VK-GL-CTS's ``TestResults.qpa`` -> CSV
summaries (``testlog-to-csv``): one line per case, sorted by name,

    # ctsgen results: pack PACK, backend BACKEND
    # header {"format": "ctsgen-results", ...}
    name,status,detail

in CSV (RFC 4180 quoting: a detail with a comma or quote is quoted),
``status`` one of the CTS's result codes (Pass, Fail, NotSupported,
QualityWarning, Timeout, DeviceLost, Crash). Lines starting with ``#`` are
comments. Two such files diff line by line.

The second line is the JSON-lines file's header (docs/pack-format.md, "Results";
:mod:`ctsgen.results.results_file` owns both formats).

``ctsgen report A B`` reads either format, shows what each file judged (its header), and
lists regressions (a case that did not fail in A and fails in B: Pass -> Fail,
NotSupported -> Timeout, ...; a failing case A does not have at all is one too), fixes
(the reverse), other status changes (e.g. Pass -> NotSupported), and cases new in B or
removed from A. Files that judged different packs (their headers' manifest hashes differ,
or, without headers, no case in common) and files without a case are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ctsgen.results.results_file import Results, ResultsError, Verdict, describe_header, load_results, pack_of


@dataclass
class Comparison:
    regressions: list[tuple[str, Verdict | None, Verdict]] = field(default_factory=list)  # None: not in A
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
            if b[name].status.is_failure:  # failing, and not known to fail before
                c.regressions.append((name, None, b[name]))
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
            lines += [f"  {name}: {old.status.value if old else '(not in A)'} -> "
                      f"{new.status.value}" + (f"  ({new.detail})" if new.detail else "")
                      for name, old, new in rows]
    for title, items in (("new", c.new), ("removed", c.removed)):
        if items:
            lines.append(f"{title}:")
            lines += [f"  {name}: {v.status.value}" for name, v in items]
    return "\n".join(lines)


def comparable(a: Results, b: Results, path_a: str | Path, path_b: str | Path) -> None:
    """Refuse two results files that cannot be compared: one without a case, or two that judged
    different packs."""
    for path, r in ((path_a, a), (path_b, b)):
        if not r.verdicts:
            raise ResultsError(f"{path}: holds no case verdict -> name a results file of a run that ran cases")
    if pack_of(a.header) is not None and pack_of(b.header) is not None:
        if pack_of(a.header) != pack_of(b.header):
            raise ResultsError(f"{path_a} and {path_b} judged different packs (manifest {pack_of(a.header)[:12]} "
                               f"and {pack_of(b.header)[:12]}) -> compare two runs of the same pack")
    elif not a.verdicts.keys() & b.verdicts.keys():
        raise ResultsError(f"{path_a} and {path_b} have no case in common, so they judged different packs -> "
                           "compare two runs of the same pack")


def report(path_a: str | Path, path_b: str | Path) -> tuple[Comparison, str]:
    """``ctsgen report A B``: the comparison and its text, headed by what each file judged."""
    a, b = load_results(path_a), load_results(path_b)
    comparable(a, b, path_a, path_b)
    c = compare(a.verdicts, b.verdicts)
    heads = [f"A {path_a}: {describe_header(a.header)}", f"B {path_b}: {describe_header(b.header)}"]
    return c, "\n".join(heads + [format_comparison(c, str(path_a), str(path_b))])
