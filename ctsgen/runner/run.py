"""Running a pack on a backend: one dispatch per batch of cases of a variant.

Results are appended to a JSON-lines file as each batch completes, so an
interrupted run keeps what it finished and ``--resume`` skips it. Each batch
runs through :func:`ctsgen.execute.run.run_cases`, the dispatch-and-judge step
every path shares; a batch that hangs, loses the device or kills the worker
is bisected until the culprit is alone (:mod:`ctsgen.execute.bisect`). A
failing case's result names the first differing elements with what the
family says about them (for tensor layouts: the (row, col) and the tensor
coordinates the oracle used).
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ctsgen.backends.base import Backend, as_backend
from ctsgen.errors import BackendError, DispatchTimeout
from ctsgen.core.shader import ShaderVariant
from ctsgen.mutants.deviations import check_deviations, expected_under, reaching
from ctsgen.execute.batch import ALIGN_BYTES
from ctsgen.execute.bisect import Bisection
from ctsgen.execute.run import CaseInput, Dispatched, judged, run_cases
from ctsgen.families import get_family
from ctsgen.core.family import CaseData, case_locator
from ctsgen.pack.read import Pack, PackCase
from ctsgen.runner.model_verdict import model_verdict
from ctsgen.runner.options import RunOptions
from ctsgen.core.verdict import CaseResult, Locator, Status
from ctsgen.timing import Breakdown

#: Where ``run_pack`` reports each case's verdict as it is reached (a results file,
#: the pytest plugin's verdict cache, ...).
ResultSink = Callable[[CaseResult], None]


@dataclass
class RunSummary:
    counts: Counter = field(default_factory=Counter)
    wall_s: float = 0.0
    failures: list[CaseResult] = field(default_factory=list)
    dispatches: int = 0
    bisection_dispatches: int = 0
    hang_detect_s: list[float] = field(default_factory=list)
    resumed: int = 0  # cases whose verdict came from the results file of an earlier run
    times: Breakdown = field(default_factory=Breakdown)  # where the time went, per stage

    @property
    def ok(self) -> bool:
        return not any(Status(s).is_failure for s in self.counts)


def _case_bytes(case: PackCase) -> list[int]:
    """Bytes each buffer of ``case`` needs (its element counts, without reading the data)."""
    return [count * np.dtype(spec.dtype).itemsize for spec, count in zip(case.buffers, case.element_counts())]


def _oversized(case: PackCase, limit: int | None) -> str | None:
    """Why ``case`` cannot run on a device whose storage buffers hold ``limit`` bytes, if so."""
    if not limit:
        return None
    for spec, size in zip(case.buffers, _case_bytes(case)):
        if size > limit:
            return f"buffer '{spec.name}' needs {size} bytes > maxStorageBufferRange {limit}"
    return None


def _chunks(items: list[PackCase], size: int, limit: int | None = None) -> Iterator[list[PackCase]]:
    """Batches of at most ``size`` cases whose buffers each stay within ``limit`` bytes."""
    batch: list[PackCase] = []
    totals: list[int] = []
    for case in items:
        need = [b + ALIGN_BYTES for b in _case_bytes(case)] if limit else []
        if batch and (len(batch) == size or (limit and any(t + n > limit for t, n in zip(totals, need)))):
            yield batch
            batch, totals = [], []
        batch.append(case)
        totals = [t + n for t, n in zip(totals, need)] if totals else need
    if batch:
        yield batch


def pack_locator(case: PackCase) -> Locator:
    """What the family says about (buffer, element) of a pack's ``case``; the family's case
    model is rebuilt from the record only when asked (a failing case), once."""
    @functools.cache
    def family_locator() -> Locator:
        return case_locator(get_family(case.record["family"]).case_from_json(case.record["parameters"]))

    return lambda buffer, element: family_locator()(buffer, element)


Arrays = tuple[list[np.ndarray], list[np.ndarray | None], list[np.ndarray | None] | None]


def deviated_arrays(case: PackCase, arrays: Arrays, deviations: tuple[str, ...]) -> Arrays:
    """A pack case's (initial, expected, tolerances) with the expected buffers (and tolerances,
    where the family recomputes them) given by its family's oracle on the pack's own inputs under
    the documented ``deviations`` (ctsgen.mutants.deviations: those its variant can show, :func:`reaching`)."""
    fam = get_family(case.record["family"])
    data = expected_under(fam, fam.case_from_json(case.record["parameters"]),
                          CaseData(case.params, *arrays), deviations)
    return data.initial, data.expected, data.tolerance


def explaining(case: PackCase, arrays: Arrays, outputs: list[np.ndarray], deviations: tuple[str, ...]) -> list[str]:
    """Those of ``deviations`` under whose oracle a failing ``case``'s ``outputs`` pass (a baseline's
    ``deviation:NAME`` rules, ctsgen.results.expectations)."""
    out = []
    for name in deviations:
        deviated = pack_input(case, deviated_arrays(case, arrays, (name,)))
        if not judged(deviated, [b.name for b in case.buffers], outputs).status.is_failure:
            out.append(name)
    return out


def pack_input(case: PackCase, arrays: Arrays) -> CaseInput:
    """A pack's ``case`` with its (initial, expected, tolerances) as a dispatch and its judge take it."""
    return CaseInput(case.name, case.params, arrays[0], arrays[1], arrays[2], case.record["compare"],
                     pack_locator(case))


