"""cm2-gemm: the tile oracle against numpy, the derived bound, profile restriction, compile + validate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_gemm import FAMILY
from ctsgen.families.cm2_gemm.case import GemmCase, GemmVariant
from ctsgen.ops.cm2_gemm import expected_tile
from ctsgen.device.profile import default_profile  # equals the shared H100 read-out (tests/test_profile.py)
from ctsgen.model.types import ComponentType as C
from ctsgen.model.types import Scope
from ctsgen.toolchain import compile_glsl, validate_spirv

PROFILE = default_profile()


def test_tile_matches_numpy_and_leaves_the_rest() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, size=(32, 48)).astype(np.int8)
    b = rng.integers(-128, 128, size=(48, 32)).astype(np.int8)
    c = rng.integers(-1000, 1000, size=(32, 32)).astype(np.int32)
    d0 = np.full((32, 32), -7, np.int32)
    d, _ = expected_tile(a, b, c, 3, -2, slice(16, 32), slice(0, 16), d0, C.sint32)
    ref = 3 * (a[16:].astype(np.int64) @ b[:, :16]) - 2 * c[16:, :16]
    assert np.array_equal(d[16:, :16], ref.astype(np.int32)) and (d[:16] == -7).all() and (d[:, 16:] == -7).all()


def _tile_in_int64(c: GemmCase) -> np.ndarray:
    """The integer tile by the definition, in Python-exact int64 arithmetic, as 32-bit words."""
    M, N, K = c.dims()
    v = c.shader
    a, b, cc = (x.astype(np.int64) for x in c.inputs())
    rows, cols = slice(c.ty * v.tile_m, (c.ty + 1) * v.tile_m), slice(c.tx * v.tile_n, (c.tx + 1) * v.tile_n)
    prod = a.reshape(M, K)[rows] @ b.reshape(K, N)[:, cols]
    return ((int(c.alpha) * prod + int(c.beta) * cc.reshape(M, N)[rows, cols]) & 0xFFFFFFFF).astype(np.uint32)


@settings(max_examples=60, deadline=None)
@given(FAMILY.cases(StrategyOptions(profile=PROFILE), float_c=False))
def test_integer_tiles_are_the_int64_products_bit_for_bit(c: GemmCase) -> None:
    # the oracle multiplies 8-bit matrices in float64 (BLAS), exact below 2^53: same words as int64
    v = c.shader
    d = c.d_matrix(c.data().expected[3])
    tile = d[c.ty * v.tile_m:(c.ty + 1) * v.tile_m, c.tx * v.tile_n:(c.tx + 1) * v.tile_n]
    assert np.array_equal(tile.view(np.uint32), _tile_in_int64(c))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_integer_tile_at_the_extremes_is_exact(dtype) -> None:
    # every product at the type's largest magnitude, over a long K: the largest sums there are
    info = np.iinfo(dtype)
    K = 4096
    a = np.full((4, K), info.min if info.min else info.max, dtype)
    b = np.full((K, 4), info.min if info.min else info.max, dtype)
    a[1, ::3] = info.max
    c = np.full((4, 4), 5, np.int32)
    d, _ = expected_tile(a, b, c, -3, 7, slice(0, 4), slice(0, 4), np.zeros((4, 4), np.int32), C.sint32)
    ref = (-3 * (a.astype(np.int64) @ b.astype(np.int64)) + 7 * 5) & 0xFFFFFFFF
    assert np.array_equal(d.view(np.uint32), ref.astype(np.uint32))


def test_float16_bound_holds_for_sequential_float16_accumulation() -> None:
    """A K-loop rounding every partial sum to float16 (the worst order) stays inside the bound."""
    rng = np.random.default_rng(1)
    a = (rng.integers(-16, 17, size=(16, 96)) / 8).astype(np.float16)
    b = (rng.integers(-16, 17, size=(96, 16)) / 8).astype(np.float16)
    c = rng.integers(-8, 9, size=(16, 16)).astype(np.float16)
    d, tol = expected_tile(a, b, c, 0.5, -2.0, slice(0, 16), slice(0, 16), np.zeros((16, 16), np.float16), C.float16)
    acc = np.zeros((16, 16), np.float16)
    for k in range(96):
        acc = (acc + np.outer(a[:, k], b[k]).astype(np.float16)).astype(np.float16)
    got = (np.float16(0.5) * acc + np.float16(-2.0) * c).astype(np.float16).astype(np.float64)
    exact = 0.5 * (a.astype(np.float64) @ b.astype(np.float64)) - 2.0 * c.astype(np.float64)
    assert (np.abs(got - exact) <= tol).all()
    assert (tol < 0.2 * np.abs(exact).max() + 1).all()  # not vacuous


@given(FAMILY.cases(StrategyOptions(profile=PROFILE)))
def test_cases_are_valid(c: GemmCase) -> None:
    for mt in c.shader.matrices():
        assert PROFILE.supports_matrix(mt) is None
    assert FAMILY.case_from_json(c.to_json()) == c
    assert c.ty < c.m_tiles and c.tx < c.n_tiles


def test_no_workgroup_scope_without_the_feature() -> None:
    prof = default_profile()
    prof.features["cooperativeMatrixWorkgroupScope"] = 0

    @given(FAMILY.cases(StrategyOptions(profile=prof)))
    @settings(max_examples=30)
    def check(c: GemmCase) -> None:
        assert c.shader.scope is Scope.Subgroup

    check()


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(FAMILY.strata()).flatmap(lambda s: FAMILY.variants(StrategyOptions(), **s)))
def test_variants_compile_and_validate(v: GemmVariant) -> None:
    validate_spirv(compile_glsl(v.glsl(), v.id))
