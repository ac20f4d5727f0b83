"""Which cases of a pack a run takes: --include, --exclude, --caselist, --skips and --fraction.

The selection deqp-runner offers a CTS run, on ctsgen's case names (``<variant id>.case_<hash>``,
docs/pack-format.md):

* ``--include REGEX`` (repeatable): only cases whose name one of them matches;
* ``--exclude REGEX`` (repeatable): not the cases one of them matches;
* ``--caselist FILE`` (repeatable): only the cases the files list, one name a line (``#``
  comments; a results.csv or failures.csv works: anything after a comma is ignored); a listed
  name the pack lacks is reported Missing, as deqp-runner reports a case that gave no result;
* ``--skips FILE``: as ``--exclude``, from a file (:mod:`ctsgen.results.expectations`);
* ``--fraction N`` with ``--fraction-start S`` (1-based): shard S of N. Cases are sharded by
  shader variant, not one in N as deqp-runner does, so that no two shards build the same
  pipeline (on a GPU the builds dominate a run, docs/validation.md); every variant lands in
  exactly one shard, dealt in the pack's order.

Regular expressions are searched (unanchored), as deqp-runner's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctsgen.core.argtypes import positive_int
from ctsgen.core.textlines import read_lines
from ctsgen.errors import UserError

if TYPE_CHECKING:
    from ctsgen.pack.read import PackCase


class SelectionError(UserError):
    """A selection option that cannot be used; the message says which and the fix."""


@dataclass
class Selection:
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    caselists: Sequence[str | Path] = ()
    fraction: int = 1
    fraction_start: int = 1
    #: more exclusions, e.g. :meth:`ctsgen.results.expectations.Expectations.is_skipped`
    skipped: Callable[[str], bool] = field(default=lambda name: False)


@dataclass
class Selected:
    cases: list[PackCase]
    missing: list[str]  # names a caselist gives that the pack lacks


def _regexes(option: str, texts: Sequence[str]) -> list[re.Pattern[str]]:
    out = []
    for t in texts:
        try:
            out.append(re.compile(t))
        except re.error as exc:
            raise SelectionError(f"{option} {t!r}: not a regular expression ({exc}) -> fix the pattern") from None
    return out


def read_caselist(path: str | Path) -> list[str]:
    """The case names of a caselist file (the first comma-separated field of each line)."""
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise SelectionError(f"--caselist {path}: cannot be read ({type(exc).__name__}) -> name a file of case "
                             "names, one a line (UTF-8 text)") from None
    return [ln.split(",", 1)[0].strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def select_cases(cases: Sequence[PackCase], sel: Selection) -> Selected:
    """The cases of ``cases`` (in their order) that ``sel`` takes, and the caselist names missing."""
    if not 1 <= sel.fraction_start <= sel.fraction:
        raise SelectionError(f"--fraction-start {sel.fraction_start} with --fraction {sel.fraction}: the shard "
                             f"must be 1..{sel.fraction} -> pick one of them")
    include, exclude = _regexes("--include", sel.include), _regexes("--exclude", sel.exclude)
    listed: list[str] | None = None
    if sel.caselists:
        listed = [name for path in sel.caselists for name in read_caselist(path)]
    wanted = set(listed) if listed is not None else None
    variants = list(dict.fromkeys(c.variant_id for c in cases))
    shard = {v for k, v in enumerate(variants) if k % sel.fraction == sel.fraction_start - 1}
    out = [c for c in cases
           if (wanted is None or c.name in wanted)
           and (not include or any(p.search(c.name) for p in include))
           and not any(p.search(c.name) for p in exclude)
           and not sel.skipped(c.name)
           and c.variant_id in shard]
    names = {c.name for c in cases}
    missing = [n for n in dict.fromkeys(listed or []) if n not in names]
    return Selected(out, missing)


def describe_selection(args: Any, total: int, picked: Selected) -> str:
    """Which options took which share of a pack's ``total`` cases (for a selection that took none)."""
    given = [f"--{o} {v}" for o, v in (("include", args.include), ("exclude", args.exclude)) for v in v or ()]
    given += [f"--caselist {c}" for c in args.caselist or ()] + [f"--skips {k}" for k in args.skips or ()]
    if args.fraction > 1:
        given.append(f"--fraction {args.fraction} --fraction-start {args.fraction_start}")
    missing = f"; {len(picked.missing)} listed name(s) are not in the pack" if picked.missing else ""
    return (f"{' '.join(given) or 'the pack'} selected {len(picked.cases)} of {total} case(s){missing}"
            if total else "the pack has no case")


#: ``add_argument`` keywords of the selection options (``ctsgen run``; the plugin's ``--ctsgen-*``).
ARGUMENTS: dict[str, dict[str, Any]] = {
    "include": dict(action="append", metavar="REGEX", default=[],
                    help="run only cases whose name matches (searched; repeatable)"),
    "exclude": dict(action="append", metavar="REGEX", default=[],
                    help="do not run cases whose name matches (searched; repeatable)"),
    "caselist": dict(action="append", metavar="FILE", default=[],
                     help="run only the cases listed, one name a line (a results.csv works); a listed case "
                          "the pack lacks is Missing (repeatable)"),
    "fraction": dict(type=positive_int, default=1, metavar="N",
                     help="shard the run N ways by shader variant, for N CI jobs (default: 1)"),
    "fraction-start": dict(type=positive_int, default=1, metavar="S",
                           help="with --fraction: run shard S, 1..N (default: 1)"),
}
