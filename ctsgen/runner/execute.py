"""Executing drawn cases (not read from a pack): one dispatch, each case judged.

``ctsgen fuzz``, :func:`ctsgen.testing.check_case` and ``bench/naive_loop.py``
hold a family's cases, their data and their compiled variant; they run them
here and get the same verdicts ``ctsgen run`` gives a pack's cases (both end
in :func:`ctsgen.runner.verdict.judge`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ctsgen.backends.base import Backend, BackendError, ShaderVariant
from ctsgen.families.base import Case, CaseData, case_locator
from ctsgen.runner.batch import build_batch, case_outputs
from ctsgen.runner.verdict import CaseResult, error_result, judge, output_buffers


def judge_case(case: Case, variant: ShaderVariant, outputs: list[np.ndarray], data: CaseData) -> CaseResult:
    """The verdict of a drawn ``case`` of ``variant`` from its buffers after the dispatch."""
    names = [b.name for b in variant.buffers]
    return judge(case.name(), output_buffers(names, outputs, data.expected, data.tolerance),
                 case.compare_rule().to_json(), case_locator(case))


def execute_cases(backend: Backend, variant: ShaderVariant, cases: Sequence[Case], data: Sequence[CaseData],
                  timeout_s: float) -> list[CaseResult]:
    """Run ``cases`` (all of ``variant``; ``data[i]`` is ``cases[i].data()``) in one dispatch
    and judge each. A dispatch that gives no result (:class:`BackendError`) gives every
    case that error's verdict (Timeout, DeviceLost or Crash)."""
    batch = build_batch(variant, [d.params for d in data], [d.initial for d in data])
    try:
        out = backend.run(batch.dispatch, timeout_s)
    except BackendError as exc:
        return [error_result(c.name(), exc) for c in cases]
    return [judge_case(c, variant, case_outputs(batch, out, i), d) for i, (c, d) in enumerate(zip(cases, data))]
