"""Oracle properties from the SPIR-V / GLSL.std.450 definitions and the Vulkan precision table,
checked against numpy / ml_dtypes and hand-worked values (not against the oracle's own formulas)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ctsgen.ops import coopvec_elementwise as oracle
from ctsgen.ops.coopvec_elementwise_ops import FLOAT_TYPES, INT_TYPES, Op
from ctsgen.model.types import ComponentType as C
from ctsgen.model.types import CoopVecType as T
from ctsgen.oracle import numeric
from ctsgen.execute.judge import judge_buffer

NAN, INF = float("nan"), float("inf")
F16 = T.float16


def run(op: Op, *vals: object, t: T = F16, r: T | None = None, s: float = 0.0) -> np.ndarray:
    operands = [np.asarray([v], dtype=t.dtype).reshape(1, -1) for v in vals]
    return oracle.apply(op, operands, s, t, r or t)[0]


def tol(op: Op, *vals: object, t: T = F16, r: T | None = None, s: float = 0.0, ieee: bool = False) -> np.ndarray:
    """(below, above) of each component: 2 x N."""
    operands = [np.asarray([v], dtype=t.dtype).reshape(1, -1) for v in vals]
    e = oracle.apply(op, operands, s, t, r or t)
    return oracle.tolerance(op, operands, s, t, r or t, e, ieee)[:, 0]


def admits(sides: np.ndarray, expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Whether each actual value lies within the two-sided tolerance of the expected one."""
    d = np.asarray(actual, dtype=np.float64) - np.asarray(expected, dtype=np.float64)
    return np.where(d < 0, -d <= sides[0], d <= sides[1])


# -- NaN rules (GLSL.std.450) ----------------------------------------------------
def test_nmin_nmax_return_the_operand_that_is_not_nan() -> None:
    x = [NAN, 2.0, NAN, -INF]
    y = [1.5, NAN, NAN, NAN]
    assert run(Op.nmin, x, y).tolist()[:2] == [1.5, 2.0] and np.isnan(run(Op.nmin, x, y)[2])
    assert run(Op.nmax, x, y).tolist()[:2] == [1.5, 2.0] and run(Op.nmax, x, y)[3] == -INF


def test_nclamp_of_nan_is_the_lower_bound() -> None:
    """NClamp = NMin(NMax(x, minVal), maxVal): NMax(NaN, lo) = lo."""
    assert run(Op.nclamp, [NAN, 5.0], [-1.0, -1.0], [1.0, 1.0]).tolist() == [-1.0, 1.0]


def test_fmin_fmax_pick_by_comparison() -> None:
    """FMin: y if y < x, otherwise x; FMax: y if x < y, otherwise x (hand-worked, incl. infinities)."""
    assert run(Op.fmin, [1.0, 3.0, -INF], [2.0, -3.0, 0.0]).tolist() == [1.0, -3.0, -INF]
    assert run(Op.fmax, [1.0, 3.0, -INF], [2.0, -3.0, 0.0]).tolist() == [2.0, 3.0, 0.0]


@given(hnp.arrays(np.float32, (3, 8), elements=st.floats(-1e6, 1e6, width=32)))
def test_clamp_is_min_of_max(x: np.ndarray) -> None:
    lo, hi = np.minimum(x[1], x[2]), np.maximum(x[1], x[2])
    for op in (Op.fclamp, Op.nclamp):
        got = oracle.apply(op, [x[:1], lo[None], hi[None]], 0, T.float32, T.float32)
        assert np.array_equal(got[0], np.minimum(np.maximum(x[0], lo), hi))


@pytest.mark.parametrize("t", INT_TYPES)
def test_integer_clamp_is_min_of_max(t: T) -> None:
    rng = np.random.default_rng(1)
    info = np.iinfo(t.dtype)
    x = rng.integers(info.min, info.max, (3, 64), endpoint=True).astype(t.dtype)
    lo, hi = np.minimum(x[1], x[2]), np.maximum(x[1], x[2])
    got = oracle.apply(Op.iclamp, [x[:1], lo[None], hi[None]], 0, t, t)[0]
    assert np.array_equal(got, np.minimum(np.maximum(x[0], lo), hi))


