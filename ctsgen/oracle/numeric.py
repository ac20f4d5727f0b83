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
    _, e = np.frexp(np.where(v > 0, v, 1.0))  # exact binade (log2 rounds just below 2^k up to k)
    return np.exp2(np.maximum(e - 1, emin) - mant)


def neighbours(exact: np.ndarray, component: ComponentType) -> tuple[np.ndarray, np.ndarray]:
    """The largest value of ``component`` <= ``exact`` and the smallest >= it (float64; equal
    where ``exact`` is representable). Exact: the spacing is a power of two, so ``exact /
    spacing`` is exact and floor / ceil pick the grid points (float16, bfloat16, float32 alike)."""
    x = np.asarray(exact, dtype=np.float64)
    sp = ulp(x, component)
    return np.floor(x / sp) * sp, np.ceil(x / sp) * sp


#: Relative widening of a bound computed in float64 from an approximate exact value (a
#: transcendental): far above float64's error, far below any format's spacing (2^-23 at best),
#: so it never admits a further representable value and never loses a boundary one.
_OUTWARD = 2.0 ** -45


def tolerance_sides(expected: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, widen: bool = False) -> np.ndarray:
    """The two-sided tolerance (2 x shape: below, above) that admits exactly [lo, hi] around
    ``expected`` (execute.judge.tolerance_sides reads it). ``widen`` for bounds derived from
    float64 approximations of an irrational exact value (see _OUTWARD)."""
    e = np.asarray(expected, dtype=np.float64)
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    if widen:
        lo, hi = lo - np.abs(lo) * _OUTWARD, hi + np.abs(hi) * _OUTWARD
    return np.stack([np.maximum(e - lo, 0.0), np.maximum(hi - e, 0.0)])


def inherited(exact: np.ndarray, fmin: np.ndarray, fmax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The admitted interval of an operation whose precision is "inherited from" a formula.

    Vulkan, "Precision of Individual Operations", "Inherited From ...": "let the largest
    permitted value in any of the ranges be F~max~ and the smallest be F~min~. The operation
    must: return a value in the range [x - E, x + E] where E = max(|x - F~min~|, |x - F~max~|)",
    x the exact result. So the interval is symmetric around x and holds [Fmin, Fmax] (decision
    "inherited-precision"): one bound is the farther of Fmin and Fmax, the other its mirror image
    2x - F. float64; the caller settles values a representable result may sit on exactly."""
    x = np.asarray(exact, np.float64)
    e = np.maximum(np.abs(x - fmin), np.abs(x - fmax))
    return x - e, x + e


def within_grid(lo: np.ndarray, hi: np.ndarray, component: ComponentType) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest values of ``component`` in [lo, hi] (the results an operation
    bounded by that interval may return), from float64 approximations of irrational bounds:
    widened by _OUTWARD first, so a representable value is never lost."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    return neighbours(lo - np.abs(lo) * _OUTWARD, component)[1], neighbours(hi + np.abs(hi) * _OUTWARD, component)[0]


def rounded_either_way(lo: np.ndarray, hi: np.ndarray, component: ComponentType) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest correctly rounded results ("either neighbour", decision
    "faithful-rounding") of exact values in [lo, hi] (float64, exact)."""
    return neighbours(lo, component)[0], neighbours(hi, component)[1]


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
    """Two-sided bound (2 x shape, below / above the expected value) for a conversion result:
    faithful rounding, i.e. one of the two neighbours of the exact value in ``dst`` (0 on both
    sides where the conversion is exact or integer-valued; docs/spec-decisions.md
    "faithful-rounding", "cm2-conversion-rules"). The round-to-nearest-even expected value is
    one neighbour; the other lies on the exact value's side, so a result one spacing the other
    way fails."""
    if not dst.is_float:
        return np.zeros((2,) + np.shape(expected))
    e = np.asarray(expected, dtype=dst.dtype).astype(np.float64)
    lo, hi = neighbours(np.asarray(values, dtype=src.dtype).astype(np.float64), dst)
    return tolerance_sides(e, lo, hi)


def accumulate_blocks_f16(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, block: int,
                          order: np.ndarray | None = None, bias_first: bool = True) -> np.ndarray:
    """One accumulation coopvec's ``matmul_tolerance`` allows for an fp16 result (float64 values of fp16,
    invocations x M): an fp16 accumulator that starts at the bias (with ``bias_first``; else at 0,
    the bias added last) adds the binary32 sum of each block of ``block`` products, blocks taken in
    ``order`` (default: K order). With coopvec's ACCUMULATION_BLOCK (16) in K order this is what the H100 computes
    (docs/validation.md, "coopvec accumulation model")."""
    prods = x.astype(np.float64)[:, None, :] * w.astype(np.float64)[None, :, :]
    acc = np.zeros(prods.shape[:2])
    if bias is not None and bias_first:
        acc = acc + bias
    starts = np.arange(0, prods.shape[-1], block)
    for s0 in starts if order is None else starts[order]:
        chunk = prods[..., s0:s0 + block].sum(-1).astype(np.float32).astype(np.float64)
        acc = (acc + chunk).astype(np.float16).astype(np.float64)
    if bias is not None and not bias_first:
        acc = (acc + bias).astype(np.float16).astype(np.float64)
    return acc
