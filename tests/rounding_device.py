"""An exact rational simulation of a device's roundings, for the float-domain tests of the
program families (coopvec-program, cm2-program): each rounding picks one result among those the
spec allows, always the largest ("up"), the smallest ("down"), or at random."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np

#: (explicit mantissa bits, smallest normal exponent) of the formats a float program rounds to
FORMAT = {np.dtype(np.float16): (10, -14), np.dtype(np.float32): (23, -126)}


def neighbours(x: Fraction, dtype: np.dtype) -> tuple[Fraction, Fraction]:
    """The largest value of ``dtype`` <= x and the smallest >= x (no overflow here)."""
    mant, emin = FORMAT[np.dtype(dtype)]
    if x == 0:
        return x, x
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    sp = Fraction(2) ** (max(e, emin) - mant)
    return math.floor(x / sp) * sp, math.ceil(x / sp) * sp


def subnormal(x: Fraction, dtype: np.dtype) -> bool:
    return 0 < abs(x) < Fraction(2) ** FORMAT[np.dtype(dtype)][1]


def choices(x: Fraction, dtype: np.dtype) -> list[Fraction]:
    """Every result a correctly rounded operation may give for the exact ``x`` in ``dtype``
    (Vulkan): either neighbour, and 0 for a subnormal (a flush)."""
    return sorted(set(neighbours(x, dtype)) | ({Fraction(0)} if subnormal(x, dtype) else set()))


class RoundingDevice:
    """One device execution: each rounding picks a result among those allowed: always the
    largest ("up"), the smallest ("down"), or at random (``mode``); ``rng`` for the random picks
    and for what a family's device draws (an order of a sum, fused or not)."""

    def __init__(self, mode: str, seed: int) -> None:
        self.mode, self.rng = mode, random.Random(seed)

    def round(self, x: Fraction, dtype: np.dtype) -> Fraction:
        """A correctly rounded result (Vulkan: either neighbour, or a flush)."""
        return self.pick(choices(x, dtype))

    def nearest(self, x: Fraction, dtype: np.dtype) -> Fraction:
        """Rounded to nearest (a tie either way), or a flush: a partial sum of an accumulation model."""
        lo, hi = neighbours(x, dtype)
        near = [lo] if x - lo < hi - x else [hi] if hi - x < x - lo else [lo, hi]
        return self.pick(sorted(set(near) | ({Fraction(0)} if subnormal(x, dtype) else set())))

    def pick(self, c: list[Fraction]) -> Fraction:
        return c[-1] if self.mode == "up" else c[0] if self.mode == "down" else self.rng.choice(c)
