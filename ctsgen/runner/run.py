"""Running a pack on a backend: one dispatch per batch of cases of a variant.

Results are appended to a JSON-lines file as each batch completes, so an
interrupted run keeps what it finished and ``--resume`` skips it. A batch
that hangs, loses the device or kills the worker is bisected until the
culprit is alone: each step runs one half, so a single culprit in a batch
of n is isolated in ceil(log2(n)) dispatches plus one that confirms it
alone; the other halves are then run as ordinary batches. After
MAX_CULPRITS_PER_VARIANT culprits in one variant, its remaining failing
batches are recorded whole (the failure is then variant-wide). A failing
case's result names the first differing elements with what the family
says about them (for tensor layouts: the (row, col) and the tensor
coordinates the oracle used).
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ctsgen.backends.base import Backend, as_backend, validation_messages
from ctsgen.errors import BackendError, DispatchTimeout
from ctsgen.core.shader import ShaderVariant
from ctsgen.mutants.deviations import check_deviations, expected_under, reaching
from ctsgen.families import get_family
from ctsgen.core.family import CaseData, case_locator
from ctsgen.pack.read import Pack, PackCase
from ctsgen.runner.batch import ALIGN_BYTES, build_batch, case_outputs
from ctsgen.runner.model_verdict import model_verdict
from ctsgen.runner.options import RunOptions
from ctsgen.core.verdict import CaseResult, Locator, Status, describe, judge, output_buffers, status_of
from ctsgen.runner.contract import check_outputs
from ctsgen.timing import Breakdown

#: Culprits isolated per variant before the rest of its failing batches are
#: recorded as they are: beyond that the failure looks variant-wide (a
#: pipeline that cannot be built), and bisecting every case would cost O(n).
MAX_CULPRITS_PER_VARIANT = 4

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
        _, expected, tolerances = deviated_arrays(case, arrays, (name,))
        if not judge_pack_case(case, outputs, expected, tolerances).status.is_failure:
            out.append(name)
    return out


def judge_pack_case(case: PackCase, outputs: list[np.ndarray], expected: list[np.ndarray | None],
                    tolerances: list[np.ndarray | None] | None) -> CaseResult:
    """:func:`~ctsgen.core.verdict.judge` for a case read from a pack."""
    return judge(case.name, output_buffers([b.name for b in case.buffers], outputs, expected, tolerances),
                 case.record["compare"], pack_locator(case))


class _VariantRun:
    """Runs the cases of one variant, bisecting dispatches that fail as a whole."""

    def __init__(self, backend: Backend, variant: ShaderVariant, options: RunOptions, summary: RunSummary,
                 record: Callable[[CaseResult], None]) -> None:
        self.backend, self.variant, self.options = backend, variant, options
        self.summary, self.record = summary, record
        self.culprits = 0
        self.deviations = reaching(options.expect_deviations, variant)  # what its module can show
        self.explain = reaching(options.explain_deviations, variant)

    def dispatch(self, group: list[PackCase]) -> tuple[list[CaseResult] | None, BackendError | None]:
        times = self.summary.times
        with times.stage("data+oracle"):  # a pack's data and expected values, read from its files
            arrays = [(*c.arrays(), c.tolerances()) for c in group]
            if self.deviations:  # the same inputs, the expectation under the deviations
                arrays = [deviated_arrays(c, a, self.deviations) for c, a in zip(group, arrays)]
            batch = build_batch(self.variant, [c.params for c in group], [a[0] for a in arrays])
        self.summary.dispatches += 1
        start = time.monotonic()
        stats_before = dict(self.backend.stats)
        try:
            out = self.backend.run(batch.dispatch, self.options.timeout_for(len(group)))
        except BackendError as exc:
            if isinstance(exc, DispatchTimeout):  # the wait itself, without replacing a dead worker
                waited = exc.waited_s
                self.summary.hang_detect_s.append(time.monotonic() - start if waited is None else waited)
            times.add("dispatch", time.monotonic() - start)
            return None, exc
        check_outputs(getattr(self.backend, "name", type(self.backend).__name__), batch.dispatch, out)
        elapsed = time.monotonic() - start
        messages = validation_messages(self.backend)
        times.split_backend(elapsed, stats_before, dict(self.backend.stats))
        with times.stage("judge"):
            results = [judge_pack_case(c, case_outputs(batch, out, i), arrays[i][1], arrays[i][2])
                       for i, c in enumerate(group)]
            if self.options.numerics:  # the device-model verdict after the spec one (--numerics)
                results = [model_verdict(r, c.record["family"], c.record["parameters"], [b.name for b in c.buffers],
                                         case_outputs(batch, out, i), self.options.numerics)
                           for i, (r, c) in enumerate(zip(results, group))]
            for i, (r, c) in enumerate(zip(results, group)):
                r.duration_s = elapsed / len(group)
                if r.status is Status.Fail and self.explain:  # which baseline deviations explain it
                    r.explained_by = explaining(c, arrays[i], case_outputs(batch, out, i), self.explain)
                if messages:  # the layer's word overrides the outputs' (ctsgen.backends.validation)
                    r.detail = f"{len(messages)} validation message(s) on its dispatch (outputs: {r.status.value}" + \
                        (f", {r.detail}" if r.detail else "") + "): " + " | ".join(messages)
                    r.status = Status.ValidationError
        return results, None

    def run(self, group: list[PackCase]) -> None:
        results, exc = self.dispatch(group)
        if results is not None:
            for r in results:
                self.record(r)
        elif len(group) == 1:
            self.record(CaseResult(group[0].name, status_of(exc), describe(exc)))
        elif self.culprits >= MAX_CULPRITS_PER_VARIANT:
            for c in group:
                self.record(CaseResult(c.name, status_of(exc), f"{describe(exc)}; not bisected: this variant "
                                       f"already has {self.culprits} culprits, the failure looks variant-wide"))
        else:
            self.isolate(group, exc)

    def isolate(self, group: list[PackCase], exc: BackendError) -> None:
        """``group`` failed as a whole with ``exc``: find the culprit by halving."""
        size, steps, deferred = len(group), 0, []
        while len(group) > 1:
            first, second = group[:len(group) // 2], group[len(group) // 2:]
            results, err = self.dispatch(first)
            steps += 1
            if results is not None:
                for r in results:
                    self.record(r)
                group = second  # the failure is in the other half, which need not run whole
            else:
                deferred.append(second)
                group, exc = first, err
        results, err = self.dispatch(group)  # confirm the culprit alone
        steps += 1
        self.summary.bisection_dispatches += steps
        where = f"isolated by bisection from a batch of {size} in {steps} dispatches"
        if results is not None:
            r = results[0]
            r.detail = (f"{r.detail}; " if r.detail else "") + \
                f"passed alone after its batch failed with {describe(exc)} ({where}): flaky?"
            self.record(r)
        else:
            self.culprits += 1
            self.record(CaseResult(group[0].name, status_of(err), f"{describe(err)}; culprit {where}"))
        for rest in deferred:
            self.run(rest)


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