def test_step_is_one_at_the_edge_and_zero_just_below() -> None:
    edge = np.float16(0.75)
    below = np.nextafter(edge, np.float16(-INF))
    assert run(Op.step, [edge, edge, edge], [edge, below, INF]).tolist() == [1.0, 0.0, 1.0]


# -- integer rules ---------------------------------------------------------------
def test_integer_arithmetic_wraps() -> None:
    assert run(Op.iadd, 127, 1, t=T.sint8).tolist() == [-128]
    assert run(Op.isub, 0, 1, t=T.uint32).tolist() == [2**32 - 1]
    assert run(Op.imul, 2**31 - 1, 2**31 - 1, t=T.sint32).tolist() == [1]  # (2^31 - 1)^2 mod 2^32
    assert run(Op.imul, 2**32 - 1, 2**32 - 1, t=T.uint32).tolist() == [1]
    assert run(Op.ineg, -128, t=T.sint8).tolist() == [-128]
    assert run(Op.ineg, 1, t=T.uint8).tolist() == [255]


def test_signed_division_rounds_toward_zero() -> None:
    """OpSDiv / OpUDiv (the quotient OpSRem's remainder, signed like Operand 1, implies)."""
    assert run(Op.idiv, [-7, 7, -7, 7, -128], [2, -2, -2, 2, 1], t=T.sint8).tolist() == [-3, -3, 3, 3, -128]
    assert run(Op.idiv, [250, 7], [7, 250], t=T.uint8).tolist() == [35, 0]


@pytest.mark.parametrize("t", INT_TYPES)
def test_shifts_match_numpy_with_explicit_masking(t: T) -> None:
    rng = np.random.default_rng(2)
    info = np.iinfo(t.dtype)
    a = rng.integers(info.min, info.max, (1, 200), endpoint=True).astype(t.dtype)
    b = rng.integers(0, t.bits, (1, 200)).astype(t.dtype)
    mask = (1 << t.bits) - 1
    wide = a.astype(np.int64)
    left = (wide << b.astype(np.int64)) & mask
    assert np.array_equal(oracle.apply(Op.shl, [a, b], 0, t, t).astype(np.int64) & mask, left)
    if t.is_signed:
        right = wide >> b.astype(np.int64)  # arithmetic: sign bits shifted in
    else:
        right = (wide & mask) >> b.astype(np.int64)
    assert np.array_equal(oracle.apply(Op.shr, [a, b], 0, t, t).astype(np.int64), right)


def test_shift_edges() -> None:
    assert run(Op.shr, [-128, 64], [7, 7], t=T.sint8).tolist() == [-1, 0]
    assert run(Op.shr, [2**31], [31], t=T.uint32).tolist() == [1]
    assert run(Op.shl, [1], [31], t=T.sint32).tolist() == [-2**31]


def test_bitwise_ops() -> None:
    assert run(Op.band, 0b1100, 0b1010, t=T.uint8).tolist() == [0b1000]
    assert run(Op.bor, 0b1100, 0b1010, t=T.uint8).tolist() == [0b1110]
    assert run(Op.bxor, 0b1100, 0b1010, t=T.uint8).tolist() == [0b0110]
    assert run(Op.bnot, 0, t=T.sint32).tolist() == [-1]


# -- conversions -------------------------------------------------------------------
def test_float_to_int_rounds_toward_zero() -> None:
    v = [127.875, -128.875, -0.75, 2.75, -2.75, 0.5]
    assert run(Op.convert, v, t=F16, r=T.sint8).tolist() == [127, -128, 0, 2, -2, 0]
    assert run(Op.convert, [255.875, -0.875], t=F16, r=T.uint8).tolist() == [255, 0]
    assert run(Op.convert, [2147483520.0, -2.0**31], t=T.float32, r=T.sint32).tolist() == [2147483520, -2**31]


