"""The one dispatch-and-judge step: cases of one compiled variant, one dispatch, each case judged.

Every path that runs cases runs them here: ``ctsgen run`` and the pytest
plugin (a pack's cases, :mod:`ctsgen.runner.run`), ``ctsgen fuzz``,
:func:`ctsgen.testing.check_case`, fuzz buckets (the outputs a mutant must
explain), the mutation bench (does a mutant expose a case), the debug re-run
and ``bench/naive_loop.py``. A case comes as a :class:`CaseInput`, whatever
holds it (a pack's files or a drawn case with its data), so each path gets
the verdicts ``ctsgen run`` gives: the backend's results are checked against
the dispatch (:mod:`ctsgen.execute.contract`), each case's buffers go to
:func:`ctsgen.execute.judge.judge`, and a validation layer's messages on the
dispatch make every case a ValidationError (:mod:`ctsgen.backends.validation`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ctsgen.backends.base import Backend, build_seconds, validation_messages
from ctsgen.errors import BackendError, BuildTimeout
from ctsgen.core.shader import ShaderVariant
from ctsgen.execute.batch import build_batch, case_outputs
from ctsgen.execute.contract import check_outputs
from ctsgen.execute.judge import error_result, judge, output_buffers
from ctsgen.core.family import Case, CaseData, case_locator
from ctsgen.core.verdict import CaseResult, Locator, Status
from ctsgen.timing import Breakdown


@dataclass(frozen=True)
class CaseInput:
    """One case as a dispatch and its judge take it: its name, its family words, each buffer's
    initial data, expected data (None: not checked) and tolerance (None: a bitwise rule), its
    compare rule (``CompareRule.to_json()``) and what its family says about an element."""

    name: str
    params: np.ndarray
    initial: Sequence[np.ndarray]
    expected: Sequence[np.ndarray | None]
    tolerance: Sequence[np.ndarray | None] | None
    rule: Mapping[str, Any]
    locate: Locator | None = None


def drawn(case: Case, data: CaseData, name: str | None = None) -> CaseInput:
    """A drawn ``case`` with its ``data`` (``case.data()``, or its expectation under deviations).
    ``name``: ``case.name()`` where the caller has computed it (a name serialises and hashes the
    whole case: 20-50 us)."""
    return CaseInput(case.name() if name is None else name, data.params, data.initial, data.expected,
                     data.tolerance, case.compare_rule().to_json(), case_locator(case))


def drawn_cases(cases: Sequence[Case], data: Sequence[CaseData], names: Sequence[str] | None = None
                ) -> list[CaseInput]:
    """:func:`drawn` of each case (``data[i]`` and ``names[i]`` are case i's)."""
    names = [None] * len(cases) if names is None else names
    return [drawn(c, d, n) for c, d, n in zip(cases, data, names)]


def judged(case: CaseInput, buffers: Sequence[str], outputs: Sequence[np.ndarray]) -> CaseResult:
    """The verdict of ``case`` from ``outputs``, its buffers (named ``buffers``, in binding order)
    after a dispatch."""
    return judge(case.name, output_buffers(buffers, outputs, case.expected, case.tolerance), case.rule,
                 case.locate)


@dataclass
class Dispatched:
    """What one dispatch gave: a verdict per case (each the error's when the dispatch gave no
    result), each case's output buffers (None then), the error, and the dispatch's seconds."""

    results: list[CaseResult]
    outputs: list[list[np.ndarray]] | None
    error: BackendError | None
    elapsed_s: float


#: A further verdict step of a caller, ``review(i, result, outputs)`` -> case i's verdict (a pack
#: run's device-model verdict and deviation explanations); the validation layer has the last word.
Review = Callable[[int, CaseResult, list[np.ndarray]], CaseResult]


def backend_name(backend: Backend) -> str:
    return getattr(backend, "name", type(backend).__name__)


def run_cases(backend: Backend, variant: ShaderVariant, cases: Sequence[CaseInput], timeout_s: float,
              times: Breakdown | None = None, review: Review | None = None) -> Dispatched:
    """Run ``cases`` (all of ``variant``) in one dispatch bounded by ``timeout_s`` and judge each.

    A dispatch that gives no result (:class:`BackendError`) gives every case that error's
    verdict (Timeout, BuildTimeout, DeviceLost or Crash) and :attr:`Dispatched.error`.
    Each case carries its variant's build seconds (``CaseResult.build_s``) where the backend
    says them (``build_seconds``), and a BuildTimeout's waited seconds.
    ``times`` receives the seconds of packing the data, build, pipeline, dispatch, read-back and
    judging."""
    times = times if times is not None else Breakdown()
    with times.stage("data+oracle"):
        batch = build_batch(variant, [c.params for c in cases], [c.initial for c in cases])
    before = dict(backend.stats)
    t0 = time.perf_counter()
    try:
        out = backend.run(batch.dispatch, timeout_s)
    except BackendError as exc:
        elapsed = time.perf_counter() - t0
        failed = [error_result(c.name, exc) for c in cases]
        if isinstance(exc, BuildTimeout):  # the build's seconds are the build stage's, and each case's
            build = min(exc.seconds, elapsed)
            times.add("build", build)
            elapsed_rest = elapsed - build
            for r in failed:
                r.build_s = exc.seconds
        else:
            elapsed_rest = elapsed
        times.add("dispatch", elapsed_rest)
        return Dispatched(failed, None, exc, elapsed)
    check_outputs(backend_name(backend), batch.dispatch, out)
    elapsed = time.perf_counter() - t0
    messages = validation_messages(backend)
    times.split_backend(elapsed, before, dict(backend.stats))
    buffers = [b.name for b in variant.buffers]
    with times.stage("judge"):
        outputs = [case_outputs(batch, out, i) for i in range(len(cases))]
        results = [judged(c, buffers, o) for c, o in zip(cases, outputs)]
        if review is not None:
            results = [review(i, r, o) for i, (r, o) in enumerate(zip(results, outputs))]
        built = build_seconds(backend, variant.id)
        for r in results:
            r.build_s = built
        if messages:  # the layer's word overrides the outputs' (ctsgen.backends.validation)
            for r in results:
                r.detail = f"{len(messages)} validation message(s) on its dispatch (outputs: {r.status.value}" + \
                    (f", {r.detail}" if r.detail else "") + "): " + " | ".join(messages)
                r.status = Status.ValidationError
    return Dispatched(results, outputs, None, elapsed)
