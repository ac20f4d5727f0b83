"""Numeric rules shared by arithmetic families: rounding error bounds and conversions.

Two kinds of helper live here, each a rule written down in
docs/spec-decisions.md ("cm2-float-sum-bound", "cm2-conversion-rules"):

* error bounds for float results whose order of operations the spec leaves
  to the implementation (reductions, dot products): the classical bound for
  summation in floating point, valid for *every* order of combination
  (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., eq. 4.4
  and section 3.1): ``|fl(sum) - sum| <= gamma_{n-1} * sum(|x_i|)`` with
  ``gamma_n = n*u / (1 - n*u)`` and ``u`` the unit roundoff of the type the
  partial results are rounded to;
* component-type conversions as the SPIR-V conversion instructions define
  them (OpFConvert, OpConvertFToS/U, OpConvertSToF/UToF, OpSConvert/UConvert),
  computed with numpy and ml_dtypes.

Everything is vectorised over arrays.
"""

from __future__ import annotations

import numpy as np

from ctsgen.model.types import ComponentType

#: Explicit significand bits (without the implicit one) and the smallest normal exponent.
_FLOAT_FORMAT = {
    ComponentType.float16: (10, -14, 15),
    ComponentType.bfloat16: (7, -126, 127),
    ComponentType.float32: (23, -126, 127),
}


def float_format(component: ComponentType) -> tuple[int, int, int]:
    """(explicit mantissa bits, smallest normal exponent, largest exponent) of a float type."""
    if component not in _FLOAT_FORMAT:
        raise ValueError(f"{component.name} is not a float component type; use one of "
                         f"{', '.join(t.name for t in _FLOAT_FORMAT)}")
    return _FLOAT_FORMAT[component]


def unit_roundoff(component: ComponentType) -> float:
    """u = 2^-p for a type with p significand bits (implicit bit included): the largest
    relative error of rounding to nearest (float16 2^-11, bfloat16 2^-8, float32 2^-24)."""
    mant, _, _ = float_format(component)
    return 2.0 ** -(mant + 1)


def gamma(n: int | np.ndarray, u: float) -> np.ndarray:
    """Higham's gamma_n = n*u / (1 - n*u) (requires n*u < 1)."""
    nu = np.asarray(n, dtype=np.float64) * u
    if np.any(nu >= 1):
        raise ValueError(f"gamma_n needs n*u < 1, got n*u up to {float(np.max(nu))}")
    return nu / (1 - nu)


def sum_error_bound(abs_sum: np.ndarray, terms: int | np.ndarray, component: ComponentType) -> np.ndarray:
    """Bound on |computed - exact| for a sum of ``terms`` values whose absolute values
    add up to ``abs_sum``, every partial result rounded to ``component``, in any order
    (any binary tree of additions): gamma_{terms-1} * abs_sum. Holds as well when an
    implementation keeps partial sums in a wider type."""
    return gamma(np.maximum(np.asarray(terms) - 1, 0), unit_roundoff(component)) * np.asarray(abs_sum, np.float64)


def rounding_bound(exact: np.ndarray, component: ComponentType) -> np.ndarray:
    """|round_to_nearest(exact) - exact| <= u * |exact| for a value in the normal range."""
    return unit_roundoff(component) * np.abs(np.asarray(exact, dtype=np.float64))


def ulp(values: np.ndarray, component: ComponentType) -> np.ndarray:
    """The spacing of ``component`` at |values| (normal range): 2^(floor(log2|v|) - mantissa bits).

    A result that is either neighbour of the exact value (faithful rounding)
    is within one ulp of the round-to-nearest one."""
    mant, emin, _ = float_format(component)
    v = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(v > 0, v, 1.0)))
    return np.exp2(np.maximum(e, emin) - mant)


def convert(values: np.ndarray, src: ComponentType, dst: ComponentType) -> np.ndarray:
    """``values`` (of ``src``) converted to ``dst`` as the SPIR-V conversion instructions do.

    * float -> float (OpFConvert): round to nearest even (widening is exact);
    * float -> integer (OpConvertFToS / OpConvertFToU): round toward zero; a
      value whose truncation does not fit ``dst`` is undefined in SPIR-V, so
      this raises ValueError instead of inventing a result;
    * integer -> float (OpConvertSToF / OpConvertUToF): round to nearest even;
    * integer -> integer (OpSConvert / OpUConvert): sign- or zero-extension by
      the *source's* signedness when widening, keeping the low bits when
      narrowing (wrapping, not saturating); same width keeps the bits.
    """
    v = np.asarray(values, dtype=src.dtype)
    if src.is_float and dst.is_float:
        return v.astype(np.float64).astype(dst.dtype) if dst is not ComponentType.bfloat16 \
            else v.astype(np.float32).astype(dst.dtype)
    if src.is_float:
        t = np.trunc(v.astype(np.float64))
        info = np.iinfo(dst.dtype)
        if np.any((t < info.min) | (t > info.max)) or not np.all(np.isfinite(t)):
            raise ValueError(f"float -> {dst.name}: a value truncates outside [{info.min}, {info.max}], "
                             "which SPIR-V leaves undefined; draw values in range")
        return t.astype(np.int64).astype(dst.dtype)
    if dst.is_float:
        return round_to_nearest_even(v.astype(np.float64), dst)  # every 32-bit integer is exact in float64
    return v.astype(np.int64).astype(dst.dtype)  # numpy's C casts: extend by source sign, wrap when narrowing


def round_to_nearest_even(exact: np.ndarray, dst: ComponentType) -> np.ndarray:
    """``exact`` (float64 values taken as exact) rounded once to nearest even in ``dst``.

    numpy and ml_dtypes reach bfloat16 from float64 through float32, rounding twice
    (16842753 -> 16777216 instead of 16908288). Here the significand is cut at the
    destination's precision directly: scaling by a power of two is exact, and
    ``np.rint`` rounds half to even. Subnormal results use the smallest normal
    exponent's spacing; values beyond the largest finite round to infinity the way
    IEEE 754 does (by the same rint on the top binade's spacing)."""
    x = np.asarray(exact, dtype=np.float64)
    mant, emin, emax = float_format(dst)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _, e = np.frexp(x)  # x = f * 2^e, 0.5 <= |f| < 1: binade exponent e - 1
        spacing_exp = np.maximum(e - 1, emin) - mant
        r = np.ldexp(np.rint(np.ldexp(x, -spacing_exp)), spacing_exp)
        r = np.where(np.isfinite(x), r, x)
        top = np.ldexp(2.0 - 2.0 ** -mant, emax)
        r = np.where(np.abs(r) > top, np.copysign(np.inf, x), r)
    return r.astype(dst.dtype)  # representable now: the cast is exact


def conversion_tolerance(values: np.ndarray, src: ComponentType, dst: ComponentType,
                         expected: np.ndarray) -> np.ndarray:
    """Per-element bound for a conversion result: 0 when the conversion is exact or
    integer-valued, else one ulp of ``dst`` at the expected value (either neighbour of
    the exact value passes; docs/spec-decisions.md "cm2-conversion-rules")."""
    if not dst.is_float:
        return np.zeros(np.shape(expected))
    exact = np.asarray(values, dtype=src.dtype).astype(np.float64)
    got = np.asarray(expected, dtype=dst.dtype).astype(np.float64)
    return np.where(exact == got, 0.0, ulp(exact, dst))