def test_integer_conversions_extend_by_the_source_and_truncate() -> None:
    assert run(Op.convert, [-1, -128], t=T.sint8, r=T.uint32).tolist() == [0xFFFFFFFF, 0xFFFFFF80]
    assert run(Op.convert, [255], t=T.uint8, r=T.sint32).tolist() == [255]
    assert run(Op.convert, [0x1FF, 0x80], t=T.uint32, r=T.sint8).tolist() == [-1, -128]
    assert run(Op.convert, [-1], t=T.sint32, r=T.uint32).tolist() == [0xFFFFFFFF]


@pytest.mark.parametrize("t, vals, rte", [
    # ties go to even; 65503 is beyond the last fp16 spacing below 65504 (32)
    (T.float32, [1.0 + 2**-11, 1.0 + 3 * 2**-12, 65504.0, 2.0**-14, 2049.0, 4097.0],
     [1.0, 1.0 + 2**-10, 65504.0, 2.0**-14, 2048.0, 4096.0]),
    (T.sint32, [2049, 4097, -65504, 3, 65503], [2048.0, 4096.0, -65504.0, 3.0, 65504.0]),
    (T.uint32, [2051, 65503], [2052.0, 65504.0]),
])
def test_conversions_to_fp16_round_to_nearest_even_within_one_spacing(t: T, vals: list, rte: list) -> None:
    """The expected value is the hand-worked round-to-nearest-even result; the bound lets the
    other neighbour pass where (and only where) the conversion is inexact."""
    got = run(Op.convert, vals, t=t, r=F16)
    assert got.tolist() == rte
    bound = tol(Op.convert, vals, t=t, r=F16)
    exact = np.asarray(vals, dtype=np.float64)
    assert ((bound.sum(axis=0) == 0) == (got.astype(np.float64) == exact)).all()
    lower, upper = numeric.neighbours(exact, C.float16)
    assert admits(bound, got, lower).all() and admits(bound, got, upper).all()


def test_faithful_conversion_rejects_the_value_beyond_the_expected_one() -> None:
    """Decision "faithful-rounding": float32 1 + 3 * 2^-12 lies between fp16 1 and 1 + 2^-10; RNE is
    1 + 2^-10, the other neighbour 1 passes, 1 + 2^-9 (one spacing the far way) fails (a symmetric
    one-ulp bound around the RNE value admitted it)."""
    bound = tol(Op.convert, [1.0 + 3 * 2**-12], t=T.float32, r=F16)
    e = np.array([1.0 + 2**-10])
    assert admits(bound, e, [1.0]).all() and admits(bound, e, e).all()
    assert not admits(bound, e, [1.0 + 2**-9]).any()


# -- precision bounds ------------------------------------------------------------------
def test_correctly_rounded_allows_either_neighbour_and_no_more() -> None:
    """Vulkan "correctly rounded": the value closest to and no less than x, or no greater."""
    a, b = 1.0, 2.0**-11 + 2.0**-13  # 1 + 0.625 ulp: neighbours 1 and 1 + 2^-10
    bound = tol(Op.fadd, a, b)[:, 0]
    e = float(run(Op.fadd, a, b)[0])
    assert e == 1.0 + 2**-10 and bound.tolist() == [2**-10, 0.0]
    assert admits(bound, e, 1.0) and not admits(bound, e, 1.0 - 2**-10)
    assert not admits(bound, e, 1.0 + 2**-9)  # the far side of the RNE value
    assert tol(Op.fadd, 1.0, 2.0**-10)[:, 0].tolist() == [0, 0]  # exact
    assert tol(Op.fadd, a, b, ieee=True)[:, 0].tolist() == [0, 0]  # RoundingModeRTE


def test_vulkan_ulp_at_a_power_of_two_is_the_spacing_below() -> None:
    assert oracle.vulkan_ulp(np.array([1.0, 1.5, 0.0]), F16).tolist() == [2**-11, 2**-10, 2**-24]


