"""Oracle properties from SPV_NV_cooperative_vector (OpCooperativeVectorMatrixMulAddNV text)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ctsgen.ops import coopvec as oracle
from ctsgen.oracle.numeric import accumulate_blocks_f16
from ctsgen.families.coopvec.variant import CoopVecVariant
from ctsgen.ops.coopvec_matrix import ceil_to, outer_terms
from ctsgen.families.coopvec.data import case_data
from ctsgen.families.coopvec.case import CoopVecCase
from ctsgen.model.types import CoopVecType as T

RNG = np.random.default_rng(7)


def test_identity_matrix_returns_the_converted_input() -> None:
    x = np.array([[1.5, -2.0, 0.25]])
    assert np.array_equal(oracle.matmul(x, np.eye(3), None, T.float16), x.astype(np.float16))


def test_linear_in_the_bias() -> None:
    x = RNG.integers(-128, 128, (4, 5))
    w = RNG.integers(-128, 128, (3, 5))
    b = RNG.integers(-1000, 1000, 3)
    y0 = oracle.matmul(x, w, None, T.sint32).astype(np.int64)
    assert np.array_equal(oracle.matmul(x, w, b, T.sint32).astype(np.int64), y0 + b)


def test_transpose_equivalence_through_the_variant() -> None:
    """A transposed K x M stored matrix gives the same result as its M x K transpose untransposed."""
    v = CoopVecVariant("matmul", T.float16, T.float16, T.float16, T.float16, T.float16, 2, True, 3, 5)
    stored = RNG.normal(size=(5, 3)).astype(np.float16)
    buf = stored.view(np.uint8).ravel()
    assert np.array_equal(v.read_matrix(buf, 0, 0), stored.T.astype(np.float64))


def test_int_accumulation_wraps_like_int64_reduced_mod_2_32() -> None:
    """"Integer operations ... at the precision of the Result Type and are exact (with the usual wrapping rules)"."""
    x = np.array([[127, 127]])
    w = np.array([[127, 127]])
    b = np.array([2**31 - 1])
    got = oracle.matmul(x, w, b, T.sint32)
    exact = 127 * 127 * 2 + 2**31 - 1
    assert int(got[0, 0]) == ((exact + 2**31) % 2**32) - 2**31 < 0


def test_conversions_saturate_and_round_to_nearest_even() -> None:
    assert oracle.convert_input(np.array([300, -300, 5], np.int32), T.sint32, T.sint8).tolist() == [127, -128, 5]
    assert oracle.convert_input(np.array([-7, 300], np.int32), T.sint32, T.uint8).tolist() == [0, 255]
    assert oracle.convert_input(np.array([2.5, 3.5, -0.5, 127.5, -1e9], np.float32), T.float32,
                                T.sint8).tolist() == [2, 4, 0, 127, -128]
    assert oracle.convert_input(np.array([-1], np.int8), T.sint8, T.uint8).tolist() == [0]


def test_packed_int8_lowest_component_in_lowest_bits() -> None:
    word = np.array([0x80FF0201], np.uint32)
    assert oracle.convert_input(word, T.uint32, T.sint8packed).tolist() == [1, 2, -1, -128]
    assert oracle.convert_input(word, T.uint32, T.uint8packed).tolist() == [1, 2, 255, 128]


@pytest.mark.parametrize("t", [T.floate4m3, T.floate5m2, T.float16])
def test_fp8_edge_values_convert_like_ml_dtypes(t: T) -> None:
    fi = ml_dtypes.finfo(t.dtype)
    edges = np.array([float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal), -float(fi.max)])
    got = oracle.convert_input(edges.astype(np.float16), T.float16, t)
    assert np.array_equal(got, edges.astype(t.dtype).astype(np.float64))


def test_float_results_stay_within_their_derived_tolerance_and_well_conditioned() -> None:
    """The data rule: S <= 4 |y| wherever the tolerance is proportional to S, so the bound
    stays within 4 gamma_r(u) |y| (r roundings) plus the oracle's half ulp."""
    v = CoopVecVariant("matmuladd", T.float16, T.floate4m3, T.floate4m3, T.float16, T.float16, 2, False, 16, 64)
    d = case_data(CoopVecCase(v, 0, 0, 16, seed=3, values="edges"))
    tol, exp = d.tolerance[3], d.expected[3].astype(np.float64)
    used = tol > 0
    r = oracle.accumulation_roundings(64, bias=True)
    u = 2.0**-11
    assert (tol[used] <= (4.01 * oracle.gamma(r, u) + 1.01 * u) * np.abs(exp[used]) + r * 2.0**-24).all()


