"""cm2-elementwise: the functions depend on (row, col), exactness limits, compile + validate."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_elementwise import FAMILY
from ctsgen.families.cm2_elementwise.case import PerElementCase, PerElementVariant
from ctsgen.ops.cm2_elementwise import Op, expected_per_element, op_allows
from ctsgen.device.profile import default_profile  # equals the shared H100 read-out (tests/test_profile.py)
from ctsgen.model.types import ComponentType as C
from ctsgen.toolchain import compile_glsl, validate_spirv

PROFILE = default_profile()


def test_affine_hand_worked() -> None:
    x = np.array([[1, 2], [3, 4]], np.float16)
    m = np.array([[10, 20], [30, 40]], np.float16)
    out = expected_per_element(Op.affine, x, C.float16, s=2.0, m=m)
    assert out.tolist() == [[12, 25], [38, 51]]  # x*2 + m + (row*2 + col)


def test_a_swapped_coordinate_is_visible() -> None:
    """Evaluating Func at (col, row) instead of (row, col) changes every off-diagonal element."""
    x = np.zeros((4, 4), np.float32)
    out = expected_per_element(Op.affine, x, C.float32, s=1.0, m=x)
    assert (out != out.T)[~np.eye(4, dtype=bool)].all()
    sel = expected_per_element(Op.select, np.zeros((4, 8), np.int8), C.sint8, s=7, r0=1, c0=5)
    assert sel[1].tolist() == [7] * 8 and sel[:, 5].tolist() == [7] * 4 and sel.sum() == 7 * 11


def test_integer_affine_wraps() -> None:
    x = np.array([[127]], np.int8)
    assert expected_per_element(Op.affine, x, C.sint8, s=2, m=np.array([[1]], np.int8)).tolist() == [[-1]]


def test_float16_affine_limit() -> None:
    assert op_allows(Op.affine, C.float16, 32, 32) is None
    assert op_allows(Op.affine, C.float16, 32, 48) is not None
    assert op_allows(Op.affine, C.bfloat16, 16, 16) is not None
    assert op_allows(Op.select, C.bfloat16, 16, 16) is None


@given(FAMILY.cases(StrategyOptions(profile=PROFILE)))
def test_cases_are_valid_and_round_trip(c: PerElementCase) -> None:
    assert PROFILE.supports_matrix(c.shader.matrix) is None
    assert FAMILY.case_from_json(c.to_json()) == c
    d = c.data()
    assert d.expected[2].size == c.shader.subgroups * c.shader.matrix.elements


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(FAMILY.strata()).flatmap(lambda s: FAMILY.variants(StrategyOptions(), **s)))
def test_variants_compile_and_validate(v: PerElementVariant) -> None:
    validate_spirv(compile_glsl(v.glsl(), v.id))
