"""Expected results of cooperative-matrix conversions (SPV_NV_cooperative_matrix2).

* Component-type conversion, Use unchanged or Accumulator -> A / B
  (Op{F,S,U}Convert, OpConvert{F,S,U}To{F,S,U}; "3.49.11 Conversion
  Instructions" relaxes their Use restriction): element (i, j) of the result
  is element (i, j) of the source converted by the rules of
  ctsgen.oracle.numeric.convert.
* OpCooperativeMatrixConvertNV (Use change only, Accumulator -> A / B):
  the values are unchanged, bit for bit.
* OpCooperativeMatrixTransposeNV (Accumulator M x N -> B N x M): result
  element (j, i) is source element (i, j), bit for bit.
"""

from __future__ import annotations

import enum

import numpy as np

from ctsgen.model.types import ComponentType
from ctsgen.oracle.numeric import conversion_tolerance, float_format
from ctsgen.oracle import numeric


class Kind(str, enum.Enum):
    convert = "convert"      # a component-type conversion (with or without a Use change)
    use = "use"              # OpCooperativeMatrixConvertNV
    transpose = "transpose"  # OpCooperativeMatrixTransposeNV


def expected_result(kind: Kind, source: np.ndarray, src: ComponentType, dst: ComponentType
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(expected result matrix, per-element two-sided tolerance: 2 x the matrix's shape, below /
    above) for a rows x cols ``source``, or for each matrix of a stack (..., rows, cols) (one tile
    per subgroup)."""
    if kind is Kind.transpose:
        moved = np.swapaxes(source, -1, -2).copy()
        return moved, np.zeros((2,) + moved.shape)
    if kind is Kind.use:
        return source.copy(), np.zeros((2,) + source.shape)
    out = numeric.convert(source, src, dst)
    return out, conversion_tolerance(source, src, dst, out)


def source_values(src: ComponentType, dst: ComponentType, n: int, seed: int) -> np.ndarray:
    """Source data whose conversion to ``dst`` is defined (docs/spec-decisions.md
    "cm2-conversion-rules"): floats in the normal range of both types and below the
    largest finite value's binade (no overflow to infinity, no subnormal a device
    may flush); floats bound for integers truncate into the integer's range (out of
    range is undefined in SPIR-V); integers bound for float16 within +-65504."""
    rng = np.random.Generator(np.random.PCG64(seed))
    if src.is_float and dst.is_float:
        mant, emin, emax = float_format(src)
        _, dmin, dmax = float_format(dst)
        e = rng.integers(max(emin, dmin), min(emax, dmax), size=n)  # excludes the top binade
        m = 1 + rng.integers(0, 2**mant, size=n) / 2.0**mant
        return (rng.choice([-1.0, 1.0], size=n) * m * np.exp2(e)).astype(src.dtype)
    if src.is_float:
        info = np.iinfo(dst.dtype)
        lo, hi = float(info.min), float(info.max)
        if src is ComponentType.float16:
            lo, hi = max(lo, -65504.0), min(hi, 65504.0)
        v = rng.uniform(lo, hi + 1, size=n)
        small = rng.uniform(-3, 3, size=n) if info.min < 0 else rng.uniform(0, 3, size=n)
        v = np.where(rng.random(n) < 0.25, small, v).astype(src.dtype)  # fractions near zero too
        return _clip_trunc(v, src, info)
    if dst is ComponentType.float16 and src.size > 2:  # within float16's finite range
        return rng.integers(-65504 if src.dtype.kind == "i" else 0, 65505, size=n).astype(src.dtype)
    bits = rng.integers(0, 1 << (8 * src.size), size=n, dtype=np.uint64)
    return bits.astype(src.bits_dtype).view(src.dtype)


def _clip_trunc(v: np.ndarray, src: ComponentType, info: np.iinfo) -> np.ndarray:
    """Replace values whose truncation leaves the integer range (rounding to ``src``
    can push e.g. 127.99 to 128.0) by the largest in-range value of ``src``."""
    t = np.trunc(v.astype(np.float64))
    bad = (t < info.min) | (t > info.max)
    with np.errstate(over="ignore"):  # info.max may exceed the source type; the loop steps down
        top = np.asarray([info.max], np.float64).astype(src.dtype)
    while np.trunc(float(top[0])) > info.max:  # the largest value of src that truncates in range
        top = (top.view(src.bits_dtype) - 1).view(src.dtype)  # positive floats: one ulp down
    with np.errstate(over="ignore"):  # unused when the source type cannot reach info.min
        bottom = np.asarray([info.min], np.float64).astype(src.dtype)
    return np.where(bad, np.where(t > 0, top[0], bottom[0]), v).astype(src.dtype)
