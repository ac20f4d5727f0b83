"""Reference semantics of SPV_NV_cooperative_vector matrix-vector and training instructions.

Pure numpy / ml_dtypes, vectorised over the invocations of a case. The
numeric model (docs/spec-decisions.md, "coopvec-numeric-model"):

* Input conversion (OpCooperativeVectorMatrixMulAddNV, "Input is converted to
  the type indicated by InputInterpretation"): integer -> integer saturates;
  float -> integer rounds to nearest even and saturates; integer -> float
  rounds to nearest even; float -> float is RNE (the strategy draws only
  values the interpretation represents exactly, so every faithful conversion
  agrees); Packed interpretations bitcast uint32 words, lowest component in
  the lowest bits.
* Integer paths: "performed at the precision of the Result Type and are exact
  (with the usual wrapping rules)": exact int64 products and sums, wrapped to
  the 32-bit result.
* Float paths: the exact product sum (float64; every product of two 16-bit or
  8-bit floats is exact there) rounded to the result type. The tolerance is
  :func:`matmul_tolerance`: accumulation may round partial sums to the Result
  Type once every :data:`ACCUMULATION_BLOCK` products (the H100 does exactly
  that for fp16 results, docs/validation.md "coopvec accumulation model").
* Training ops: OuterProductAccumulate / ReduceSumAccumulate add into memory
  "as if ... a Relaxed atomic add": every add rounds to the matrix type, in an
  order the implementation picks; :func:`accumulate_tolerance` bounds all orders.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from ctsgen.model.types import CoopVecType

#: unit roundoff of the accumulation inside a block of products (binary32)
U_ACC = 2.0**-24
#: products summed (at binary32 or better) between two roundings of the partial sum to the Result Type
ACCUMULATION_BLOCK = 16
#: fp16: unit roundoff and the spacing of its subnormals
U_F16, F16_TINY = 2.0**-11, 2.0**-24

_INT_RANGE = {CoopVecType.sint8: (-128, 127), CoopVecType.uint8: (0, 255),
              CoopVecType.sint32: (-2**31, 2**31 - 1), CoopVecType.uint32: (0, 2**32 - 1)}


def gamma(n: int | np.ndarray, u: float) -> np.ndarray:
    """Higham's gamma_n = n u / (1 - n u): the relative bound of n rounded operations."""
    n = np.asarray(n, dtype=np.float64)
    return n * u / (1 - n * u)


def unpack_int8(words: np.ndarray, signed: bool) -> np.ndarray:
    """Packed int8 interpretations: each uint32 holds four values, component 0 in bits 0..7."""
    w = np.ascontiguousarray(words, dtype="<u4")
    return w.view(np.int8 if signed else np.uint8).reshape(*w.shape[:-1], w.shape[-1] * 4)


def convert_input(x: np.ndarray, stored: CoopVecType, interp: CoopVecType) -> np.ndarray:
    """Input -> InputInterpretation, as int64 (integer interpretations) or float64 values."""
    if interp.is_packed:
        return unpack_int8(x, interp is CoopVecType.sint8packed).astype(np.int64)
    if interp.is_float:
        if stored.is_float:
            return x.astype(interp.dtype).astype(np.float64)
        return x.astype(np.int64).astype(np.float64).astype(interp.dtype).astype(np.float64)
    lo, hi = _INT_RANGE[interp]
    if stored.is_float:
        v = np.rint(x.astype(np.float64))  # rint: round half to even
        return np.clip(v, lo, hi).astype(np.int64)
    return np.clip(x.astype(np.int64), lo, hi)


def wrap32(v: np.ndarray, signed: bool) -> np.ndarray:
    """Exact int64 values wrapped to 32 bits (two's complement for signed results)."""
    u = np.asarray(v, dtype=np.int64) & 0xFFFFFFFF
    return (u.astype(np.uint32).view(np.int32) if signed else u.astype(np.uint32))


def matmul(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, result: CoopVecType) -> np.ndarray:
    """Result = W x (+ bias) for every row of ``x`` (invocations x K, already converted),
    ``w`` the effective M x K matrix (transposition already applied)."""
    if not result.is_float:
        y = x.astype(np.int64) @ w.astype(np.int64).T
        if bias is not None:
            y = y + bias.astype(np.int64)
        return wrap32(y, result.is_signed)
    y = x.astype(np.float64) @ w.astype(np.float64).T
    if bias is not None:
        y = y + bias.astype(np.float64)
    with np.errstate(over="ignore"):
        return y.astype(result.dtype)


