"""A driver team's own property tests against its backend, in a few lines.

    from ctsgen.testing import check_case, given_cases

    @given_cases(family="tensor-layout")
    def test_my_driver(case, ctsgen_backend):
        result = check_case(ctsgen_backend, case)
        assert not result.status.is_failure, result.detail

``ctsgen_backend`` is the pytest plugin's fixture (``--ctsgen-backend``).
``check_case`` compiles the case's shader variant, dispatches the case and
judges it exactly as ``ctsgen run`` and ``ctsgen fuzz`` do (the one compile
step, :func:`ctsgen.toolchain.variants.compile_variant`, and the one
dispatch-and-judge step, :func:`ctsgen.execute.run.run_cases`), so a failure
here is a failure there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given

from ctsgen.backends.base import Backend
from ctsgen.core.shader import ShaderVariant
from ctsgen.mutants.deviations import expected_under, reaching
from ctsgen.device.profile import default_profile, drawing_profile
from ctsgen.families import DEFAULT_FAMILY, get_family
from ctsgen.execute.run import drawn, run_cases
from ctsgen.core.family import Case, StrategyOptions
from ctsgen.runner.options import RunOptions
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.toolchain.variants import compile_variant

_SHADERS: dict[tuple[str, str], ShaderVariant] = {}


def _shader(case: Case) -> ShaderVariant:
    """The case's compiled variant (compiled once per session; validated where a validator is installed)."""
    v = case.variant()
    key = (case.family, v.id)
    if key not in _SHADERS:
        _SHADERS[key] = compile_variant(v, case.family, validation="if-installed",
                                        validator=get_family(case.family).validator)
    return _SHADERS[key]


def check_case(backend: Backend, case: Case, options: RunOptions = RunOptions()) -> CaseResult:
    """Compile, dispatch and judge one drawn case on ``backend``.

    NotSupported when the backend's profile lacks what the variant requires;
    Timeout / DeviceLost / Crash when the dispatch gives no result; otherwise
    the runner's verdict (Pass, Fail with the mismatches, QualityWarning).
    ``options.expect_deviations`` judges it under documented driver deviations
    (:mod:`ctsgen.mutants.deviations`).
    """
    sv = _shader(case)
    reason = drawing_profile(backend.profile()).unsupported_reason(sv.requirements)
    if reason:
        return CaseResult(case.name(), Status.NotSupported, reason)
    data = expected_under(get_family(case.family), case, case.data(), reaching(options.expect_deviations, sv))
    return run_cases(backend, sv, [drawn(case, data)], options.timeout_for(1)).results[0]


def given_cases(family: str = DEFAULT_FAMILY, *, argname: str = "case",
                **strategy_options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A Hypothesis ``given`` drawing cases of ``family`` into the argument ``argname``.

    ``strategy_options`` are :class:`~ctsgen.core.family.StrategyOptions`
    fields (``profile`` defaults to the embedded H100 profile, e.g.
    ``include_hazardous=True``). Other arguments of the test (fixtures such
    as ``ctsgen_backend``) are left to pytest.
    """
    strategy_options.setdefault("profile", default_profile())
    strategy = get_family(family).cases(StrategyOptions(**strategy_options))
    return given(**{argname: strategy})
