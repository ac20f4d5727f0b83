"""ctsgen.oracle.propagation: each step's bound against exact rational arithmetic, on operands
anywhere within the inherited error, with every result the rounding rules allow (either
neighbour, or 0 for a subnormal). The chain as a whole: coopvec-program's test_float_domain.py."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.rounding_device import choices
from ctsgen.oracle import propagation as prop

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def _within(results: list[Fraction], oracle: float, bound: np.ndarray) -> bool:
    return all(abs(r - Fraction(oracle)) <= Fraction(float(bound)) for r in results)


def _operands(v: float, e: float, frac: float) -> list[Fraction]:
    """Device operands within e of v: both ends and one point between."""
    return [Fraction(v) - Fraction(e), Fraction(v) + Fraction(e), Fraction(v) + Fraction(e) * Fraction(frac)]


VALUES = st.floats(-300, 300, width=16, allow_subnormal=True)
ERRORS = st.floats(0, 0.5)
SCALARS = st.sampled_from([-3.0, -2.0, -1.0, 0.5, 1.0, 2.0, 3.0])


@settings(max_examples=150, deadline=None)
@given(VALUES, ERRORS, SCALARS, SCALARS, st.floats(-1, 1), st.sampled_from([F16, F32]))
def test_each_rounded_step_covers_every_allowed_result(v: float, e: float, s: float, t: float, frac: float,
                                                       dt: np.dtype) -> None:
    x = np.asarray(v, dt)
    v = float(x)
    err = np.asarray(e)
    for d in _operands(v, e, frac):
        oracle = float((np.float64(v) * s).astype(dt))
        assert _within(choices(d * Fraction(s), dt), oracle, prop.scale_step(x, err, s, oracle, dt))
        oracle = float((np.float64(v) + s).astype(dt))
        assert _within(choices(d + Fraction(s), dt), oracle, prop.add_step(x, err, s, oracle, dt))
        oracle = float((np.float64(v) * s + t).astype(dt))
        fused = choices(d * Fraction(s) + Fraction(t), dt)
        split = [r for p in choices(d * Fraction(s), dt) for r in choices(p + Fraction(t), dt)]
        assert _within(fused + split, oracle, prop.fma_step(x, err, s, t, oracle, dt))


@settings(max_examples=150, deadline=None)
@given(st.floats(-60000, 60000, width=32, allow_subnormal=True), st.floats(0, 1e-3), st.floats(-1, 1))
def test_a_narrowing_conversion_covers_every_allowed_result(v: float, e: float, frac: float) -> None:
    """float32 -> float16 (OpFConvert, correctly rounded): either neighbour of the device's operand."""
    oracle = float(np.float32(v).astype(np.float16))
    bound = prop.rounded_step(np.asarray(v), np.asarray(e), np.asarray(oracle), F16)
    assert all(_within(choices(d, F16), oracle, bound) for d in _operands(v, e, frac))


def test_exact_steps_carry_the_error_and_dot_spread_weighs_it() -> None:
    e = np.asarray([[0.5, 0.25]])
    assert np.array_equal(prop.exact_step(e), e)
    w = np.asarray([[2.0, -4.0], [0.0, 1.0]])
    assert np.array_equal(prop.dot_spread(w, e), [[2.0, 0.25]])
    assert np.array_equal(prop.dot_magnitude(w, np.asarray([[1.0, -1.0]]), e, np.asarray([1.0, -2.0])), [[9.0, 3.25]])


#: errors a bound can hold: 0, or at least far above float64's subnormals (every node's allowance
#: adds a smallest normal of its type)
BOUNDS = st.one_of(st.just(0.0), st.floats(2.0**-40, 0.5))


@settings(max_examples=100, deadline=None)
@given(VALUES, BOUNDS, VALUES, BOUNDS, st.floats(-1, 1), st.floats(-1, 1))
def test_a_product_of_two_inexact_operands_spreads_within_product_spread(x: float, ex: float, y: float, ey: float,
                                                                      fx: float, fy: float) -> None:
    spread = Fraction(float(prop.widen(prop.product_spread(x, ex, y, ey))))  # widened, as every step's bound
    exact = Fraction(x) * Fraction(y)
    for dx in _operands(x, ex, fx):
        for dy in _operands(y, ey, fy):
            assert abs(dx * dy - exact) <= spread