class _VariantRun:
    """Runs the cases of one variant through :func:`run_cases`, bisecting dispatches that fail as a whole."""

    def __init__(self, backend: Backend, variant: ShaderVariant, options: RunOptions, summary: RunSummary,
                 record: Callable[[CaseResult], None]) -> None:
        self.backend, self.variant, self.options = backend, variant, options
        self.summary = summary
        self.deviations = reaching(options.expect_deviations, variant)  # what its module can show
        self.explain = reaching(options.explain_deviations, variant)
        self.bisection = Bisection(self.dispatch, lambda c: c.name, record)

    def run(self, group: list[PackCase]) -> None:
        steps = self.bisection.steps
        self.bisection.run(group)
        self.summary.bisection_dispatches += self.bisection.steps - steps

    def dispatch(self, group: list[PackCase]) -> Dispatched:
        times = self.summary.times
        with times.stage("data+oracle"):  # a pack's data and expected values, read from its files
            arrays = [(*c.arrays(), c.tolerances()) for c in group]
            if self.deviations:  # the same inputs, the expectation under the deviations
                arrays = [deviated_arrays(c, a, self.deviations) for c, a in zip(group, arrays)]
        self.summary.dispatches += 1

        def review(i: int, r: CaseResult, outputs: list[np.ndarray]) -> CaseResult:
            c = group[i]
            if self.options.numerics:  # the device-model verdict after the spec one (--numerics)
                r = model_verdict(r, c.record["family"], c.record["parameters"], [b.name for b in c.buffers],
                                  outputs, self.options.numerics)
            if r.status is Status.Fail and self.explain:  # which baseline deviations explain it
                r.explained_by = explaining(c, arrays[i], outputs, self.explain)
            return r

        done = run_cases(self.backend, self.variant, [pack_input(c, a) for c, a in zip(group, arrays)],
                         self.options.timeout_for(len(group)), times, review)
        if isinstance(done.error, DispatchTimeout):  # the wait itself, without replacing a dead worker
            waited = done.error.waited_s
            self.summary.hang_detect_s.append(done.elapsed_s if waited is None else waited)
        if done.error is None:
            for r in done.results:
                r.duration_s = done.elapsed_s / len(group)
        return done


def run_pack(pack: Pack, backend: Backend, sink: ResultSink | None = None, options: RunOptions = RunOptions(),
             done_before: dict[str, Status] | None = None,
             progress: Callable[[int, int, Counter], None] | None = None) -> RunSummary:
    """Run every case of ``pack`` not in ``done_before`` (verdicts of an earlier,
    resumed run, which count toward the summary); report each case run to ``sink``
    as its verdict is reached (e.g. :class:`ctsgen.results.results_file.JsonLinesSink`)."""
    start = time.monotonic()
    check_deviations(options.expect_deviations)  # an unknown name: one line before any dispatch
    backend = as_backend(backend)
    summary = RunSummary()
    skip = {}
    for c in pack.cases:
        if done_before and c.name in done_before:
            skip[c.name] = done_before[c.name]
            summary.counts[done_before[c.name].value] += 1
    profile = backend.profile()
    by_variant: dict[str, list[PackCase]] = {}
    for c in pack.cases:
        if c.name not in skip:
            by_variant.setdefault(c.variant_id, []).append(c)
    total = sum(len(v) for v in by_variant.values())
    done = 0

    def record(r: CaseResult) -> None:
        nonlocal done
        summary.counts[r.status.value] += 1
        if r.status.is_failure:
            summary.failures.append(r)
        if sink is not None:
            sink(r)
        done += 1

    supported = {vid: pack.variants[vid].requirements for vid in by_variant}
    reasons = {vid: profile.unsupported_reason(req) for vid, req in supported.items()}
    try:  # build every pipeline up front, in parallel, where the backend can
        with summary.times.stage("pipeline"):
            backend.prepare([pack.variants[vid] for vid in by_variant if not reasons[vid]])
    except BackendError:
        pass  # each variant's own dispatch will say what is wrong with it
    limit = profile.properties.get("maxStorageBufferRange")
    for vid, cases in by_variant.items():
        if reasons[vid]:
            for c in cases:
                record(CaseResult(c.name, Status.NotSupported, reasons[vid]))
            continue
        fitting = []
        for c in cases:
            too_big = _oversized(c, limit)
            if too_big:
                record(CaseResult(c.name, Status.NotSupported, too_big))
            else:
                fitting.append(c)
        runner = _VariantRun(backend, pack.variants[vid], options, summary, record)
        for chunk in _chunks(fitting, options.batch_size, limit):
            runner.run(chunk)
        if progress:
            progress(done, total, summary.counts)
    summary.wall_s = time.monotonic() - start
    summary.resumed = len(skip)
    return summary
