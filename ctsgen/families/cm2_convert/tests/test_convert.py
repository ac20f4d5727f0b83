"""cm2-convert: conversion rules against numpy/ml_dtypes, transpose, Use rules, compile + validate."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_convert import FAMILY
from ctsgen.families.cm2_convert.case import ConvertCase, ConvertVariant, check_pair
from ctsgen.ops.cm2_convert import Kind, expected_result, source_values
from ctsgen.families.cm2_convert.strategy import pairs
from ctsgen.device.profile import default_profile  # equals the shared H100 read-out (tests/test_profile.py)
from ctsgen.model.types import ComponentType as C
from ctsgen.model.types import MatrixType, MatrixUse, Scope
from ctsgen.oracle.numeric import convert
from ctsgen.execute.judge import judge_buffer
from ctsgen.toolchain import compile_glsl, validate_spirv

PROFILE = default_profile()
REACH = settings(max_examples=1000, database=None, deadline=None, derandomize=True,
                 suppress_health_check=list(HealthCheck), phases=[Phase.generate])


def test_float_to_int_truncates_toward_zero() -> None:
    """OpConvertFToS / OpConvertFToU: round toward zero (hand-worked)."""
    v = np.array([-127.9, -0.75, 0.75, 1.5, 126.99], np.float32)
    assert convert(v, C.float32, C.sint8).tolist() == [-127, 0, 0, 1, 126]
    assert convert(np.array([255.9, 0.2], np.float16), C.float16, C.uint8).tolist() == [255, 0]
    with pytest.raises(ValueError, match="undefined"):
        convert(np.array([128.0], np.float32), C.float32, C.sint8)


def test_int_conversions_wrap_and_extend() -> None:
    """OpSConvert / OpUConvert: narrowing keeps the low bits (no saturation); widening extends by the
    source's signedness."""
    assert convert(np.array([300, -129, 2**31 - 1], np.int32), C.sint32, C.sint8).tolist() == [44, 127, -1]
    assert convert(np.array([-1, -128], np.int8), C.sint8, C.uint32).tolist() == [2**32 - 1, 2**32 - 128]
    assert convert(np.array([255], np.uint8), C.uint8, C.sint32).tolist() == [255]


def test_float_conversions_match_ml_dtypes_round_to_nearest_even() -> None:
    x = source_values(C.float32, C.bfloat16, 4096, 5)
    assert np.array_equal(convert(x, C.float32, C.bfloat16).view(np.uint16),
                          x.astype(ml_dtypes.bfloat16).view(np.uint16))
    y = source_values(C.float32, C.float16, 4096, 6)
    assert np.array_equal(convert(y, C.float32, C.float16), y.astype(np.float16))
    tie = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11], np.float32)  # halfway: to the even neighbour
    assert convert(tie, C.float32, C.float16).tolist() == [1.0, 1 + 2.0**-9]


@pytest.mark.parametrize(("src", "dst"), [(C.float32, C.sint8), (C.float16, C.uint8), (C.float32, C.uint32),
                                          (C.float32, C.sint32), (C.sint32, C.float16), (C.float32, C.float16),
                                          (C.bfloat16, C.float16)])
def test_source_values_keep_conversions_defined(src: C, dst: C) -> None:
    x = source_values(src, dst, 5000, 11)
    out = convert(x, src, dst)  # raises if a float -> int conversion were undefined
    if dst.is_float:
        assert np.isfinite(out.astype(np.float64)).all()
        assert (np.abs(out.astype(np.float64)) >= 2.0**-14).all() or dst is not C.float16


@pytest.mark.parametrize(("src", "dst"), [(C.sint8, C.float16), (C.uint8, C.float16), (C.sint8, C.bfloat16),
                                          (C.uint8, C.bfloat16), (C.float16, C.float32)])
def test_an_exact_conversion_to_a_float_may_give_either_zero(src: C, dst: C) -> None:
    """OpConvertSToF / OpConvertUToF of 0 is +0 in IEEE 754, but the shader does not declare
    SignedZeroInfNanPreserve, so Vulkan lets the device give -0 ("ignore sign of a zero"). Exact
    conversions are judged as the rounding ones and coopvec-elementwise's are (by value,
    tolerance 0): for sources 0, 1, 2, -0 passes for 0, and 1 + one spacing for 1 fails.
    Failed before: exact conversions were compared bit for bit, so -0 failed."""
    m = lambda t: MatrixType(t, Scope.Subgroup, 16, 16, MatrixUse.Accumulator)  # noqa: E731
    rule = ConvertCase(ConvertVariant(Kind.convert, m(src), m(dst)), 3).compare_rule().to_json()
    source = np.zeros((16, 16), src.dtype)
    source[0, 1], source[0, 2] = 1, 2
    exp, tol = expected_result(Kind.convert, source, src, dst)
    exp, tol = exp.ravel(), tol.reshape(2, -1)
    assert exp[:3].astype(np.float64).tolist() == [0.0, 1.0, 2.0] and not np.signbit(exp[0].astype(np.float64))
    got = exp.copy()
    got[0] = -0.0
    assert judge_buffer(got, exp, rule, tol).bad.tolist() == []
    got[1] = np.nextafter(np.float32(1), np.float32(2)).astype(dst.dtype) if dst is C.float32 else \
        (np.array(1.0).astype(dst.dtype).view(dst.bits_dtype) + 1).view(dst.dtype)
    assert judge_buffer(got, exp, rule, tol).bad.tolist() == [1]