def test_matmul_spread_and_magnitude_bound_every_corner_of_the_operands() -> None:
    """Every device operand at a corner of its box (+-e per element): |A'B' - AB| <= matmul_spread
    and sum_k |a'_ik b'_kj| <= matmul_magnitude, in exact rationals."""
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-2, 2, (3, 4)).astype(np.float16), rng.uniform(-2, 2, (4, 2)).astype(np.float16)
    ea, eb = rng.uniform(0, 0.1, (3, 4)), rng.uniform(0, 0.1, (4, 2))
    spread, mag = prop.widen(prop.matmul_spread(a, ea, b, eb)), prop.widen(prop.matmul_magnitude(a, ea, b, eb))
    for _ in range(20):
        sa, sb = rng.choice([-1, 1], a.shape), rng.choice([-1, 1], b.shape)
        for i in range(3):
            for j in range(2):
                da = [Fraction(float(a[i, k])) + sa[i, k] * Fraction(float(ea[i, k])) for k in range(4)]
                db = [Fraction(float(b[k, j])) + sb[k, j] * Fraction(float(eb[k, j])) for k in range(4)]
                exact = sum(Fraction(float(a[i, k])) * Fraction(float(b[k, j])) for k in range(4))
                assert abs(sum(p * q for p, q in zip(da, db)) - exact) <= Fraction(float(spread[i, j]))
                assert sum(abs(p * q) for p, q in zip(da, db)) <= Fraction(float(mag[i, j]))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-2.0**100, 2.0**100, width=32, allow_subnormal=True), min_size=1, max_size=20))
def test_float64_error_bounds_float64s_own_sum_of_float32_values(xs: list[float]) -> None:
    """Float32 values of far apart exponents: float64's sum rounds, by at most float64_error."""
    computed = Fraction(float(np.sum(np.asarray(xs, np.float64))))
    bound = prop.float64_error(np.abs(np.asarray(xs, np.float64)).sum(), len(xs))
    assert abs(computed - sum(Fraction(x) for x in xs)) <= Fraction(float(bound))


@settings(max_examples=100, deadline=None)
@given(VALUES, ERRORS, st.floats(-1, 1), st.sampled_from([F16, F32]))
def test_an_inner_rounding_spreads_within_inner_step(v: float, e: float, frac: float, dt: np.dtype) -> None:
    """A rounded intermediate the oracle does not round: every allowed result of a device operand
    within e of v lies within inner_step of v."""
    bound = Fraction(float(prop.widen(prop.inner_step(np.asarray(v), np.asarray(e), dt))))
    for d in _operands(v, e, frac):
        assert all(abs(r - Fraction(v)) <= bound for r in choices(d, dt))


@settings(max_examples=150, deadline=None)
@given(VALUES, SCALARS, SCALARS, st.sampled_from([F16, F32]))
def test_program_fma_bound_holds_the_inherited_interval(v: float, s: float, t: float, dt: np.dtype) -> None:
    """fma(x, s, t) is "inherited from OpFMul followed by OpFAdd" (decision "inherited-precision"):
    a device may return anything in [x - E, x + E], E the distance from the exact x s + t to the
    farther of the least and greatest OpFMul-then-OpFAdd results (each rounding either neighbour
    or, for a subnormal, 0). fma_step's bound on an exact operand holds that whole interval, fp32
    fma(3, 0x3eaaaaab, -1) (x = 2^-25, E = 3 * 2^-25) included."""
    for v, s, t in ((v, s, t), (float(np.uint32(0x3EAAAAAB).view(np.float32)), 3.0, -1.0)):
        x = float(np.asarray(v, dt))
        exact = Fraction(x) * Fraction(s) + Fraction(t)
        results = [r for p in choices(Fraction(x) * Fraction(s), dt) for r in choices(p + Fraction(t), dt)]
        e = max(abs(exact - min(results)), abs(exact - max(results)))
        oracle = float(np.asarray(float(exact), dt))
        bound = prop.fma_step(np.asarray(x), np.asarray(0.0), s, t, np.asarray(oracle), dt)
        assert abs(exact + e - Fraction(oracle)) <= Fraction(float(bound))
        assert abs(exact - e - Fraction(oracle)) <= Fraction(float(bound))
