"""Operand data of an element-wise arithmetic or conversion instruction (coopvec-elementwise's vectors,
coopmat-khr's matrices): inside each instruction's domain, edges included.

Floats (no NaN, infinity, subnormal or overflowing result outside an ieee
variant: Vulkan's default float controls may flush or ignore them):

* "wide" values (load/store, negate, min/max/clamp/step): normal values over
  the type's whole exponent range, random mantissas, some zeros;
* "narrow" values (add, sub, mul, div, VectorTimesScalar, fma): magnitudes in
  [2^-6, 2^6), so every exact result is a float64 (fp32 sums span at most
  37 bits, products 48) and none overflows or underflows to a subnormal
  except by cancellation (covered by the flush rule of the tolerance);
* exp on [-8, 8] (fp16) / [-10, 10], tanh on [-4, 4] / [-8, 8], log on all
  positive normals, atan on +-[2^-10, 2^10].

ieee variants (SignedZeroInfNanPreserve + RoundingModeRTE) add, per op, the
special values whose results the rules define: NaN and infinities, overflow
of fp16/fp32 add, sub and mul (to infinity under RTE), x / +0 (a signed
infinity), NaN beside a number for NMin/NMax/NClamp; no NaN for
FMin/FMax/FClamp/Step ("which operand is the result is undefined").

Integers: half the values over the whole range, half small; divisors never
0 (and no INT_MIN / -1), shift amounts in [0, bits), clamp bounds ordered.
Conversions: float -> integer values whose truncation fits (fractions
.25/.5/.75 make round-toward-zero visible; a uniform value that rounds to a
subnormal becomes 0, as it may be flushed), integer -> fp16 within +-65504,
fp32 -> fp16 within the fp16 normal range.

``edges`` puts the op's edge tuples into the first components (invocation 0
first), where every N reaches them.
"""

from __future__ import annotations

import numpy as np

from ctsgen.ops.coopvec_elementwise_ops import OPS, Op
from ctsgen.model.types import CoopVecType

T = CoopVecType
#: (explicit mantissa bits, exponent bias, smallest and largest unbiased normal exponent)
_FORMAT = {T.float16: (10, 15, -14, 15), T.float32: (23, 127, -126, 127)}
NARROW = (-6, 5)
NAN, INF = float("nan"), float("inf")


def normals(rng: np.random.Generator, shape: tuple[int, ...], t: CoopVecType, lo: int, hi: int,
            zeros: float = 0.1) -> np.ndarray:
    """Normal values of ``t`` with unbiased exponents in [lo, hi], uniform mantissa bits, random
    signs, and a fraction ``zeros`` of +0."""
    mant, bias, _, _ = _FORMAT[t]
    bits = np.dtype(f"uint{t.bits}")
    e = rng.integers(lo + bias, hi + bias, shape, endpoint=True).astype(np.uint64)
    m = rng.integers(0, 1 << mant, shape, dtype=np.uint64)
    s = rng.integers(0, 2, shape, dtype=np.uint64)
    v = ((s << np.uint64(t.bits - 1)) | (e << np.uint64(mant)) | m).astype(bits).view(t.dtype)
    return np.where(rng.random(shape) < zeros, t.dtype.type(0), v)


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], t: CoopVecType, lo: float, hi: float
             ) -> np.ndarray:
    """Uniform reals in [lo, hi] rounded to ``t``; a result below the smallest normal becomes 0."""
    v = rng.uniform(lo, hi, shape).astype(t.dtype)
    return np.where(np.abs(v) < np.finfo(t.dtype).tiny, t.dtype.type(0), v)


def ints(rng: np.random.Generator, shape: tuple[int, ...], t: CoopVecType) -> np.ndarray:
    """Half uniform over the type's range, half in [-64, 64] (clipped to the type)."""
    info = np.iinfo(t.dtype)
    wide = rng.integers(int(info.min), int(info.max), shape, endpoint=True, dtype=np.int64)
    small = rng.integers(max(int(info.min), -64), 64, shape, endpoint=True, dtype=np.int64)
    return np.where(rng.random(shape) < 0.5, wide, small).astype(t.dtype)