def accumulation_roundings(k: int, bias: bool) -> int:
    """Roundings of the partial sum to the Result Type: one per block of
    :data:`ACCUMULATION_BLOCK` products, one more for a bias added on its own."""
    return -(-k // ACCUMULATION_BLOCK) + int(bias)


def matmul_tolerance(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, result: CoopVecType) -> np.ndarray:
    """Per-element bound on |device - expected| for a float result (float64, invocations x M).

    OpCooperativeVectorMatrixMulAddNV: "The internal precision of floating-point
    operations is defined by the client API", and Vulkan does not define it. The
    model: products are exact, sums inside a block of at most ACCUMULATION_BLOCK
    products are kept at binary32 or better, and the partial sum is rounded to the
    Result Type after each block (r = :func:`accumulation_roundings` roundings, the
    last of which is the final result's). With S = sum_k |w_mk x_k| + |b_m| every
    partial sum is at most S, so in any order
    |device - exact| <= gamma_r(u_r) S + gamma_{K+1}(U_ACC) S (1 + gamma_r(u_r)),
    plus r subnormal spacings of the Result Type (a rounding near zero is absolute),
    and the oracle's own rounding of the exact value adds u_r |y|.
    """
    s = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T
    if bias is not None:
        s = s + np.abs(bias.astype(np.float64))
    y = np.abs(x.astype(np.float64) @ w.astype(np.float64).T + (0 if bias is None else bias.astype(np.float64)))
    u_r = 2.0 ** -(ml_dtypes.finfo(result.dtype).nmant + 1)
    tiny = float(ml_dtypes.finfo(result.dtype).smallest_subnormal)
    k = w.shape[1]
    r = accumulation_roundings(k, bias is not None)
    return accumulation_error(s, k, bias is not None, result) + u_r * y + r * tiny


def accumulation_error(s: np.ndarray, k: int, bias: bool, result: CoopVecType) -> np.ndarray:
    """The model's rounding error of a float MatMulAdd over its exact sum, for K products and
    every partial sum at most ``s`` (sum_k |w_mk x_k| + |b_m|), in any order:
    gamma_r(u_r) s + gamma_{K+1}(U_ACC) s (1 + gamma_r(u_r)), r = :func:`accumulation_roundings`
    (without the subnormal terms: see :func:`matmul_tolerance`)."""
    u_r = 2.0 ** -(ml_dtypes.finfo(result.dtype).nmant + 1)
    g_r = gamma(accumulation_roundings(k, bias), u_r)
    return g_r * s + gamma(k + 1, U_ACC) * s * (1 + g_r)


def accumulate_f16(initial: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """``initial`` (fp16) plus each of ``terms`` (adds x ...) in turn, rounding to fp16 after
    every add: one order the atomic adds may take. Each add is a binary32 add of the fp16
    accumulator and the binary32 term, rounded to fp16."""
    acc = initial.astype(np.float16)
    t32 = widen_to_f32(terms)  # the adds are sequential; each term's conversion is not
    if acc.size >= F16_GRID_MIN_ELEMENTS and acc.shape == t32.shape[1:] and _stays_below_f16_max(acc, t32):
        return _accumulate_on_f16_grid(acc, t32)
    for t in t32:
        acc = (acc.astype(np.float32) + t).astype(np.float16)
    return acc


def widen_to_f32(a: np.ndarray) -> np.ndarray:
    """``a`` as binary32 (``a`` itself where it is binary32 already: callers only read it); fp16
    input is widened (exactly) through a table of every fp16 bit pattern's binary32 value, the
    same values as ``astype`` without the per-element conversion."""
    if a.dtype != np.float16:
        return a.astype(np.float32, copy=False)
    return np.take(_f16_to_f32_table(), np.ascontiguousarray(a).view(np.uint16))


@functools.cache
def _f16_to_f32_table() -> np.ndarray:
    """The binary32 value of each of the 65536 fp16 bit patterns, by numpy's own conversion."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)


#: accumulators at least this large add on the fp16 grid in binary32 (:func:`round_to_f16_grid`);
#: smaller ones convert to and from fp16, fewer numpy calls per add than the grid rounding takes
F16_GRID_MIN_ELEMENTS = 1024
F16_MAX = 65504.0
#: round to nearest even takes this and every larger binary32 magnitude to fp16's infinity
F16_ROUNDS_TO_INF = 65520.0
_EXPONENT_BITS = np.uint32(0x7F800000)
#: the binary32 exponent field of 2^-14, fp16's smallest normal: below it the fp16 spacing is 2^-24
_F16_MIN_NORMAL_EXPONENT = np.uint32((127 - 14) << 23)
#: added to a binary32 exponent field 2^e: 1.5 * 2^(e+13), whose spacing 2^(e-10) is fp16's in [2^e, 2^(e+1))
_GRID_CONSTANT_OFFSET = np.uint32((13 << 23) | 0x00400000)


def round_to_f16_grid(s: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """``out`` = float32 ``s`` rounded to fp16 (round to nearest, ties to even), kept in binary32:
    ``s.astype(float16).astype(float32)`` bit for bit, for finite ``|s| <`` :data:`F16_ROUNDS_TO_INF`.
    ``out`` and ``scratch`` (uint32) have ``s``'s shape; ``out`` may not be ``s``.

    With C = 1.5 * 2^(e+13) (e the exponent of s, at least -14), C + s lies in C's binade, whose
    spacing is fp16's spacing at s, so binary32's round-to-nearest-even of C + s rounds s to the
    fp16 grid (C is an even multiple of that spacing: ties go to the even fp16 significand) and
    subtracting C is exact. A sum that rounds to zero takes s's sign, as the conversion's does."""
    np.bitwise_and(s.view(np.uint32), _EXPONENT_BITS, out=scratch)
    np.maximum(scratch, _F16_MIN_NORMAL_EXPONENT, out=scratch)
    np.add(scratch, _GRID_CONSTANT_OFFSET, out=scratch)
    c = scratch.view(np.float32)
    np.add(s, c, out=out)
    np.subtract(out, c, out=out)
    np.copysign(out, s, out=out)


def _stays_below_f16_max(acc: np.ndarray, t32: np.ndarray) -> bool:
    """Whether no partial sum of :func:`accumulate_f16` can exceed fp16's largest finite value
    (nor be NaN): with B = max |initial| + n max |terms| for n adds, each rounding to binary32
    then to fp16 multiplies by at most 1 + 2^-10 and adds at most 2^-25, so every partial sum
    is below (1 + 2^-10)^n (B + n 2^-25); the bound checked, (1 + 2^-9)^n (B + n 2^-24), also
    covers B's own rounding to float64 (NaN anywhere makes it NaN: not below)."""
    n = t32.shape[0]
    largest_term = max(float(t32.max()), -float(t32.min())) if t32.size else 0.0
    largest_initial = max(float(acc.max()), -float(acc.min()))
    return bool((1 + 2.0**-9) ** n * (largest_initial + n * largest_term + n * 2.0**-24) < F16_MAX)


def _accumulate_on_f16_grid(acc: np.ndarray, t32: np.ndarray) -> np.ndarray:
    """:func:`accumulate_f16`'s adds with the accumulator kept in binary32 on the fp16 grid
    (:func:`round_to_f16_grid` after every add), for accumulations that stay finite."""
    grid = acc.astype(np.float32)
    s, scratch = np.empty_like(grid), np.empty(grid.shape, np.uint32)
    for t in t32:
        np.add(grid, t, out=s)
        round_to_f16_grid(s, grid, scratch)
    return grid.astype(np.float16)


def accumulate_tolerance(initial: np.ndarray, terms: np.ndarray, product_rounding: bool) -> np.ndarray:
    """Bound for fp16 atomic accumulation of n terms in any order, against :func:`accumulate_f16`.

    Each partial sum is rounded once (n roundings), each outer-product term
    is itself an fp16-rounded product when ``product_rounding`` (one more);
    an order-independent bound on both the device's and the oracle's result
    is gamma_{n+1}(u16) * (|initial| + sum |terms|), doubled because both sides
    round, plus one subnormal spacing per rounding."""
    n = terms.shape[0] + (1 if product_rounding else 0)
    s = np.abs(initial.astype(np.float64)) + np.abs(widen_to_f32(terms).astype(np.float64)).sum(axis=0)
    return 2 * gamma(n, U_F16) * s + (n + 1) * F16_TINY
