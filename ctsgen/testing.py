"""A driver team's own property tests against its backend, in a few lines.

    from ctsgen.testing import check_case, given_cases

    @given_cases(family="tensor-layout")
    def test_my_driver(case, ctsgen_backend):
        result = check_case(ctsgen_backend, case)
        assert not result.status.is_failure, result.detail

``ctsgen_backend`` is the pytest plugin's fixture (``--ctsgen-backend``).
``check_case`` compiles the case's shader variant, dispatches the case and
judges it exactly as ``ctsgen run`` and ``ctsgen fuzz`` do (the fuzzer's
compile step and the runner's ``judge``), so a failure here is a failure
there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given

from ctsgen.backends.base import Backend, BackendError
from ctsgen.device.profile import default_profile
from ctsgen.families import get_family
from ctsgen.families.base import Case, StrategyOptions
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions, _as_pack_case
from ctsgen.runner.batch import build_batch, case_outputs
from ctsgen.runner.run import RunOptions, _describe, _status, judge
from ctsgen.runner.verdict import CaseResult, Status

_FUZZERS: dict[tuple[int, str], Fuzzer] = {}


def _fuzzer(backend: Backend, family: str) -> Fuzzer:
    """One compile cache per (backend, family): a variant compiles once per session."""
    key = (id(backend), family)
    if key not in _FUZZERS:
        _FUZZERS[key] = Fuzzer(backend, FuzzOptions(families=(family,), database=None))
    return _FUZZERS[key]


def check_case(backend: Backend, case: Case, options: RunOptions = RunOptions()) -> CaseResult:
    """Compile, dispatch and judge one drawn case on ``backend``.

    NotSupported when the backend's profile lacks what the variant requires;
    Timeout / DeviceLost / Crash when the dispatch gives no result; otherwise
    the runner's verdict (Pass, Fail with the mismatches, QualityWarning).
    """
    fuzzer = _fuzzer(backend, case.family)
    sv = fuzzer.shader(case.variant(), case.family)
    reason = fuzzer.profile.unsupported_reason(sv.requirements)
    if reason:
        return CaseResult(case.name(), Status.NotSupported, reason)
    data = case.data()
    batch = build_batch(sv, [data.params], [data.initial])
    try:
        out = backend.run(batch.dispatch, options.timeout_for(1))
    except BackendError as exc:
        return CaseResult(case.name(), _status(exc), _describe(exc))
    return judge(_as_pack_case(case, sv), case_outputs(batch, out, 0), data.expected, data.tolerance)


def given_cases(family: str = "tensor-layout", *, argname: str = "case",
                **strategy_options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A Hypothesis ``given`` drawing cases of ``family`` into the argument ``argname``.

    ``strategy_options`` are :class:`~ctsgen.families.base.StrategyOptions`
    fields (``profile`` defaults to the embedded H100 profile, e.g.
    ``include_hazardous=True``). Other arguments of the test (fixtures such
    as ``ctsgen_backend``) are left to pytest.
    """
    strategy_options.setdefault("profile", default_profile())
    strategy = get_family(family).cases(StrategyOptions(**strategy_options))
    return given(**{argname: strategy})
