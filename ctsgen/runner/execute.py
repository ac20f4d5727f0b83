"""Executing drawn cases (not read from a pack): one dispatch, each case judged.

``ctsgen fuzz``, :func:`ctsgen.testing.check_case` and ``bench/naive_loop.py``
hold a family's cases, their data and their compiled variant; they run them
here and get the same verdicts ``ctsgen run`` gives a pack's cases (both end
in :func:`ctsgen.core.verdict.judge`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ctsgen.backends.base import Backend
from ctsgen.errors import BackendError
from ctsgen.core.shader import ShaderVariant
from ctsgen.core.family import Case, CaseData, case_locator
from ctsgen.runner.batch import build_batch, case_outputs
from ctsgen.core.verdict import CaseResult, error_result, judge, output_buffers
from ctsgen.timing import Breakdown


def judge_case(case: Case, name: str, variant: ShaderVariant, outputs: list[np.ndarray], data: CaseData
               ) -> CaseResult:
    """The verdict of a drawn ``case`` (named ``name``) of ``variant`` from its buffers after the dispatch."""
    buffers = [b.name for b in variant.buffers]
    return judge(name, output_buffers(buffers, outputs, data.expected, data.tolerance),
                 case.compare_rule().to_json(), case_locator(case))


def execute_cases(backend: Backend, variant: ShaderVariant, cases: Sequence[Case], data: Sequence[CaseData],
                  timeout_s: float, times: Breakdown | None = None, names: Sequence[str] | None = None
                  ) -> list[CaseResult]:
    """Run ``cases`` (all of ``variant``; ``data[i]`` is ``cases[i].data()``) in one dispatch
    and judge each. A dispatch that gives no result (:class:`BackendError`) gives every
    case that error's verdict (Timeout, DeviceLost or Crash). ``times`` receives the
    seconds of packing the data, pipeline, dispatch, read-back and judging. ``names[i]``:
    ``cases[i].name()``, where the caller has computed them (a name serialises and hashes the
    whole case: 20-50 us)."""
    times = times if times is not None else Breakdown()
    names = [c.name() for c in cases] if names is None else names
    with times.stage("data+oracle"):
        batch = build_batch(variant, [d.params for d in data], [d.initial for d in data])
    before = dict(backend.stats)
    t0 = time.perf_counter()
    try:
        out = backend.run(batch.dispatch, timeout_s)
    except BackendError as exc:
        times.add("dispatch", time.perf_counter() - t0)
        return [error_result(name, exc) for name in names]
    times.split_backend(time.perf_counter() - t0, before, dict(backend.stats))
    with times.stage("judge"):
        return [judge_case(c, name, variant, case_outputs(batch, out, i), d)
                for i, (c, d, name) in enumerate(zip(cases, data, names))]
