"""cm2-reduce: oracle properties from the spec, the float-sum bound, strategies, compile + validate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from ctsgen.device.profile import default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_reduce import FAMILY
from ctsgen.families.cm2_reduce.case import ReduceCase, ReduceVariant, source_values
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, expected_reduce
from ctsgen.families.cm2_reduce.strategy import reduce_cases_for, reduce_variants
from ctsgen.model.types import ComponentType, MatrixUse, Scope
from ctsgen.oracle.numeric import sum_error_bound, unit_roundoff
from ctsgen.toolchain import compile_glsl, validate_spirv

F32, F16, S32, U32 = ComponentType.float32, ComponentType.float16, ComponentType.sint32, ComponentType.uint32
CASES = FAMILY.cases(StrategyOptions())
FIND = settings(max_examples=200, database=None, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


def test_row_reduce_of_rank_one_matrix() -> None:
    """Row sum of u v^T is u_i * sum(v), replicated across each row (and over a wider result)."""
    u = np.array([1, -2, 3, 0, 5, 1, 2, -1], np.float64)
    v = np.array([0.5, 0.25, -1, 2, 1, 1, 0.75, -0.5, 1, 2, 3, 4, -4, -3, -2, 0], np.float64)
    m = np.outer(u, v).astype(np.float32)
    out, tol = expected_reduce(m, ReduceMode.Row, Combine.sum, F32, 8, 32)
    assert np.array_equal(out, np.repeat((u * v.sum())[:, None], 32, axis=1).astype(np.float32))
    mx, _ = expected_reduce(m, ReduceMode.Row, Combine.max, F32, 8, 16)
    assert np.array_equal(mx[:, 0], np.where(u >= 0, u * v.max(), u * v.min()).astype(np.float32))
    assert (tol >= 0).all()


def test_2x2_reduce_equals_reshaped_numpy() -> None:
    rng = np.random.default_rng(1)
    m = rng.integers(-2**31, 2**31, size=(32, 16)).astype(np.int32)
    blocks = m.astype(np.int64).reshape(16, 2, 8, 2)
    for combine, ref in ((Combine.max, blocks.max(axis=(1, 3))), (Combine.min, blocks.min(axis=(1, 3))),
                         (Combine.sum, blocks.sum(axis=(1, 3)))):
        out, _ = expected_reduce(m, ReduceMode.Block2x2, combine, S32, 16, 8)
        assert np.array_equal(out, ref.astype(np.int64).astype(np.uint32).view(np.int32)), combine


def test_hand_worked_examples() -> None:
    m = np.array([[1, 2], [3, 4]], np.uint32)
    assert expected_reduce(m, ReduceMode.Column, Combine.sum, U32, 3, 2)[0].tolist() == [[4, 6]] * 3
    assert expected_reduce(m, ReduceMode.RowColumn, Combine.product, U32, 1, 1)[0].tolist() == [[24]]
    assert expected_reduce(m, ReduceMode.Row, Combine.xor, U32, 2, 1)[0].tolist() == [[3], [7]]
    wrap = np.array([[2**31, 2**31]], np.uint32)
    assert expected_reduce(wrap, ReduceMode.Row, Combine.sum, U32, 1, 2)[0].tolist() == [[0, 0]]


@pytest.mark.parametrize("component", [F16, F32])
def test_float_sum_bound_covers_every_order(component: ComponentType) -> None:
    """Sequential sums in the type, forwards, backwards, sorted and pairwise, stay inside the bound."""
    x = source_values(Combine.sum, component, 256, 7).astype(component.dtype)
    exact = x.astype(np.float64).sum()
    bound = sum_error_bound(np.abs(x.astype(np.float64)).sum(), x.size, component) \
        + unit_roundoff(component) * abs(exact)

    def seq(v: np.ndarray) -> float:
        acc = component.dtype.type(0)
        for e in v:
            acc = component.dtype.type(acc + e)
        return float(acc)

    def pairwise(v: np.ndarray) -> float:
        while v.size > 1:
            v = (v[0::2] + v[1::2]).astype(component.dtype)
        return float(v[0])

    for got in (seq(x), seq(x[::-1]), seq(np.sort(x)), pairwise(x)):
        assert abs(got - exact) <= bound


def test_wrong_combination_fails_the_bound() -> None:
    """Dropping one term of a float sum is outside the tolerance (the bound is not vacuous)."""
    c = ReduceCase(FAMILY.variant_from_json({"mode": "Row", "combine": "sum", "source": {
        "componentType": "float32", "use": "Accumulator", "scope": "Subgroup", "rows": 16, "cols": 16,
        "workgroupSize": 32}, "result": {"componentType": "float32", "use": "Accumulator", "scope": "Subgroup",
                                        "rows": 16, "cols": 16, "workgroupSize": 32}}), seed=3)
    d = c.data()
    src = d.initial[0].reshape(16, 16).astype(np.float64)
    wrong = np.repeat((src.sum(axis=1) - src[:, 5])[:, None], 16, axis=1).ravel()
    nonzero = src[:, 5] != 0
    assert (np.abs(wrong - d.expected[1].astype(np.float64)) > d.tolerance[1]).reshape(16, 16)[nonzero].all()


@settings(max_examples=30)
@given(CASES)
def test_cases_are_valid_and_round_trip(c: ReduceCase) -> None:
    v = c.shader
    assert v.source.use is MatrixUse.Accumulator and default_profile().supports_matrix(v.result) is None
    assert FAMILY.case_from_json(c.to_json()) == c
    d = c.data()
    assert d.expected[1].size == v.subgroups * v.result.elements and d.initial[0].dtype == v.source.component.dtype


def test_strategy_respects_a_profile_without_workgroup_scope() -> None:
    prof = default_profile()
    prof.features["cooperativeMatrixWorkgroupScope"] = 0
    seen = find(FAMILY.cases(StrategyOptions(profile=prof)), lambda c: True,
                settings=settings(database=None, max_examples=50, phases=[Phase.generate]))
    assert seen.shader.source.scope is Scope.Subgroup

    @given(FAMILY.cases(StrategyOptions(profile=prof)))
    @settings(max_examples=40)
    def check(c: ReduceCase) -> None:
        assert c.shader.source.scope is Scope.Subgroup

    check()


@pytest.mark.slow
def test_shrinks_to_simplest() -> None:
    """Within a stratum, the simplest case is the smallest float16 subgroup accumulator,
    reduced into its own shape, seed 0."""
    v = find(reduce_variants(mode=ReduceMode.Row, combine=Combine.sum), lambda v: True, settings=FIND)
    assert (v.source.component, v.source.scope, v.source.rows * v.source.cols) == (F16, Scope.Subgroup, 128)
    assert find(reduce_cases_for(v), lambda c: True, settings=FIND).seed == 0
    assert v.result == v.source and v.subgroups == 1


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(FAMILY.strata()).flatmap(lambda s: FAMILY.variants(StrategyOptions(), **s)))
def test_variants_compile_and_validate(v: ReduceVariant) -> None:
    validate_spirv(compile_glsl(v.glsl(), v.id))
