"""A run judged for CI, end to end: expectations in, deqp-runner's CSV files and an exit status out.

``ctsgen run`` calls :func:`judge_results_file` on the JSON-lines file it has just written and
writes the CSV files with :func:`write_ci_files`; ``ctsgen report RESULTS --baseline FILE`` calls
the same function on the same file afterwards, so both reach the same statuses and exit status.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from ctsgen.results.deqp_csv import write_csvs
from ctsgen.results.expectations import CiVerdict, Expectations, Outcome, classify, judge_outcomes, \
    load_expectations, read_outcomes
from ctsgen.core.verdict import CaseResult


def expectations_of(args: argparse.Namespace) -> Expectations:
    """The expectations the ``--baseline/--flakes/--skips`` options name (none given: none expected)."""
    return load_expectations(args.baseline or (), args.flakes or (), getattr(args, "skips", None) or ())


def unexpected_failure(result: CaseResult, exp: Expectations) -> bool:
    """Whether a verdict is a failure nothing in ``exp`` expects or excuses: what ``--flake-retries``
    re-runs, and what ``ctsgen fuzz --baseline`` does not pass over."""
    outcome = Outcome(result.name, result.status, explained_by=tuple(result.explained_by))
    return classify(outcome, exp).is_failing


def csv_dir_for(results: Path) -> Path:
    """Where results.csv and failures.csv go by default: beside ``results`` (PACK/results-B.jsonl ->
    PACK/results-B/), so that each backend's run keeps its own pair under deqp-runner's file names."""
    return results.with_name(results.name.split(".")[0])


def judge_results_file(results: Path, exp: Expectations, missing: Iterable[str] = ()) -> CiVerdict:
    """Every case of a ctsgen results file judged against ``exp`` (``missing``: listed, never run)."""
    return judge_outcomes(read_outcomes(results), exp, missing)


def write_ci_files(verdict: CiVerdict, out_dir: Path) -> str:
    """Write results.csv and failures.csv into ``out_dir``; the line saying where they are."""
    results, failures = write_csvs(verdict.rows, out_dir)
    return f"deqp-runner files: {results} (every case), {failures} (unexpected only)"