@pytest.mark.parametrize("k", [1, 15, 16, 17, 100, 512])
def test_tolerance_covers_fp16_accumulation_per_block_in_any_block_order(k: int) -> None:
    """Every block order of the blocked fp16 model, and binary32 accumulation, stay within the bound."""
    x = RNG.uniform(0, 2, (32, k)).astype(np.float16).astype(np.float64)
    w = RNG.uniform(-0.5, 2, (8, k)).astype(np.float16).astype(np.float64)
    b = RNG.uniform(-1, 1, 8).astype(np.float16).astype(np.float64)
    exact = x @ w.T + b
    tol = oracle.matmul_tolerance(x, w, b, T.float16)
    blocks = -(-k // oracle.ACCUMULATION_BLOCK)
    for order in (np.arange(blocks), np.arange(blocks)[::-1], RNG.permutation(blocks)):
        dev = accumulate_blocks_f16(x, w, b, oracle.ACCUMULATION_BLOCK, order)
        assert (np.abs(dev - exact.astype(np.float16)) <= tol).all()
    f32 = (x.astype(np.float32) @ w.T.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    assert (np.abs(f32 - exact.astype(np.float16)) <= tol).all()


def test_per_product_fp16_rounding_exceeds_the_model_at_large_k() -> None:
    """The bound is not vacuous: rounding to fp16 after every product (block 1) is caught at K 512."""
    x = np.full((1, 512), 1.0)
    w = np.full((1, 512), 2.0**-12 + 2.0**-20)  # each add to a sum >= 1 is below half an fp16 ulp
    w[0, 0] = 1.0
    dev = accumulate_blocks_f16(x, w, None, 1, np.arange(512))
    exact = x @ w.T
    assert (np.abs(dev - exact.astype(np.float16)) > oracle.matmul_tolerance(x, w, None, T.float16)).all()


@pytest.mark.parametrize("op,m,k", [("matmul", 16, 512), ("matmuladd", 40, 96), ("matmuladd", 1, 1)])
def test_grid_data_are_exact_under_fp16_rounding_after_every_product(op: str, m: int, k: int) -> None:
    """``grid`` values: an accumulator rounded to fp16 after every single add, in reverse order,
    still lands on the expected value exactly, so the zero tolerance is sound."""
    v = CoopVecVariant(op, T.float16, T.float16, T.float16, T.float16, T.float16, 0, False, m, k)
    for seed in range(5):
        case = CoopVecCase(v, 0, ceil_to(k * 2, 16), 0, seed=seed, values="grid")
        d = case_data(case)
        assert not np.nan_to_num(d.tolerance[3]).any()  # 0 for the results (NaN: the padding, bit for bit)
        x = v.input_vectors(d.initial[0], 0)
        w = v.read_matrix(d.initial[1], 0, case.matrixStride)
        b = v.read_bias(d.initial[2], 0)
        dev = accumulate_blocks_f16(x[:, ::-1], w[:, ::-1], b, 1, np.arange(k))
        exp = d.expected[3].reshape(32, -1)[:, :m].astype(np.float64)
        assert np.array_equal(dev, exp)
        assert np.count_nonzero(w) > 0


def test_grid_training_data_accumulate_exactly_in_every_order() -> None:
    for op, m in (("outer_product", 8), ("reduce_sum", 1)):
        v = CoopVecVariant(op, T.float16, T.float16, T.float16, T.float16, T.float16, 3 if m > 1 else 0, False, m, 64)
        d = case_data(CoopVecCase(v, 0, 0, 0, seed=1, values="grid"))
        assert not any(t.any() for t in d.tolerance if t is not None)


def test_special_values_give_signed_infinities_and_no_nan() -> None:
    """Invocation 0 has +Inf, 1 has -Inf in one component: every row is +-Inf with the sign of its
    weight (weights are nonzero), IEEE 754 as Vulkan's precision rules require for infinities;
    invocation 2 (max normals) overflows the same way in every accumulation order."""
    v = CoopVecVariant("matmuladd", T.float16, T.float16, T.float16, T.float16, T.float16, 0, False, 8, 24)
    for seed in range(5):
        d = case_data(CoopVecCase(v, 0, 48, 0, seed=seed, values="special"))
        y = d.expected[3].reshape(32, -1)[:, :8].astype(np.float64)
        x = v.input_vectors(d.initial[0], 0)
        w = v.read_matrix(d.initial[1], 0, 48)
        k0 = int(np.flatnonzero(np.isinf(x[0]))[0])
        assert np.array_equal(y[0], np.sign(w[:, k0]) * np.inf)
        assert np.isinf(y[1]).all() and not np.isnan(y).any()
        assert np.isfinite(y[3:]).all()
        b = v.read_bias(d.initial[2], 0)
        with np.errstate(all="ignore"):  # fp16 accumulation in any block order overflows to the same infinities
            for order in (np.arange(2), np.arange(2)[::-1]):
                dev = accumulate_blocks_f16(x[:3], w, b, oracle.ACCUMULATION_BLOCK, order)
                assert np.array_equal(np.isinf(dev), np.isinf(y[:3])) and (np.sign(dev) == np.sign(y[:3])).all()


def test_special_values_are_refused_for_integer_paths() -> None:
    v = CoopVecVariant("matmul", T.sint8, T.sint8, T.sint8, T.sint32, T.sint32, 0, False, 4, 4)
    with pytest.raises(ValueError, match="special"):
        CoopVecCase(v, 0, 16, 0, values="special")


def test_cases_written_before_values_existed_still_load() -> None:
    v = CoopVecVariant("matmul", T.float16, T.float16, T.float16, T.float16, T.float16, 0, False, 4, 4)
    o = CoopVecCase(v, 0, 16, 0, seed=2).to_json()
    del o["values"]
    assert CoopVecCase.from_json({**o, "edges": True}).values == "edges"
    assert CoopVecCase.from_json({**o, "edges": False}).values == "random"


def test_accumulation_tolerance_covers_every_order() -> None:
    init = np.full(4, 1.0, np.float16)
    terms = RNG.uniform(0.1, 2, (32, 4)).astype(np.float16)
    fwd = oracle.accumulate_f16(init, terms).astype(np.float64)
    rev = oracle.accumulate_f16(init, terms[::-1]).astype(np.float64)
    assert (np.abs(fwd - rev) <= oracle.accumulate_tolerance(init, terms, False)).all()


def _rounded_after_every_add(initial: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """The fp16 atomic adds one at a time: a binary32 add, rounded to fp16."""
    acc = initial.astype(np.float16)
    for t in terms:
        acc = (acc.astype(np.float32) + t.astype(np.float32)).astype(np.float16)
    return acc


def test_f16_grid_rounding_is_the_conversion_at_every_tie_and_its_neighbours() -> None:
    # every binary32 exponent up to fp16's largest binade, every fp16 significand above it, and low
    # bits at, just below and just above the halfway point (and zero and all ones), both signs
    exponent = np.arange(0, 143, dtype=np.uint32)[:, None, None] << 23
    high = np.arange(1024, dtype=np.uint32)[None, :, None] << 13
    low = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF], dtype=np.uint32)[None, None, :]
    bits = (exponent | high | low).ravel()
    s = np.concatenate([bits, bits | np.uint32(0x80000000)]).view(np.float32)
    s = s[np.abs(s) < oracle.F16_ROUNDS_TO_INF]  # the conversion overflows from there on: not the grid's domain
    out, scratch = np.empty_like(s), np.empty(s.shape, np.uint32)
    oracle.round_to_f16_grid(s, out, scratch)
    assert np.array_equal(out.view(np.uint32), s.astype(np.float16).astype(np.float32).view(np.uint32))


def test_f16_widening_table_is_the_conversion_for_every_bit_pattern() -> None:
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)
    assert np.array_equal(oracle.widen_to_f32(h).view(np.uint32), h.astype(np.float32).view(np.uint32))
    assert np.array_equal(oracle.widen_to_f32(h[:, ::3]).view(np.uint32), h[:, ::3].astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("scale", [2.0**-20, 2.0**-12, 1.0, 64.0])
def test_large_accumulations_round_after_every_add(scale: float) -> None:
    side = int(np.ceil(np.sqrt(oracle.F16_GRID_MIN_ELEMENTS)))
    init = (RNG.standard_normal((side, side)) * scale).astype(np.float16)
    terms = (RNG.standard_normal((24, side, side)) * scale * RNG.choice([0, 2.0**-8, 1], (24, side, side)))
    terms = terms.astype(np.float16)
    init[0, :4], terms[:, 0, :2] = -0.0, -0.0  # -0 + -0 stays -0; -0 + +0 is +0
    terms[:, 0, 3] = 0.0
    got = oracle.accumulate_f16(init, terms)
    assert np.array_equal(got.view(np.uint16), _rounded_after_every_add(init, terms).view(np.uint16))
    assert np.signbit(got[0, :2]).all() and not np.signbit(got[0, 3])


@pytest.mark.parametrize("special", [np.inf, np.nan, 30000.0])
def test_accumulations_that_may_overflow_round_after_every_add(special: float) -> None:
    side = int(np.ceil(np.sqrt(oracle.F16_GRID_MIN_ELEMENTS)))
    init = np.full((side, side), 30000.0, np.float16)
    terms = RNG.uniform(-1, 1, (8, side, side)).astype(np.float16)
    terms[2:4, :3, :3] = special  # 30000 three times over overflows fp16 for good
    terms[5, :3, :3] = -special
    with np.errstate(over="ignore", invalid="ignore"):
        got, want = oracle.accumulate_f16(init, terms), _rounded_after_every_add(init, terms)
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    assert not np.isfinite(got[:3, :3]).any() and np.isfinite(got[3:]).all()


@pytest.mark.parametrize("largest", [2.0**-6, 1.0, 300.0])
def test_outer_terms_are_the_binary32_products_rounded_to_fp16(largest: float) -> None:
    # products below fp16's subnormals, on ties, and (for 300 * 300) past its largest finite value
    a = (RNG.uniform(-1, 1, (8, 40)) * largest).astype(np.float16)
    b = (RNG.uniform(-1, 1, (8, 40)) * largest).astype(np.float16)
    a[0, :2], b[0, :2] = -0.0, 2.0**-24
    with np.errstate(over="ignore"):
        want = (a.astype(np.float32)[:, :, None] * b.astype(np.float32)[:, None, :]).astype(np.float16)
        got = outer_terms(a, b)
    assert got.size >= oracle.F16_GRID_MIN_ELEMENTS
    assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))
