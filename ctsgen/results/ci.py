"""A run judged for CI, end to end: expectations in, deqp-runner's CSV files and an exit status out.

``ctsgen run`` calls :func:`judge_results_file` on the JSON-lines file it has just written and
writes the CSV files with :func:`write_ci_files`; ``ctsgen report RESULTS --baseline FILE`` calls
the same function on the same file afterwards, so both reach the same statuses and exit status.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from ctsgen.errors import UserError
from ctsgen.results.deqp_csv import CSV_FILES, REGEX_PREFIX, check_csv_dir, write_csvs
from ctsgen.results.expectations import DEVIATION_PREFIX, CiVerdict, Expectations, ExpectationsError, Outcome, \
    classify, judge_outcomes, read_outcomes
from ctsgen.results.results_file import explained_deviations
from ctsgen.results.status import DeqpStatus, deqp_status
from ctsgen.core.verdict import CaseResult
from ctsgen.results import results_file as rf


def unexpected_failure(result: CaseResult, exp: Expectations) -> bool:
    """Whether a verdict is a failure nothing in ``exp`` expects or excuses: what ``--flake-retries``
    re-runs (for a failing verdict, exactly when :func:`excused_by` is None)."""
    outcome = Outcome(result.name, result.status, explained_by=tuple(result.explained_by))
    return classify(outcome, exp).is_failing


def excused_by(result: CaseResult, exp: Expectations) -> str | None:
    """The expectation that lets a failing verdict pass (the baseline line: a name, ``re:REGEX`` or
    ``deviation:NAME``; or ``--flakes``); None where none does: what ``ctsgen fuzz --baseline`` counts
    per rule as it passes over a finding."""
    outcome = Outcome(result.name, result.status, explained_by=tuple(result.explained_by))
    status = classify(outcome, exp)
    if not status.is_success:
        return None
    if status is DeqpStatus.KnownFlake:
        return "--flakes"
    rule = exp.rule_for(result.name, deqp_status(result.status), outcome.explained_by)
    return rule[0] if rule else None


def absorbed_lines(exp: Expectations, passed_over: Counter, deviated: Counter) -> list[str]:
    """What ``ctsgen fuzz --baseline`` ends with: for each baseline rule (every one, 0 included) and
    anything else that excused a finding, how many it absorbed."""
    lines = [f"  {rule}: {n} failing example(s) passed over" for rule, n in sorted(passed_over.items())]
    lines += [f"  {rule}: {n} case(s) that fail by the spec pass under it" for rule, n in sorted(deviated.items())]
    named = set(passed_over) | {r for key in deviated for r in key.split("+")}
    lines += [f"  {rule}: 0" for rule in [DEVIATION_PREFIX + d for d in sorted(exp.deviations)]
              + [REGEX_PREFIX + p.pattern for p, _ in exp.patterns] if rule not in named]
    return ["absorbed by the expectations:"] + (lines or ["  nothing (the baseline holds no rule, and no finding "
                                                       "was passed over)"])


def csv_dir_for(results: Path) -> Path:
    """Where results.csv and failures.csv go by default: beside ``results``, named by its whole stem
    (PACK/results-B.jsonl -> PACK/results-B/; out/n.a.jsonl -> out/n.a/), so that each results file
    keeps its own pair under deqp-runner's file names."""
    _need_extension(results)
    return results.with_suffix("")


def _need_extension(results: Path) -> None:
    """A results path names a file with an extension (``.``, ``/`` and ``..`` name none)."""
    if not results.suffix or results.name in ("", ".", ".."):
        better = results / "results.jsonl" if results.name in ("", "..") else f"{results}.jsonl"
        raise UserError(f"--results {results}: a name without an extension (.jsonl), so its CSV folder would "
                        f"be the file itself -> name it {better}")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): the same path, spelled either way
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(results: Path, csv_dir: Path, inputs: dict[str, Sequence[str]]) -> None:
    """Before any case runs: refuse, in one line, an output this run could not write at its end or
    would write over a file that is not its own (:func:`~ctsgen.results.results_file.check_results_file`,
    :func:`~ctsgen.results.deqp_csv.check_csv_dir`), or over a file it reads (``inputs``: option ->
    paths). A baseline is never replaced by the run it feeds: failures.csv lists only the unexpected
    cases, so as the next baseline it would turn every expected failure into a new one (docs/ci.md)."""
    _need_extension(results)
    outputs = {"results file": results, "results file's .partial": rf.partial_path(results),
               "CTS-style text": rf.cts_path(results), "CSV folder": csv_dir,
               **{name: csv_dir / name for name in CSV_FILES}}
    for what, path in outputs.items():
        if what != "CSV folder" and _same_file(path, csv_dir):
            raise UserError(f"--csv-dir {csv_dir} is also the run's {what} -> choose another --csv-dir")
    for flag, paths in inputs.items():
        for given in paths:
            for what, path in outputs.items():
                if _same_file(Path(given), path):
                    raise UserError(f"{flag} {given} is also the {what} this run writes, which would replace it "
                                    "-> copy it to a file of its own (e.g. ci/expected-fails.csv) and pass that, "
                                    "or choose another --csv-dir/--results (docs/ci.md)")
    rf.check_results_file(results)
    rf.check_results_file(rf.partial_path(results))
    rf.check_cts_file(rf.cts_path(results))
    check_csv_dir(csv_dir)


def judge_results_file(results: Path, exp: Expectations, missing: Iterable[str] = ()) -> CiVerdict:
    """Every case of a ctsgen results file judged against ``exp`` (``missing``: listed, never run).

    A ``deviation:NAME`` rule needs to know which failures NAME explains, which only the run that
    had the outputs could tell (``explained_by``): a file whose run did not check NAME (its
    header's ``explain_deviation``) is refused rather than judged as if NAME explained nothing."""
    outcomes = read_outcomes(results)
    unchecked = sorted(set(exp.deviations) - set(explained_deviations(results)))
    if unchecked and outcomes:
        raise ExpectationsError(
            f"{results}: its run did not check {', '.join(DEVIATION_PREFIX + d for d in unchecked)}, so its records "
            "cannot say which failures that deviation explains -> judge it in the run itself (`ctsgen run ... "
            "--baseline FILE`), which records them")
    return judge_outcomes(outcomes, exp, missing, source=str(results))


def write_ci_files(verdict: CiVerdict, out_dir: Path) -> str:
    """Write results.csv and failures.csv into ``out_dir``; the line saying where they are."""
    results, failures = write_csvs(verdict.rows, out_dir)
    return f"deqp-runner files: {results} (every case), {failures} (unexpected only)"