def _float_operands(op: Op, t: CoopVecType, rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    _, _, emin, emax = _FORMAT[t]
    f16 = t is T.float16
    n = OPS[op].arity
    if op in (Op.fadd, Op.fsub, Op.fmul, Op.vts, Op.fdiv, Op.fma):
        out = [normals(rng, shape, t, *NARROW) for _ in range(n)]
        if op is Op.fdiv:
            out[1] = np.where(out[1] == 0, t.dtype.type(1), out[1])
        return out
    if op is Op.exp:
        return [_uniform(rng, shape, t, -8 if f16 else -10, 8 if f16 else 10)]
    if op is Op.tanh:
        return [_uniform(rng, shape, t, -4 if f16 else -8, 4 if f16 else 8)]
    if op is Op.log:
        return [np.abs(normals(rng, shape, t, emin, emax, zeros=0))]
    if op is Op.atan:
        return [normals(rng, shape, t, -10, 9)]
    out = [normals(rng, shape, t, emin, emax) for _ in range(n)]
    if op in (Op.fmin, Op.fmax, Op.nmin, Op.nmax, Op.step):
        out[1] = np.where(rng.random(shape) < 0.2, out[0], out[1])  # ties
    if op is Op.step:
        with np.errstate(over="ignore"):
            below = np.nextafter(out[0], t.dtype.type(-INF))  # -max has no finite neighbour below: kept as is
        edge = np.isfinite(below) & (rng.random(shape) < 0.1)
        out[1] = np.where(edge, np.where(np.abs(below) < np.finfo(t.dtype).tiny, 0, below), out[1]).astype(t.dtype)
    if op in (Op.fclamp, Op.nclamp):
        out[1], out[2] = np.minimum(out[1], out[2]), np.maximum(out[1], out[2])
    return out


def _int_operands(op: Op, t: CoopVecType, rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    out = [ints(rng, shape, t) for _ in range(OPS[op].arity)]
    if op is Op.idiv:
        b = np.where(out[1] == 0, 1, out[1])
        if t.is_signed:
            b = np.where((out[0] == np.iinfo(t.dtype).min) & (b == -1), 1, b)
        out[1] = b.astype(t.dtype)
    if op in (Op.shl, Op.shr):
        out[1] = rng.integers(0, t.bits, shape).astype(t.dtype)
    if op is Op.iclamp:
        out[1], out[2] = np.minimum(out[1], out[2]), np.maximum(out[1], out[2])
    return out


def _convert_operand(t: CoopVecType, r: CoopVecType, rng: np.random.Generator, shape: tuple[int, ...]
                     ) -> np.ndarray:
    """Source values whose conversion to ``r`` is defined and neither overflows nor underflows."""
    _, _, emin, emax = _FORMAT.get(t, (0, 0, 0, 0))
    if t.is_float and r.is_float:
        if r is T.float16 and t is T.float32:
            v = normals(rng, shape, t, -14, 15)
            return np.clip(v, -65504, 65504).astype(t.dtype)
        return normals(rng, shape, t, emin, emax)
    if t.is_float:
        info = np.iinfo(r.dtype)
        top = float(np.finfo(t.dtype).max)
        lo, hi = max(float(info.min) - 1, -top), min(float(info.max) + 1, top)
        small = rng.integers(max(int(lo), -300), min(int(hi), 300), shape, endpoint=True) \
            + rng.choice([0.0, 0.25, 0.5, 0.75], shape) * np.where(rng.random(shape) < 0.5, -1, 1)
        v = np.where(rng.random(shape) < 0.5, small, rng.uniform(lo, hi, shape)).astype(t.dtype)
        v = np.where(np.abs(v) < np.finfo(t.dtype).tiny, t.dtype.type(0), v)  # a value rounded to a subnormal
        cut = np.trunc(v.astype(np.float64))
        return np.where((cut < info.min) | (cut > info.max), t.dtype.type(0.5), v)
    v = ints(rng, shape, t)
    if r is T.float16 and t.bits == 32:
        v = np.clip(v.astype(np.int64), -65504, 65504).astype(t.dtype)
    return v


def _edges(op: Op, t: CoopVecType, r: CoopVecType) -> list[tuple[float | int, ...]]:
    """Edge tuples (one value per operand) of ``op`` on ``t`` (result type ``r``)."""
    if op is Op.convert:
        return [(x,) for x in _convert_edges(t, r)]
    if t.is_float:
        return _float_edges(op, t)
    info = np.iinfo(t.dtype)
    lo, hi = int(info.min), int(info.max)
    m1 = -1 if t.is_signed else hi
    common = [(hi, 1), (lo, m1), (lo, lo), (0, 0), (hi, hi), (m1, m1)]
    by_op: dict[Op, list[tuple[int, ...]]] = {
        Op.idiv: [(lo, 1), (hi, m1), (7, 2), (hi, hi), (1, hi), (lo, 2)] + ([(-7, 2), (7, -2), (-7, -2)]
                                                                          if t.is_signed else []),
        Op.shl: [(1, t.bits - 1), (m1, 1), (hi, 0), (lo, t.bits - 1), (3, t.bits // 2 + 1)],
        Op.shr: [(lo, t.bits - 1), (m1, t.bits - 1), (hi, 0), (lo, 1), (hi, t.bits // 2 + 1)],
        Op.iclamp: [(lo, lo, hi), (hi, lo, hi), (0, 0, 0), (m1, 0, 1)],
    }
    if op in by_op:
        return by_op[op]
    return [e[:OPS[op].arity] for e in common]


def _float_edges(op: Op, t: CoopVecType) -> list[tuple[float, ...]]:
    fi = np.finfo(t.dtype)
    big, tiny = float(fi.max), float(fi.tiny)
    half_ulp_of_1 = float(fi.eps) / 2
    by_op: dict[Op, list[tuple[float, ...]]] = {
        Op.fadd: [(1.0, half_ulp_of_1 * 2), (1.0, -1.0), (2.0**-6, 63.0), (1.5, 1.5 * half_ulp_of_1 * 2)],
        Op.fsub: [(1.0, 1.0), (1.0, -half_ulp_of_1 * 2), (63.5, 63.25), (2.0**-6, 2.0**5)],
        Op.fmul: [(1.0, 3.0), (-1.0, 2.0**-6), (2.0**-6, 2.0**-6), (1.0 + 2 * half_ulp_of_1, 1.0 + 2 * half_ulp_of_1)],
        Op.fdiv: [(1.0, 3.0), (3.0, 3.0), (-2.0**5, 2.0**-6), (2.0**-6, 2.0**5), (1.0, -1.0)],
        Op.vts: [(1.0,), (-3.0,), (2.0**-6,)],
        Op.fma: [(1.0, 1.0, -1.0), (3.0, 1.0 / 3, -1.0), (2.0**-6, 2.0**-6, 1.0), (-2.0, 2.0, 4.0)],
        Op.exp: [(0.0,), (1.0,), (-1.0,), (8.0,), (-8.0,)],
        Op.log: [(1.0,), (0.5,), (2.0,), (tiny,), (big,), (1.0 + 2 * half_ulp_of_1,)],
        Op.tanh: [(0.0,), (2.0**-6,), (-1.0,), (4.0,), (-4.0,)],
        Op.atan: [(0.0,), (1.0,), (-1.0,), (2.0**10,), (2.0**-10,)],
        Op.step: [(1.0, 1.0), (1.0, 1.0 - half_ulp_of_1), (0.0, 0.0), (-big, big), (big, -big)],
        Op.fclamp: [(big, -1.0, 1.0), (-big, -1.0, 1.0), (0.5, 0.5, 0.5), (tiny, 0.0, tiny)],
    }
    by_op[Op.nclamp] = by_op[Op.fclamp]
    common = [(big, -big, big), (-big, tiny, 1.0), (tiny, tiny, tiny), (0.0, 1.0, 2.0), (1.0, 1.0, 1.0)]
    return by_op.get(op, [e[:OPS[op].arity] for e in common])


def _convert_edges(t: CoopVecType, r: CoopVecType) -> list[float | int]:
    if t.is_float and r.is_float:
        eps = float(np.finfo(np.float16).eps)
        return [65504.0, -65504.0, 2.0**-14, 1.0 + eps / 2, 1.0 + 3 * eps / 4, -(1.0 + eps / 2)]
    if t.is_float:
        info = np.iinfo(r.dtype)
        cands = [float(info.max), float(info.min), -0.75, 0.5, 2.75, -2.75, 127.875, -128.875, 255.875]
        with np.errstate(over="ignore"):
            above, below = t.dtype.type(float(info.max) + 1), t.dtype.type(float(info.min) - 1)
        cands += [float(np.nextafter(above, t.dtype.type(-INF))), float(np.nextafter(below, t.dtype.type(INF)))]
        out = []
        for x in cands:
            with np.errstate(over="ignore"):
                v = float(t.dtype.type(x))
            if np.isfinite(v) and info.min <= np.trunc(v) <= info.max:
                out.append(v)
        return out
    info = np.iinfo(t.dtype)
    cands = [int(info.max), int(info.min), -1, 0, 255, 256, -129, 128, 2049, 65504, -65504, 2**24 + 1]
    limit = 65504 if r is T.float16 else None
    return [x for x in cands if info.min <= x <= info.max and (limit is None or abs(x) <= limit)]


def _ieee_specials(op: Op, t: CoopVecType, rng: np.random.Generator, out: list[np.ndarray]) -> None:
    """Put the op's defined special values (NaN, infinities, overflow, x / +0) into ~30% of the
    components, in place."""
    shape = out[0].shape
    pick = rng.random(shape) < 0.3
    dt = t.dtype.type
    if op in (Op.load_store, Op.fneg):
        out[0][pick] = rng.choice(np.asarray([NAN, INF, -INF, -0.0], t.dtype), int(pick.sum()))
        return
    if op in (Op.fmin, Op.fmax, Op.fclamp, Op.step, Op.nmin, Op.nmax, Op.nclamp):
        allowed = [INF, -INF] + ([NAN] if op in (Op.nmin, Op.nmax, Op.nclamp) else [])
        k = 0 if op in (Op.fclamp, Op.nclamp) else int(rng.integers(0, 2))
        out[k][pick] = rng.choice(np.asarray(allowed, t.dtype), int(pick.sum()))
        if op in (Op.nmin, Op.nmax):
            both = rng.random(shape) < 0.1
            out[1 - k][both] = dt(NAN)
        if op in (Op.fclamp, Op.nclamp):
            out[1][rng.random(shape) < 0.1] = dt(-INF)
            out[2][rng.random(shape) < 0.1] = dt(INF)
        return
    if op is Op.fdiv:
        out[0][pick] = rng.choice(np.asarray([NAN, INF, -INF], t.dtype), int(pick.sum()))
        by_zero = (rng.random(shape) < 0.2) & ~pick & (out[0] != 0)
        out[1][by_zero] = dt(0.0)
        return
    emax = _FORMAT[t][3]
    huge = np.minimum(np.exp2(emax) * (1 + rng.random(shape)), float(np.finfo(t.dtype).max))  # sums overflow
    root = np.exp2((emax + 1) / 2) * (1 + rng.random(shape))  # products of two overflow
    over = rng.random(shape) < 0.2
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    if op in (Op.fadd, Op.fsub):
        out[0][over] = (sign * huge)[over].astype(t.dtype)
        out[1][over] = ((sign if op is Op.fadd else -sign) * huge)[over].astype(t.dtype)
    elif op is Op.fmul:
        out[0][over] = (sign * root)[over].astype(t.dtype)
        out[1][over] = root[over].astype(t.dtype)
    k = int(rng.integers(0, len(out)))
    out[k][pick & ~over] = rng.choice(np.asarray([NAN, INF, -INF], t.dtype), int((pick & ~over).sum()))


def operands(op: Op, t: CoopVecType, r: CoopVecType, shape: tuple[int, int], rng: np.random.Generator,
             edges: bool, ieee: bool) -> list[np.ndarray]:
    """The operand vectors (each ``shape`` = invocations x N, of type ``t``) of one case."""
    if op is Op.convert:
        out = [_convert_operand(t, r, rng, shape)]
    elif op is Op.load_store:
        out = [normals(rng, shape, t, *_FORMAT[t][2:]) if t.is_float else ints(rng, shape, t)]
    elif t.is_float:
        out = _float_operands(op, t, rng, shape)
    else:
        out = _int_operands(op, t, rng, shape)
    if ieee:
        _ieee_specials(op, t, rng, out)
    if edges:
        tuples = _edges(op, t, r)[:shape[0] * shape[1]]
        for j, o in enumerate(out):
            flat = o.reshape(-1)
            flat[:len(tuples)] = np.asarray([e[j] for e in tuples], dtype=np.float64 if t.is_float else np.int64
                                            ).astype(t.dtype)
    return out