def test_division_bound_is_two_and_a_half_ulp() -> None:
    x = 1.0 / 3.0
    e = float(run(Op.fdiv, 1.0, 3.0, t=T.float32)[0])
    below, above = tol(Op.fdiv, 1.0, 3.0, t=T.float32)[:, 0]
    assert below == pytest.approx(2.5 * 2**-25 + (e - x)) and above == pytest.approx(2.5 * 2**-25 - (e - x))


def test_vector_times_scalar_is_a_broadcast_multiply() -> None:
    rng = np.random.default_rng(3)
    a = rng.uniform(-8, 8, (4, 17)).astype(np.float16)
    s = np.float16(-1.375)
    got = oracle.apply(Op.vts, [a], float(s), F16, F16)
    assert np.array_equal(got, oracle.apply(Op.fmul, [a, np.full_like(a, s)], 0, F16, F16))
    assert np.array_equal(got, (a.astype(np.float32) * np.float32(s)).astype(np.float16))


@pytest.mark.parametrize("t", FLOAT_TYPES)
def test_fma_bound_covers_fused_and_unfused_evaluation(t: T) -> None:
    rng = np.random.default_rng(4)
    a, b, c = (rng.uniform(-64, 64, (1, 500)).astype(t.dtype) for _ in range(3))
    e = oracle.apply(Op.fma, [a, b, c], 0, t, t)
    bound = oracle.tolerance(Op.fma, [a, b, c], 0, t, t, e, False)
    unfused = ((a * b).astype(t.dtype) + c).astype(np.float64)
    fused = (a.astype(np.float64) * b + c).astype(t.dtype).astype(np.float64)
    assert admits(bound, e, unfused).all() and admits(bound, e, fused).all()


MANT = {T.float16: (10, -14), T.float32: (23, -126)}


