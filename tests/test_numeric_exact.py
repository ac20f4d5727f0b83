"""Conversions and sums against exact rational arithmetic (Python fractions), and against
ml_dtypes where it rounds once: an independent account of ctsgen.oracle.numeric."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.model.types import ComponentType as C
from ctsgen.oracle.numeric import convert, round_to_nearest_even, sum_error_bound

FORMATS = {C.float16: (10, -14, 15), C.bfloat16: (7, -126, 127), C.float32: (23, -126, 127)}


def exact_rne(q: Fraction, dst: C) -> float:
    """IEEE 754 roundTiesToEven of the rational ``q`` into ``dst``, by hand."""
    mant, emin, emax = FORMATS[dst]
    if q == 0:
        return 0.0
    sign, a = (-1 if q < 0 else 1), abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    spacing = Fraction(2) ** (max(e, emin) - mant)
    k, rem = divmod(a, spacing)
    if rem * 2 > spacing or (rem * 2 == spacing and k % 2 == 1):
        k += 1
    r = k * spacing
    if r > (2 - Fraction(2) ** -mant) * Fraction(2) ** emax:
        return sign * float("inf")
    return sign * float(r)


INT_EDGES = [0, 1, -1, 255, 256, 257, 2049, 16777217, 16842753, 16908289, 2**24 + 1, 2**31 - 1, -2**31,
             2**32 - 1, 2**31 + 2**23 + 1, 65504, 65519, 65520, -65520, 3 * 2**22 + 1]


def test_int32_to_bfloat16_rounds_once() -> None:
    """16842753 = 2^24 + 2^16 + 1 lies just above the midpoint 2^24 + 2^16 of bfloat16's
    neighbours 2^24 and 2^24 + 2^17: once-rounded it is 16908288, through float32 16777216."""
    got = convert(np.array([16842753], np.int32), C.sint32, C.bfloat16)
    assert float(got[0]) == 16908288.0


@pytest.mark.parametrize("dst", [C.bfloat16, C.float16, C.float32])
def test_integer_edges_round_as_exact_rationals(dst: C) -> None:
    for src, lo, hi in ((C.sint32, -2**31, 2**31 - 1), (C.uint32, 0, 2**32 - 1)):
        vals = [v for v in INT_EDGES if lo <= v <= hi]
        if dst is C.float16:
            vals = [v for v in vals if abs(v) <= 65504]
        got = convert(np.array(vals, dtype=src.dtype), src, dst).astype(np.float64)
        want = [exact_rne(Fraction(v), dst) for v in vals]
        assert got.tolist() == want, (src, dst)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=64), st.sampled_from([C.bfloat16, C.float32]))
def test_random_int32_conversions_match_exact_rounding(vals: list[int], dst: C) -> None:
    got = convert(np.array(vals, np.int32), C.sint32, dst).astype(np.float64)
    assert got.tolist() == [exact_rne(Fraction(v), dst) for v in vals]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64))
def test_random_uint32_to_bfloat16_match_exact_rounding(vals: list[int]) -> None:
    got = convert(np.array(vals, np.uint32), C.uint32, C.bfloat16).astype(np.float64)
    assert got.tolist() == [exact_rne(Fraction(v), C.bfloat16) for v in vals]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1).filter(lambda b: (b >> 23) & 0xFF != 0xFF), min_size=1, max_size=64),
       st.sampled_from([C.bfloat16, C.float16]))
def test_float32_narrowing_matches_exact_rounding_and_ml_dtypes(bits: list[int], dst: C) -> None:
    """float32 -> float16 / bfloat16 (one rounding in ml_dtypes/numpy from float32) equals the
    rational rounding, including subnormal results and overflow to infinity."""
    x = np.array(bits, np.uint32).view(np.float32)
    with np.errstate(over="ignore"):
        got = convert(x, C.float32, dst).astype(np.float64)
        ref = x.astype(dst.dtype).astype(np.float64)
    want = [exact_rne(Fraction(float(v)), dst) for v in x]
    assert got.tolist() == want
    assert got.tolist() == ref.tolist()


def test_round_to_nearest_even_ties_and_overflow() -> None:
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 2**-133 * 1.5, 65520.0, 65519.0, -(2**-25)])
    assert round_to_nearest_even(x[:2], C.bfloat16).astype(float).tolist() == [1.0, 1 + 2**-6]
    assert float(round_to_nearest_even(x[2:3], C.bfloat16)[0]) == 2**-132  # subnormal tie to even
    assert round_to_nearest_even(x[3:5], C.float16).astype(float).tolist() == [np.inf, 65504.0]
    assert float(round_to_nearest_even(x[5:], C.float16)[0]) == -0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-2**10, 2**10), min_size=2, max_size=12), st.permutations(range(12)))
def test_sum_bound_holds_for_every_order_exactly(ks: list[int], order: list[int]) -> None:
    """Small float16 sums, each partial sum rounded (RNE) in a permuted order: the exact rational
    error stays within sum_error_bound."""
    vals = [Fraction(k, 8) * 37 for k in ks]
    vals = [Fraction(exact_rne(v, C.float16)) for v in vals]
    seq = [vals[i] for i in order if i < len(vals)]
    acc = seq[0]
    for v in seq[1:]:
        acc = Fraction(exact_rne(acc + v, C.float16))
    err = abs(acc - sum(vals))
    bound = sum_error_bound(np.array(float(sum(abs(v) for v in vals))), len(vals), C.float16)
    assert err <= Fraction(float(bound))
