"""``--flake-retries N``: run a pack, then re-run its failing cases up to N times.

deqp-runner re-runs the tests that failed to tell a flaky test from a broken one; so does this.
Cases whose first verdict is a failure the caller wants confirmed (``retry``: by default every
failure; ``ctsgen run`` leaves out the failures its baseline expects) are held back from the
sink, re-run as a pack of their own (batched and bisected as any run) until each has worked once
or ``retries`` rounds are spent, and then reported with their re-runs' verdicts in
``CaseResult.reruns``. The first verdict stays the case's status; a failure that worked on a
re-run is a Flake to :func:`ctsgen.results.expectations.classify`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ctsgen.backends.base import Backend
from ctsgen.pack.read import Pack
from ctsgen.runner.options import RunOptions
from ctsgen.runner.run import ResultSink, RunSummary, run_pack
from ctsgen.core.verdict import CaseResult, Status


def run_with_retries(pack: Pack, backend: Backend, sink: ResultSink, options: RunOptions, retries: int,
                     retry: Callable[[CaseResult], bool] = lambda r: r.status.is_failure,
                     done_before: dict[str, Status] | None = None,
                     progress: Callable | None = None) -> RunSummary:
    """:func:`~ctsgen.runner.run.run_pack`, with the failures ``retry`` picks re-run up to ``retries``
    times (see the module docstring). Held cases reach ``sink`` even when the re-runs are interrupted."""
    held: dict[str, CaseResult] = {}

    def first(result: CaseResult) -> None:
        if retries and retry(result):
            held[result.name] = result
        else:
            sink(result)

    try:
        summary = run_pack(pack, backend, first, options, done_before=done_before, progress=progress)
        for _ in range(retries):
            pending = {n for n, r in held.items() if all(s.is_failure for s in r.reruns)}
            if not pending:
                break
            again: dict[str, CaseResult] = {}
            sub = dataclasses.replace(pack, cases=[c for c in pack.cases if c.name in pending])
            rerun = run_pack(sub, backend, lambda r: again.__setitem__(r.name, r), options)
            summary.dispatches += rerun.dispatches
            summary.bisection_dispatches += rerun.bisection_dispatches
            for name, r in again.items():
                held[name].reruns.append(r.status)
    finally:
        for r in held.values():
            sink(r)
    return summary