def test_transpose_twice_is_identity() -> None:
    m = source_values(C.float16, C.float16, 16 * 32, 3).reshape(16, 32)
    t, _ = expected_result(Kind.transpose, m, C.float16, C.float16)
    assert t.shape == (32, 16) and t[5, 3] == m[3, 5]
    tt, _ = expected_result(Kind.transpose, t, C.float16, C.float16)
    assert np.array_equal(tt.view(np.uint16), m.view(np.uint16))


def test_use_rules() -> None:
    acc = MatrixType(C.float16, Scope.Subgroup, 16, 16, MatrixUse.Accumulator)
    a = MatrixType(C.float16, Scope.Subgroup, 16, 16, MatrixUse.A)
    assert check_pair(Kind.use, acc, a) is None
    assert check_pair(Kind.use, a, acc) is not None  # A -> Accumulator is not a conversion the spec allows
    assert check_pair(Kind.convert, acc, a) is not None  # same component: that is ConvertNV's job
    b_t = MatrixType(C.float16, Scope.Subgroup, 16, 16, MatrixUse.B)
    assert check_pair(Kind.transpose, acc, b_t) is None
    assert check_pair(Kind.transpose, acc, a) is not None
    s32 = MatrixType(C.sint32, Scope.Subgroup, 16, 16, MatrixUse.Accumulator)
    assert check_pair(Kind.convert, s32, MatrixType(C.uint32, Scope.Subgroup, 16, 16,
                                                    MatrixUse.Accumulator)) is not None  # a bitcast


@settings(max_examples=60)
@given(st.sampled_from(FAMILY.strata()).flatmap(
    lambda s: st.tuples(st.just(s), FAMILY.variants(StrategyOptions(profile=PROFILE), **s))))
def test_every_stratum_draws_variants_of_its_cell_on_the_h100(cell: tuple[dict, ConvertVariant]) -> None:
    s, v = cell
    assert v.kind is s["kind"]
    if "source" in s:
        assert (v.source.component, v.result.component) == (s["source"], s["result"])
    else:
        # the pinned scoping is one subgroup's; the variant's workgroup holds v.subgroups of them
        assert v.result.use is MatrixUse[s["to_use"]] and \
            (v.source.scope, v.source.workgroup_size // v.subgroups) == s["scope"]


def test_the_strata_hold_every_component_pair_the_h100_can_convert() -> None:
    """Op*Convert keeps the Use or goes Accumulator -> A / B (3.49.11). On the H100 sint8 is an A / B
    type and float32 an Accumulator only: sint8 A -> float16 A and float32 Accumulator -> sint8 A
    (the extension's own example, f32 Accumulator -> u8 A) are strata, sint8 -> float32 is none.
    Every off-diagonal component pair is a stratum or has no matrix types on the H100."""
    cells = {(s["source"], s["result"]) for s in FAMILY.strata() if "source" in s}
    assert {(C.sint8, C.float16), (C.float32, C.sint8), (C.float32, C.uint8), (C.sint32, C.sint8)} <= cells
    assert (C.sint8, C.float32) not in cells and all(s is not r for s, r in cells)
    allowed = {(s.component, r.component) for u in ("same", "A", "B") for s, r in pairs(PROFILE, Kind.convert, u)}
    assert cells == allowed and len(cells) == 29
    scopes = {s["scope"] for s in FAMILY.strata() if s["kind"] is Kind.transpose}
    assert (Scope.Subgroup, 32) in scopes and len(scopes) == 5


@pytest.mark.slow
@pytest.mark.parametrize("pair", sorted({(s["source"], s["result"]) for s in FAMILY.strata() if "source" in s},
                                        key=lambda p: (p[0].name, p[1].name)), ids=lambda p: f"{p[0].name}-{p[1].name}")
def test_every_component_pair_is_reachable_unpinned(pair: tuple[C, C]) -> None:
    """The fuzzer's unpinned draws reach every pair too (drawn uniformly before the shapes)."""
    find(FAMILY.variants(StrategyOptions(profile=PROFILE)), lambda v: (v.source.component, v.result.component) == pair,
         settings=REACH)


@given(FAMILY.cases(StrategyOptions(profile=PROFILE)))
def test_cases_are_valid_and_round_trip(c: ConvertCase) -> None:
    v = c.shader
    assert PROFILE.supports_matrix(v.source) is None and PROFILE.supports_matrix(v.result) is None
    assert FAMILY.case_from_json(c.to_json()) == c
    d = c.data()
    assert d.expected[1].dtype == v.result.component.dtype and d.expected[1].size == v.subgroups * v.result.elements


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(FAMILY.strata()).flatmap(lambda s: FAMILY.variants(StrategyOptions(), **s)))
def test_variants_compile_and_validate(v: ConvertVariant) -> None:
    validate_spirv(compile_glsl(v.glsl(), v.id))
