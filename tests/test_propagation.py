"""ctsgen.oracle.propagation: each step's bound against exact rational arithmetic, on operands
anywhere within the inherited error, with every result the rounding rules allow (either
neighbour, or 0 for a subnormal). The chain as a whole: coopvec-program's test_float_domain.py."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.families.coopvec_program.tests.test_float_domain import choices
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
