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
    every add: one order the atomic adds may take."""
    acc = initial.astype(np.float16)
    for t in terms.astype(np.float32):  # the adds are sequential; each term's conversion is not
        acc = (acc.astype(np.float32) + t).astype(np.float16)
    return acc


def accumulate_tolerance(initial: np.ndarray, terms: np.ndarray, product_rounding: bool) -> np.ndarray:
    """Bound for fp16 atomic accumulation of n terms in any order, against :func:`accumulate_f16`.

    Each partial sum is rounded once (n roundings), each outer-product term
    is itself an fp16-rounded product when ``product_rounding`` (one more);
    an order-independent bound on both the device's and the oracle's result
    is gamma_{n+1}(u16) * (|initial| + sum |terms|), doubled because both sides
    round, plus one subnormal spacing per rounding."""
    n = terms.shape[0] + (1 if product_rounding else 0)
    s = np.abs(initial.astype(np.float64)) + np.abs(terms.astype(np.float64)).sum(axis=0)
    return 2 * gamma(n, U_F16) * s + (n + 1) * F16_TINY