def exact_neighbours(q: Fraction, t: T) -> tuple[Fraction, Fraction]:
    """The greatest value of ``t`` <= q and the least >= q, by hand (finite range)."""
    mant, emin = MANT[t]
    a = abs(q)
    e = emin
    if a:
        e = a.numerator.bit_length() - a.denominator.bit_length()
        e = max(e - 1 if Fraction(2) ** e > a else e, emin)
    sp = Fraction(2) ** (e - mant)
    lo, hi = (q // sp) * sp, -((-q) // sp) * sp
    return lo, hi


def inherited_fma_set(a: float, b: float, c: float, t: T) -> tuple[Fraction, Fraction]:
    """Vulkan's "Inherited From" definition for fma = OpFMul then OpFAdd, in fractions: the formula's
    permitted values (each step either neighbour), Fmin / Fmax, x exact, [x - E, x + E]."""
    x = Fraction(a) * Fraction(b) + Fraction(c)
    vals = [r for pr in exact_neighbours(Fraction(a) * Fraction(b), t) for r in exact_neighbours(pr + Fraction(c), t)]
    e = max(abs(x - min(vals)), abs(x - max(vals)))
    return x - e, x + e


def window(centre: float, t: T, k: int = 12) -> np.ndarray:
    """The 2k + 1 values of ``t`` around ``centre`` (float64)."""
    v, out = t.dtype.type(centre), []
    lo = hi = v
    for _ in range(k):
        lo, hi = np.nextafter(lo, t.dtype.type(-np.inf)), np.nextafter(hi, t.dtype.type(np.inf))
        out += [lo, hi]
    return np.array(sorted(out + [v]), np.float64)


def assert_admits_exactly(op: Op, vals: tuple, t: T, lo: Fraction, hi: Fraction) -> None:
    operands = [np.asarray([[v]], dtype=t.dtype) for v in vals]
    e = oracle.apply(op, operands, 0, t, t)
    sides = oracle.tolerance(op, operands, 0, t, t, e, False)[:, 0]
    cand = window(float(e[0, 0]), t)
    want = [lo <= Fraction(float(v)) <= hi for v in cand]
    assert admits(sides, e[0], cand).tolist() == want, (vals, [v for v, w in zip(cand, want) if w])


def test_fma_admits_the_symmetric_inherited_interval() -> None:
    """Vulkan's "Inherited From": E = max(|x - Fmin|, |x - Fmax|) over the OpFMul-then-OpFAdd
    results, anything in [x - E, x + E]. Hand-worked:

    * fp16 fma(2^-6, 2^-6, 1): x = 1 + 2^-12; Fmin = 1, Fmax = 1 + 2^-10, E = 3 * 2^-12, so
      [1 - 2^-11, 1 + 2^-10]: 0x3bff = 1 - 2^-11 passes, 0x3bfe = 1 - 2^-10 does not;
    * fp32 fma(3, 0x3eaaaaab, -1): 3 * 0x3eaaaaab = 1 + 2^-25, x = 2^-25; Fmin = 0, Fmax = 2^-23,
      E = 3 * 2^-25, so [-2^-24, 2^-23]: -2^-24 passes, the value below it does not;
    * fp32 a = b = 1 + 2^-23, c = -(1 + 2^-22): x = 2^-46; Fmin = 0, Fmax = 2^-23, so
      [-2^-23 + 2^-45, 2^-23];
    * fp32 a = 2^-6 (1 + 2^-23), b = 2^-6 (1 - 2^-23), c = 1: x = 1 + 2^-12 - 2^-58, not a float64;
      Fmin = 1 + 2^-12 - 2^-23, Fmax = 1 + 2^-12, so the upper limit 1 + 2^-12 + 2^-23 - 2^-57 lies
      just below a float32 value, which must fail (float64 alone would place the limit on it).
    Failed before: the hull [Fmin, Fmax] rejected 0x3bff and -2^-24."""
    cases = [((2.0**-6, 2.0**-6, 1.0), T.float16, Fraction(1) - Fraction(1, 2**11), Fraction(1) + Fraction(1, 2**10)),
             ((3.0, float(np.uint32(0x3EAAAAAB).view(np.float32)), -1.0), T.float32,
              -Fraction(1, 2**24), Fraction(1, 2**23)),
             ((1 + 2.0**-23, 1 + 2.0**-23, -(1 + 2.0**-22)), T.float32,
              -Fraction(1, 2**23) + Fraction(1, 2**45), Fraction(1, 2**23)),
             ((2.0**-6 * (1 + 2.0**-23), 2.0**-6 * (1 - 2.0**-23), 1.0), T.float32,
              1 + Fraction(1, 2**12) - Fraction(1, 2**23),
              1 + Fraction(1, 2**12) + Fraction(1, 2**23) - Fraction(1, 2**57))]
    for vals, t, lo, hi in cases:
        assert inherited_fma_set(*vals, t) == (lo, hi)
        assert_admits_exactly(Op.fma, vals, t, lo, hi)
    e = run(Op.fma, 2.0**-6, 2.0**-6, 1.0)
    sides = tol(Op.fma, 2.0**-6, 2.0**-6, 1.0)
    assert admits(sides, e, [np.uint16(0x3BFF).view(np.float16)]).all()
    assert not admits(sides, e, [np.uint16(0x3BFE).view(np.float16)]).any()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([T.float16, T.float32]), st.data())
def test_fma_bound_is_the_inherited_interval_in_exact_arithmetic(t: T, data: st.DataObject) -> None:
    """Operands as the family draws them (magnitudes in [2^-6, 2^6), random sign, full mantissa):
    the oracle admits exactly the values of [x - E, x + E] that fractions give."""
    mant, _ = MANT[t]

    def operand() -> float:
        m = data.draw(st.integers(2**mant, 2**(mant + 1) - 1))
        return data.draw(st.sampled_from([-1, 1])) * m * 2.0 ** (data.draw(st.integers(-6, 5)) - mant)

    vals = (operand(), operand(), operand())
    assert_admits_exactly(Op.fma, vals, t, *inherited_fma_set(*vals, t))


