"""Expectation files, and a run's cases judged against them as deqp-runner judges a CTS run.

Three kinds of file, as Mesa keeps next to each driver (``*-fails.txt``, ``*-flakes.txt``,
``*-skips.txt``):

* ``--baseline FILE`` (repeatable): ``name,Status`` lines (:mod:`ctsgen.results.deqp_csv`; a
  failures.csv or results.csv is one as it is). ctsgen's case names are hashes of drawn
  parameters, so a fresh pack's names are new: a baseline line may name a **rule** instead of a
  case. ``re:REGEX,Status`` expects ``Status`` of every case whose name ``REGEX`` matches
  (searched, unanchored, as deqp-runner's flakes and skips); ``deviation:NAME,Status`` expects it
  of every case that fails by the spec and passes against its oracle under the documented
  deviation ``NAME`` (a mutant of ``ctsgen mutants``; ``ctsgen run`` records it in the case's
  ``explained_by``). A rule cannot say which of its cases fail, so a rule's case that passes or
  skips is a Pass or a Skip, never an UnexpectedImprovement; a case named exactly follows
  deqp-runner's rules (:func:`~ctsgen.results.status.with_baseline`).
* ``--flakes FILE``: regular expressions, one a line: a case whose name one matches and whose
  status is not a success is a KnownFlake (deqp-runner's name); one that worked on a re-run
  (``--flake-retries``) is a Flake.
* ``--skips FILE``: regular expressions: matching cases are not run (:mod:`ctsgen.runner.select`).

:func:`classify` is the one place a case's record becomes its CI status: ``ctsgen run`` applies
it to the records it has just written, ``ctsgen report --baseline`` to the same records read
back, so both give the same statuses and exit status. A run that judged no case is no pass
(:class:`NoCaseJudged`). Every file is read by :func:`ctsgen.core.textlines.read_lines` (a BOM and
CRLF line ends are dropped).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctsgen.errors import CtsgenError, UserError
from ctsgen.core.textlines import read_lines
from ctsgen.results.deqp_csv import REGEX_PREFIX, Row, read_rows
from ctsgen.results.status import RAN_BETTER, DeqpStatus, deqp_status, lets_pass, with_baseline
from ctsgen.core.verdict import Status

#: Unexpected cases and flakes the summary names; results.csv and failures.csv have them all.
MAX_LISTED = 50
#: A baseline line naming a rule, not a case (``re:`` is :data:`ctsgen.results.deqp_csv.REGEX_PREFIX`).
DEVIATION_PREFIX = "deviation:"


class ExpectationsError(UserError):
    """An expectation file cannot be used; the message names the file and line and the fix."""


class NoCaseJudged(UserError):
    """A run or a results file with no case to judge: never a pass (an empty selection, an empty pack,
    a results file without case records)."""


@dataclass
class Expectations:
    """What a run expects: exact names, rules, flakes and skips (see the module docstring)."""

    names: dict[str, DeqpStatus] = field(default_factory=dict)
    patterns: list[tuple[re.Pattern[str], DeqpStatus]] = field(default_factory=list)
    deviations: dict[str, DeqpStatus] = field(default_factory=dict)
    flakes: list[re.Pattern[str]] = field(default_factory=list)
    skips: list[re.Pattern[str]] = field(default_factory=list)
    #: ``--improvements-pass``: UnexpectedImprovement(Pass|Warn|Fail) do not fail a run (docs/ci.md)
    improvements_pass: bool = False

    def expected(self, name: str, status: DeqpStatus, explained_by: Iterable[str]) -> DeqpStatus | None:
        """The status the files expect of case ``name`` that gave ``status``; None: nothing expected."""
        found = self.rule_for(name, status, explained_by)
        return found[1] if found else None

    def rule_for(self, name: str, status: DeqpStatus, explained_by: Iterable[str]
                 ) -> tuple[str, DeqpStatus] | None:
        """The baseline line that speaks for case ``name`` (the name itself, ``deviation:NAME`` or
        ``re:REGEX``) and the status it lists; None: no line does."""
        if name in self.names:
            return name, self.names[name]
        if not status.is_failing:  # a rule says nothing about a case that works
            return None
        for dev in explained_by:
            if dev in self.deviations:
                return DEVIATION_PREFIX + dev, self.deviations[dev]
        for pattern, expected in self.patterns:
            if pattern.search(name):
                return REGEX_PREFIX + pattern.pattern, expected
        return None

    def is_flake(self, name: str) -> bool:
        return any(p.search(name) for p in self.flakes)

    def is_skipped(self, name: str) -> bool:
        return any(p.search(name) for p in self.skips)


def _compile(path: Path, n: int, text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise ExpectationsError(f"{path}:{n}: {text[:60]!r} is not a regular expression ({exc}) -> fix or "
                                "remove the line") from None


def read_regexes(path: Path) -> list[re.Pattern[str]]:
    """The regular expressions of a flakes or skips file (one a line; ``#`` comments, blank lines)."""
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ExpectationsError(f"{path}: cannot be read ({type(exc).__name__}) -> name a file of regular "
                                "expressions, one a line (UTF-8 text)") from None
    return [_compile(path, n, ln.strip()) for n, ln in enumerate(lines, 1)
            if ln.strip() and not ln.strip().startswith("#")]


def load_expectations(baselines: Iterable[str | Path] = (), flakes: Iterable[str | Path] = (),
                      skips: Iterable[str | Path] = (), improvements_pass: bool = False) -> Expectations:
    """Read every expectation file; a case or rule listed in two baselines takes the later one."""
    from ctsgen.mutants.deviations import check_deviations  # local: startup (the families: only with a deviation rule)

    baselines = list(baselines)
    if improvements_pass and not baselines:
        raise ExpectationsError("--improvements-pass without --baseline does nothing (only a baseline lists "
                                "failures a case can improve on) -> add --baseline FILE, or drop it")
    exp = Expectations(improvements_pass=improvements_pass)
    for path in baselines:
        for n, name, status in read_rows(Path(path)):
            if name.startswith(REGEX_PREFIX):
                if not name[len(REGEX_PREFIX):]:
                    raise ExpectationsError(f"{path}:{n}: 're:' with an empty regex would expect {status.value} of "
                                            "every case -> write the regex (or '.' to mean every case)")
                exp.patterns.append((_compile(Path(path), n, name[len(REGEX_PREFIX):]), status))
            elif name.startswith(DEVIATION_PREFIX):
                dev = name[len(DEVIATION_PREFIX):]
                try:
                    check_deviations([dev])
                except CtsgenError as exc:
                    raise ExpectationsError(f"{path}:{n}: {exc}") from None
                exp.deviations[dev] = status
            else:
                exp.names[name] = status
    for path in flakes:
        exp.flakes += read_regexes(Path(path))
    for path in skips:
        exp.skips += read_regexes(Path(path))
    return exp


@dataclass(frozen=True)
class Outcome:
    """What a results-file record says about one case: its first verdict, the verdicts of its
    re-runs (``--flake-retries``), the deviations that explain its outputs, and its duration."""

    name: str
    status: Status
    reruns: tuple[Status, ...] = ()
    explained_by: tuple[str, ...] = ()
    duration_s: float = 0.0

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Outcome:
        """From a record of a ctsgen results file (``CaseResult.to_json()``)."""
        if not isinstance(rec["name"], str):
            raise TypeError(f"its name {rec['name']!r} is no string")
        return cls(rec["name"], Status(rec["status"]), tuple(Status(s) for s in rec.get("reruns", ())),
                   tuple(rec.get("explained_by", ())), float(rec.get("duration_s") or 0.0))


def classify(outcome: Outcome, exp: Expectations) -> DeqpStatus:
    """The CI status of one case: its verdict as deqp-runner's judged against the baseline; where that
    is no success, a Flake if a re-run worked, else a KnownFlake if a flakes regex matches."""
    status = deqp_status(outcome.status)
    judged = with_baseline(status, exp.expected(outcome.name, status, outcome.explained_by))
    if judged.is_success:
        return judged
    if any(not deqp_status(s).is_failing for s in outcome.reruns):
        return DeqpStatus.Flake
    return DeqpStatus.KnownFlake if exp.is_flake(outcome.name) else judged


def read_outcomes(path: Path) -> list[Outcome]:
    """The case records of a ctsgen JSON-lines results file (the last record of a name wins; lines
    that are not case records, such as a header, are skipped). A run puts its results file in place
    whole, so a torn line (a copy cut short) and an interrupted run's ``.partial`` are refused: judged,
    they would pass on the cases they happen to hold."""
    if path.name.endswith(".partial"):
        raise ExpectationsError(f"{path}: an interrupted run's cases so far, not a run's results -> finish it with "
                                "`ctsgen run ... --resume` and judge the results file that run puts in place")
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ExpectationsError(f"{path}: cannot be read as a ctsgen results file ({type(exc).__name__}) -> "
                                "name the .jsonl file `ctsgen run` wrote") from None
    out: dict[str, Outcome] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            if not any(ln.strip() for i, ln in enumerate(lines, 1) if i != n):  # its one line: judged no case
                continue
            raise ExpectationsError(f"{path}:{n}: not a ctsgen result record ({exc}) -> name the .jsonl "
                                    "file `ctsgen run` wrote, whole") from None
        if isinstance(rec, dict) and "name" in rec and "status" in rec:
            try:
                out[rec["name"]] = Outcome.from_record(rec)
            except (ValueError, TypeError) as exc:  # whole JSON, so not torn: a record no run wrote
                raise ExpectationsError(f"{path}:{n}: not a ctsgen result record ({exc}) -> name the .jsonl "
                                        "file `ctsgen run` wrote") from None
    return list(out.values())


#: deqp-runner's summary order (``ResultCounts``' Display); ValidationError is ctsgen's own
SUMMARY_ORDER = ("Pass", "Fail", "Crash", "UnexpectedImprovement", "ExpectedFail", "Warn", "Skip", "Timeout",
                 "Missing", "Flake", "ValidationError")


@dataclass
class CiVerdict:
    """A run judged against its expectations: each case's row for the CSV files, and the counts."""

    rows: list[Row]
    #: ``--improvements-pass`` (:attr:`Expectations.improvements_pass`)
    improvements_pass: bool = False

    @property
    def counts(self) -> Counter:
        return Counter(r.status.value for r in self.rows)

    @property
    def ok(self) -> bool:
        return all(lets_pass(r.status, self.improvements_pass) for r in self.rows)

    def lines(self) -> list[str]:
        """The summary ``ctsgen run`` and ``ctsgen report --baseline`` print: counts in deqp-runner's
        order (its one UnexpectedImprovement and one Flake count), the cases that are no success, and
        a line when the baseline can shrink."""
        grouped = Counter("UnexpectedImprovement" if r.status.is_improvement else
                          "Flake" if r.status is DeqpStatus.KnownFlake else r.status.value for r in self.rows)
        out = ["ci: " + ", ".join(f"{s}: {grouped[s]}" for s in SUMMARY_ORDER if grouped[s] or s == "Pass")]
        listed = [f"  {r.status.value}: {r.name}" for r in sorted(self.rows, key=lambda r: r.name)
                  if not r.status.is_success or r.status in (DeqpStatus.Flake, DeqpStatus.KnownFlake)]
        out += listed[:MAX_LISTED] + ([f"  ... and {len(listed) - MAX_LISTED} more (results.csv has every case)"]
                                      if len(listed) > MAX_LISTED else [])
        better = sum(n for s, n in self.counts.items() if DeqpStatus(s) in RAN_BETTER)
        if better:
            out.append(f"ci: {better} case(s) listed in the baseline as failing did better (UnexpectedImprovement): "
                       "the baseline can shrink (failures.csv lists them)"
                       + ("; --improvements-pass lets them pass" if self.improvements_pass else ""))
        out.append("ci: " + ("pass: every failure is expected" if self.ok else
                             "FAIL: unexpected results (failures.csv lists them; it doubles as a --baseline)"))
        return out


def judge_outcomes(outcomes: Iterable[Outcome], exp: Expectations, missing: Iterable[str] = (),
                   source: str = "the run") -> CiVerdict:
    """Every case's CI row; ``missing``: cases a caselist named that the run has no result for
    (deqp-runner never judges a Missing against a baseline). No case at all: :class:`NoCaseJudged`."""
    rows = [Row(o.name, classify(o, exp), o.duration_s) for o in outcomes]
    rows += [Row(name, DeqpStatus.Missing) for name in missing]
    if not rows:
        raise NoCaseJudged(f"judged no case: {source} has no case record, so it passes nothing -> name the "
                           "results file of a run that ran cases")
    return CiVerdict(rows, exp.improvements_pass)