def test_exp_and_log_are_inverse_within_their_bounds() -> None:
    x = np.linspace(-6, 6, 97).astype(np.float16)[None]
    ex = oracle.apply(Op.exp, [x], 0, F16, F16)
    lx = oracle.apply(Op.log, [ex], 0, F16, F16)
    t_exp = oracle.tolerance(Op.exp, [x], 0, F16, F16, ex, False)
    t_log = oracle.tolerance(Op.log, [ex], 0, F16, F16, lx, False)
    # log(exp(x)) - x: log's own error plus exp's error, scaled by d log / dy = 1 / y, plus x's rounding
    err = np.abs(lx.astype(np.float64) - x)
    assert (err <= t_log.max(axis=0) + t_exp.max(axis=0) / ex.astype(np.float64) + 2**-11 * np.abs(x)).all()


def test_exp_bound_grows_with_the_argument() -> None:
    """(1 + 2|x|) ULP for fp16: exp(4) may be 9 ULP off, exp(0) = 1 one ULP (the spacing below 1):
    1 - 2^-11 passes, and nothing above 1 does (1 + 2^-10 is two ULPs away)."""
    assert tol(Op.exp, 0.0)[:, 0].tolist() == [2**-11, 0.0]
    y = np.exp(4.0)
    e = float(np.float16(y))
    below, above = tol(Op.exp, 4.0)[:, 0]
    assert below == pytest.approx(9 * 2**-5 + (e - y)) and above == pytest.approx(9 * 2**-5 - (e - y))


def test_exp_of_a_tiny_positive_argument_uses_the_ulp_above_one() -> None:
    """float32 exp(2^-60) = 1 + 2^-60 (1.0 in float64): its ULP is 2^-23 (binade [1, 2)), so
    1 + 3 * 2^-23 is within Vulkan's (3 + 2|x|) ULP. Rejected before: the float64 value 1.0 sat on
    the power of two and took the spacing below (2^-24)."""
    sides = tol(Op.exp, 2.0**-60, t=T.float32)
    assert admits(sides, [1.0], [1.0 + 3 * 2**-23]).all()
    assert not admits(sides, [1.0], [1.0 + 4 * 2**-23]).any()


def test_tanh_interval_is_symmetric_around_the_exact_value() -> None:
    """Tanh is "inherited from sinh() / cosh()": [y - E, y + E] around the exact y = tanh(x)
    (mpmath), so below and above the exact value the bound reaches equally far. fp16 x = 0xc304
    (-3.5078125): 0xbbd5 (-0.97900390625), which the sinh / cosh chain allows, passes. Failed
    before: the interval lay 0.019445 below and 0.019160 above tanh(x) and rejected it."""
    x = np.concatenate([[np.uint16(0xC304).view(np.float16)], np.linspace(-4, 4, 33, dtype=np.float16)])[None]
    e = oracle.apply(Op.tanh, [x], 0, F16, F16)
    sides = oracle.tolerance(Op.tanh, [x], 0, F16, F16, e, False)
    lo, hi = e.astype(np.float64) - sides[0], e.astype(np.float64) + sides[1]
    for k in range(x.shape[1]):
        y = mpmath.tanh(mpmath.mpf(float(x[0, k])))
        assert abs((y - lo[0, k]) - (hi[0, k] - y)) <= 2.0**-40, float(x[0, k])
    assert admits(sides[:, :, :1], e[:, :1], [np.uint16(0xBBD5).view(np.float16)]).all()


def _f16_within(lo: mpmath.mpf, hi: mpmath.mpf) -> list[Fraction]:
    """Every fp16 value in [lo, hi], by stepping."""
    v = np.nextafter(np.float16(float(lo)), np.float16(-np.inf))
    while mpmath.mpf(float(v)) < lo:
        v = np.nextafter(v, np.float16(np.inf))
    out = []
    while mpmath.mpf(float(v)) <= hi:
        out.append(Fraction(float(v)))
        v = np.nextafter(v, np.float16(np.inf))
    return out


def _f16_either(q: Fraction) -> list[Fraction]:
    """A correctly rounded fp16 result of q: either neighbour."""
    f = np.float16(float(q))
    if Fraction(float(f)) == q:
        return [q]
    other = np.nextafter(f, np.float16(np.inf if Fraction(float(f)) < q else -np.inf))
    return [Fraction(float(f)), Fraction(float(other))]


def _mp(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def _vulkan_ulp_f16(y: mpmath.mpf) -> mpmath.mpf:
    """Vulkan's ULP for fp16: the binade's spacing, the one below at a power of two, 2^-24 at 0."""
    v = abs(y)
    if v == 0:
        return mpmath.mpf(2) ** -24
    _, e = mpmath.frexp(v)
    k = max(int(e) - 1, -14)
    sp = mpmath.mpf(2) ** (k - 10)
    return sp / 2 if v == mpmath.mpf(2) ** k and k > -14 else sp


def _tanh_by_enumeration(x: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Vulkan's tanh range in fp16, transcribed step by step with every permitted value listed:
    exp(+-x) within (1 + 2|x|) ULP, differences / sums either neighbour, times 0.5; sinh / cosh
    [s - E, s + E] over those; the quotient of every sinh / cosh pair within 2.5 ULP; tanh
    [y - E, y + E] over the quotients' Fmin / Fmax."""
    with mpmath.workprec(200):
        X = mpmath.mpf(x)
        n = 1 + 2 * abs(X)
        ep, em = mpmath.exp(X), mpmath.exp(-X)
        EP = _f16_within(ep - n * _vulkan_ulp_f16(ep), ep + n * _vulkan_ulp_f16(ep))
        EM = _f16_within(em - n * _vulkan_ulp_f16(em), em + n * _vulkan_ulp_f16(em))
        ranges = []
        for exact, combine in ((mpmath.sinh(X), lambda p, m: p - m), (mpmath.cosh(X), lambda p, m: p + m)):
            vals = [r / 2 for p in EP for m in EM for r in _f16_either(combine(p, m))]
            e = max(abs(exact - _mp(min(vals))), abs(exact - _mp(max(vals))))
            ranges.append(_f16_within(exact - e, exact + e))
        qs = [_mp(s) / _mp(c) for s in ranges[0] for c in ranges[1]]
        fmin = min(q - 2.5 * _vulkan_ulp_f16(q) for q in qs)
        fmax = max(q + 2.5 * _vulkan_ulp_f16(q) for q in qs)
        y = mpmath.tanh(X)
        e = max(abs(y - fmin), abs(y - fmax))
        return y - e, y + e


def test_tanh_interval_is_the_inherited_chain_enumerated() -> None:
    """The oracle's fp16 tanh interval holds the one enumeration gives (every permitted exp,
    sinh, cosh and quotient value listed, in fractions and mpmath) and exceeds it by float64
    widening only (1e-9 of its width)."""
    xs = [float(np.uint16(0xC304).view(np.float16)), 0.0, 2.0**-6, -0.7, 1.0, 2.5, -4.0]
    x = np.array([xs], np.float16)
    e = oracle.apply(Op.tanh, [x], 0, F16, F16)
    sides = oracle.tolerance(Op.tanh, [x], 0, F16, F16, e, False)
    for k, v in enumerate(x[0].astype(np.float64)):
        lo, hi = float(e[0, k]) - sides[0, 0, k], float(e[0, k]) + sides[1, 0, k]
        want_lo, want_hi = _tanh_by_enumeration(float(v))
        assert lo <= want_lo and hi >= want_hi, v
        assert max(want_lo - lo, hi - want_hi) <= 1e-9 * (want_hi - want_lo), v


def test_log_of_one_is_strictly_inside_the_absolute_bound() -> None:
    """log inside [0.5, 2]: "Absolute error < 2^-21" (fp16 < 2^-7), strict. log(1) = 0, so
    +-2^-21 (0x35000000 / 0xb5000000) and fp16 +-2^-7 (0x2000 / 0xa000) fail, the values just
    inside pass. Failed before: the bound itself was admitted."""
    for t, bound in ((T.float32, 2.0**-21), (F16, 2.0**-7)):
        sides = tol(Op.log, 1.0, t=t)
        inside = float(np.nextafter(t.dtype.type(bound), t.dtype.type(0)))
        assert admits(sides, [0.0], [inside, -inside]).all()
        assert not admits(sides, [0.0], [bound, -bound]).any()


def test_a_log_whose_interval_reaches_the_subnormals_may_be_flushed() -> None:
    """fp16 log(0x3bf0) = log(1 - 2^-7) = -0.0078431... (mpmath); the bound is absolute (< 2^-7), so
    the admitted interval runs up to about -0.0078431 + 0.0078125 = -3.06e-5, among fp16's
    subnormals (below 2^-14 = 6.1e-5): e.g. -515 * 2^-24. Vulkan lets a denormal result be flushed,
    so +0 and -0 pass the judge, and 2^-24 (beyond the interval, not a flush) does not. Failed
    before: +-0 passed only where the exact value itself was subnormal."""
    x = np.uint16(0x3BF0).view(np.float16).reshape(1, 1)
    y = mpmath.log(mpmath.mpf(float(x[0, 0])))
    assert -0.0078432 < y < -0.0078431 and y + mpmath.mpf(2) ** -7 < -(2.0**-15)
    e = oracle.apply(Op.log, [x], 0, F16, F16)
    sides = oracle.tolerance(Op.log, [x], 0, F16, F16, e, False)
    rule = {"rule": "tolerance"}
    got = np.array([-515 * 2.0**-24, 0.0, -0.0, 2.0**-24], np.float16)
    want, t = np.repeat(e[0], 4), np.repeat(sides[:, 0], 4, axis=1)
    assert judge_buffer(got, want, rule, t).bad.tolist() == [3]


def test_tanh_bound_covers_the_formula_evaluated_in_fp16() -> None:
    """An implementation of tanh as (e^x - e^-x) / (e^x + e^-x) in fp16 arithmetic passes."""
    x = np.linspace(-4, 4, 161).astype(np.float16)[None]
    ep, em = np.exp(x), np.exp(-x)  # numpy fp16: correctly rounded in fp16
    naive = ((ep - em) / (ep + em)).astype(np.float64)
    e = oracle.apply(Op.tanh, [x], 0, F16, F16)
    assert admits(oracle.tolerance(Op.tanh, [x], 0, F16, F16, e, False), e, naive).all()


# -- domain ----------------------------------------------------------------------
@pytest.mark.parametrize("op, vals, t, ieee", [
    (Op.idiv, ([1], [0]), T.sint32, False),
    (Op.idiv, ([-128], [-1]), T.sint8, False),
    (Op.shl, ([1], [8]), T.uint8, False),
    (Op.fmin, ([NAN], [1.0]), F16, True),
    (Op.fadd, ([INF], [1.0]), F16, False),
    (Op.fadd, ([60000.0], [60000.0]), F16, False),
    (Op.fclamp, ([0.0], [2.0], [1.0]), F16, False),
    (Op.fmul, ([2.0**-20], [1.0]), F16, False),
])
def test_undefined_or_unspecified_inputs_are_refused(op: Op, vals: tuple, t: T, ieee: bool) -> None:
    ops = [np.asarray(v, dtype=t.dtype)[None] for v in vals]
    with pytest.raises(ValueError, match="domain"):
        oracle.check_domain(op, ops, 0.0, t, t, ieee)


def test_ieee_defines_overflow_and_division_by_zero() -> None:
    ops = [np.asarray([60000.0, 1.0], np.float16)[None], np.asarray([60000.0, 2.0], np.float16)[None]]
    oracle.check_domain(Op.fadd, ops, 0.0, F16, F16, True)
    assert oracle.apply(Op.fadd, ops, 0.0, F16, F16)[0].tolist() == [INF, 3.0]
    div = [np.asarray([-3.0], np.float16)[None], np.asarray([0.0], np.float16)[None]]
    oracle.check_domain(Op.fdiv, div, 0.0, F16, F16, True)
    assert oracle.apply(Op.fdiv, div, 0.0, F16, F16)[0].tolist() == [-INF]


def test_unaligned_offsets_are_refused() -> None:
    with pytest.raises(ValueError, match="10099"):
        oracle.load(np.zeros(64, np.float16), np.asarray([8]), 4)
