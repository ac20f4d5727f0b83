"""What element-wise cooperative-vector instructions must return, and how far a device may stray.

Semantics (SPV_NV_cooperative_vector 3.42.8-3.42.14: each instruction acts
on the components of its vectors as it does on scalars):

* :func:`load` / :func:`store`: OpCooperativeVectorLoadNV / StoreNV move N
  components at a byte Offset that is a multiple of 16 (VUID-RuntimeSpirv-
  OpCooperativeVectorLoadNV-10099); a store writes those N components only.
* :func:`convert_values`: OpFConvert, OpConvertFToS/FToU (round toward zero),
  OpConvertSToF/UToF, OpSConvert/OpUConvert (+ OpBitcast), as
  :func:`ctsgen.oracle.numeric.convert` implements them (decision "cm2-conversion-rules").
* :func:`float_op`: the float instructions, computed exactly in float64 (the
  data keep every operation exact there, see elementwise_operands.py) and rounded to nearest
  even; GLSL.std.450 FMin "y if y < x, otherwise x", FMax "y if x < y,
  otherwise x", NMin/NMax the operand that is not NaN, clamps as min(max()),
  Step "0.0 if x < edge, otherwise 1.0".
* :func:`integer_op`: two's-complement wrapping arithmetic, OpSDiv rounding
  toward zero (the quotient OpSRem's "sign of Operand 1" remainder implies),
  OpUDiv, S/U min/max/clamp, shifts, bitwise operations.

Inputs SPIR-V leaves undefined (a zero divisor, a shift amount of at least the
bit width, a float -> integer value out of range, minVal > maxVal) get some
value here without complaint, so the reference backend survives a mutant
that reads the wrong data; :func:`check_domain` keeps them out of drawn cases.

Bounds (:func:`tolerance`, docs/spec-decisions.md "coopvec-elementwise-rules",
from the Vulkan spec's "Precision and Operation of SPIR-V Instructions"):
"correctly rounded" there means either neighbour of the exact result, so
OpFAdd/FSub/FMul/VectorTimesScalar and conversions allow one spacing where
the result is inexact (none with RoundingModeRTE); OpFDiv 2.5 ULP; Exp
(3 + 2|x|) ULP (fp16: 1 + 2|x|); Log 3 ULP outside [0.5, 2], an absolute
error < 2^-21 (fp16: < 2^-7, strict) inside; Atan 4096 ULP (fp16: 5); Fma
inherited from OpFMul then OpFAdd; Tanh inherited from sinh / cosh, which
inherit from exp (decision "inherited-precision": symmetric around the exact
value). A subnormal result may be flushed to zero: the judge admits that
(execute.judge.judge_buffer, decision "flush-to-zero").
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from ctsgen.ops.coopvec_elementwise_ops import FLOAT_TYPES, OPS, Op
from ctsgen.model.types import ComponentType, CoopVecType
from ctsgen.oracle import numeric

ALIGN = 16  # bytes: VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099
EXACT_FLOAT_OPS = (Op.load_store, Op.fneg, Op.fmin, Op.fmax, Op.fclamp, Op.nmin, Op.nmax, Op.nclamp, Op.step)
CORRECTLY_ROUNDED = (Op.fadd, Op.fsub, Op.fmul, Op.vts)
#: ULP bounds (single, half precision) of the Vulkan precision table
EXP_ULP = {CoopVecType.float32: 3.0, CoopVecType.float16: 1.0}  # + 2|x|
ATAN_ULP = {CoopVecType.float32: 4096.0, CoopVecType.float16: 5.0}
LOG_ABS = {CoopVecType.float32: 2.0**-21, CoopVecType.float16: 2.0**-7}  # inside [0.5, 2]
DIV_ULP = 2.5
#: OpFDiv's bound holds for |y| in [2^-126, 2^126] (fp16: [2^-14, 2^14])
DIV_RANGE = {CoopVecType.float32: (2.0**-126, 2.0**126), CoopVecType.float16: (2.0**-14, 2.0**14)}


def component(t: CoopVecType) -> ComponentType:
    """The cooperative-matrix twin of a vector component type (for ctsgen.oracle.numeric)."""
    return ComponentType[t.name]


# -- memory ----------------------------------------------------------------
def _indices(byte_offsets: np.ndarray, itemsize: int, n: int) -> np.ndarray:
    off = np.asarray(byte_offsets, dtype=np.int64)
    if np.any(off % ALIGN):
        raise ValueError(f"cooperative-vector byte offsets {off[off % ALIGN != 0][:4].tolist()} are not multiples "
                         f"of {ALIGN} (VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099); align them")
    return off[:, None] // itemsize + np.arange(n)


def load(buf: np.ndarray, byte_offsets: np.ndarray, n: int) -> np.ndarray:
    """OpCooperativeVectorLoadNV at each byte offset: one row of ``n`` components per offset."""
    return buf[_indices(byte_offsets, buf.dtype.itemsize, n)]


def store(buf: np.ndarray, byte_offsets: np.ndarray, values: np.ndarray) -> None:
    """OpCooperativeVectorStoreNV of each row of ``values`` at its byte offset (only its components)."""
    buf[_indices(byte_offsets, buf.dtype.itemsize, values.shape[-1])] = values


# -- semantics ---------------------------------------------------------------
def apply(op: Op, operands: list[np.ndarray], scalar: float, t: CoopVecType, r: CoopVecType
          ) -> np.ndarray:
    """The result vectors of ``op`` on ``operands`` (each invocations x N, of type ``t``)."""
    if op is Op.load_store:
        return operands[0].copy()
    if op is Op.convert:
        return convert_values(operands[0], t, r)
    if t in FLOAT_TYPES:
        return float_op(op, operands, scalar, t)
    return integer_op(op, operands, t)


def convert_values(a: np.ndarray, t: CoopVecType, r: CoopVecType) -> np.ndarray:
    """The conversion instruction from ``t`` to ``r`` (float -> integer values out of range become 0)."""
    if t.is_float and not r.is_float:
        info = np.iinfo(r.dtype)
        with np.errstate(invalid="ignore"):
            cut = np.trunc(a.astype(np.float64))
            a = np.where(np.isfinite(cut) & (cut >= info.min) & (cut <= info.max), a, 0).astype(t.dtype)
    return numeric.convert(a, component(t), component(r))


def _fmin(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(y < x, y, x)


def _fmax(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(x < y, y, x)


def float_op(op: Op, operands: list[np.ndarray], scalar: float, t: CoopVecType) -> np.ndarray:
    """A float instruction, exact in float64 then rounded to nearest even in ``t``."""
    dt = t.dtype
    a, b, c = (operands + [None, None])[:3]
    with np.errstate(all="ignore"):
        x = a.astype(np.float64)
        y = None if b is None else b.astype(np.float64)
        exact = {
            Op.fneg: lambda: -x, Op.fadd: lambda: x + y, Op.fsub: lambda: x - y, Op.fmul: lambda: x * y,
            Op.fdiv: lambda: x / y, Op.vts: lambda: x * float(scalar),
            Op.fma: lambda: x * y + c.astype(np.float64),
            Op.exp: lambda: np.exp(x), Op.log: lambda: np.log(x), Op.tanh: lambda: np.tanh(x),
            Op.atan: lambda: np.arctan(x),
        }
        if op in exact:
            return exact[op]().astype(dt)
        picks = {
            Op.fmin: lambda: _fmin(a, b), Op.fmax: lambda: _fmax(a, b), Op.fclamp: lambda: _fmin(_fmax(a, b), c),
            Op.nmin: lambda: np.fmin(a, b), Op.nmax: lambda: np.fmax(a, b),
            Op.nclamp: lambda: np.fmin(np.fmax(a, b), c), Op.step: lambda: np.where(b < a, 0.0, 1.0),
        }
        return picks[op]().astype(dt)


def _wrap(v: np.ndarray, t: CoopVecType) -> np.ndarray:
    """Values (int64 or uint64) modulo 2^bits, as ``t`` (two's complement)."""
    mask = np.uint64((1 << t.bits) - 1)
    bits = np.dtype(f"uint{t.bits}")
    return (np.asarray(v).astype(np.uint64) & mask).astype(bits).view(t.dtype)


def integer_op(op: Op, operands: list[np.ndarray], t: CoopVecType) -> np.ndarray:
    """An integer instruction on vectors of ``t`` (wrapping; see the module docstring)."""
    a, b, c = (operands + [None, None])[:3]
    ua = a.astype(np.int64).astype(np.uint64)
    ub = None if b is None else b.astype(np.int64).astype(np.uint64)
    if op is Op.ineg:
        return _wrap(np.uint64(0) - ua, t)
    if op in (Op.iadd, Op.isub, Op.imul):
        return _wrap(ua + ub if op is Op.iadd else ua - ub if op is Op.isub else ua * ub, t)
    if op is Op.idiv:
        x, y = a.astype(np.int64), b.astype(np.int64)
        y = np.where(y == 0, 1, y)
        return _wrap(np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y)), t)
    if op in (Op.shl, Op.shr):
        amount = b.astype(np.int64) % t.bits
        if op is Op.shl:
            return _wrap(ua << amount.astype(np.uint64), t)
        return (a >> amount.astype(a.dtype)).astype(t.dtype)  # arithmetic for signed, logical for unsigned
    table = {Op.imin: lambda: np.minimum(a, b), Op.imax: lambda: np.maximum(a, b),
             Op.iclamp: lambda: np.minimum(np.maximum(a, b), c),
             Op.band: lambda: a & b, Op.bor: lambda: a | b, Op.bxor: lambda: a ^ b, Op.bnot: lambda: ~a}
    return table[op]().astype(t.dtype)


# -- what drawn data must satisfy -------------------------------------------
def check_domain(op: Op, operands: list[np.ndarray], scalar: float, t: CoopVecType, r: CoopVecType,
                 ieee: bool) -> None:
    """Raise ValueError if the data hold an input SPIR-V / Vulkan leave undefined for ``op``
    (or, without ``ieee``, a NaN, infinity, subnormal or an overflowing result)."""
    a, b, c = (operands + [None, None])[:3]
    problems = []
    if op is Op.convert and t.is_float and not r.is_float:
        cut = np.trunc(a.astype(np.float64))
        info = np.iinfo(r.dtype)
        if np.any(~np.isfinite(cut) | (cut < info.min) | (cut > info.max)):
            problems.append(f"a value truncates outside [{info.min}, {info.max}] (undefined)")
    if op is Op.idiv:
        if np.any(b == 0):
            problems.append("a divisor is 0")
        if t.is_signed and np.any((a == np.iinfo(t.dtype).min) & (b == -1)):
            problems.append("INT_MIN / -1")
    if op in (Op.shl, Op.shr) and np.any((b.astype(np.int64) < 0) | (b.astype(np.int64) >= t.bits)):
        problems.append(f"a shift amount outside [0, {t.bits})")
    if op in (Op.fclamp, Op.nclamp, Op.iclamp) and np.any(b > c):
        problems.append("minVal > maxVal")
    if t in FLOAT_TYPES:
        problems += _float_domain(op, a, b, operands, scalar, t, ieee)
    if r.is_float and not ieee:
        with np.errstate(all="ignore"):
            res = apply(op, operands, scalar, t, r).astype(np.float64)
        if np.any(~np.isfinite(res)):
            problems.append("an overflowing result (Inf or the largest finite value may come back)")
        if op is Op.convert and np.any((res != 0) & (np.abs(res) < float(np.finfo(r.dtype).tiny))):
            problems.append("a subnormal result (it may be flushed)")
    if problems:
        raise ValueError(f"{op.value} on {t.name}: " + "; ".join(problems) + " -> draw data inside the domain")


def _float_domain(op: Op, a: np.ndarray, b: np.ndarray | None, operands: list[np.ndarray], scalar: float,
                  t: CoopVecType, ieee: bool) -> list[str]:
    vals = [o.astype(np.float64) for o in operands] + ([np.float64(scalar)] if op is Op.vts else [])
    tiny = float(np.finfo(t.dtype).tiny)
    out = []
    if any(np.any((v != 0) & (np.abs(v) < tiny)) for v in vals):
        out.append("a subnormal operand (it may be flushed)")
    special = any(np.any(~np.isfinite(v)) for v in vals)
    if special and not (ieee and OPS[op].ieee):
        out.append("a NaN or infinity outside an ieee variant of an op that defines it")
    if op in (Op.fmin, Op.fmax, Op.fclamp, Op.step) and any(np.any(np.isnan(v)) for v in vals):
        out.append("a NaN operand (which operand results is undefined)")
    if op is Op.fdiv:
        lo, hi = DIV_RANGE[t]
        y, x = np.abs(b.astype(np.float64)), a.astype(np.float64)
        ranged = (y >= lo) & (y <= hi)
        by_zero = (y == 0) & np.isfinite(x) & (x != 0) & ieee
        if np.any(~ranged & ~by_zero):
            out.append(f"a divisor outside [{lo}, {hi}] (no precision given) that is not an ieee x/0")
    if op is Op.log and np.any(a.astype(np.float64) <= 0):
        out.append("log of a value <= 0")
    return out


# -- tolerances ----------------------------------------------------------------
def exact_side(op: Op, a: np.ndarray, b: np.ndarray | None, y: np.ndarray) -> np.ndarray:
    """sign(exact - y) where the float64 result ``y`` is a power of two (0 elsewhere).

    Only there does float64's rounding hide the exact value's binade (e.g. exp(2^-60) is
    1.0 in float64 but lies in [1, 2), whose ULP is twice [0.5, 1)'s). Those few elements
    are settled with fractions (division) or mpmath at 200 bits (the rest)."""
    side = np.zeros(np.shape(y))
    f, _ = np.frexp(np.abs(y))
    idx = np.flatnonzero(np.isfinite(y) & (np.abs(f) == 0.5))
    if idx.size == 0:
        return side
    import mpmath  # local: startup (only for the rare binade-edge elements)
    fn = {Op.exp: mpmath.exp, Op.log: mpmath.log, Op.atan: mpmath.atan, Op.tanh: mpmath.tanh}
    av, yv = np.broadcast_to(a, np.shape(y)).ravel(), np.asarray(y).ravel()
    bv = None if b is None else np.broadcast_to(b, np.shape(y)).ravel()
    flat = side.ravel()
    with mpmath.workprec(200):
        for k in idx:  # binade-edge elements only (not a per-element hot path)
            if op is Op.fdiv:
                ex = Fraction(float(av[k])) / Fraction(float(bv[k]))
                d = ex - Fraction(float(yv[k]))
            else:
                d = fn[op](mpmath.mpf(float(av[k]))) - mpmath.mpf(float(yv[k]))
            flat[k] = (d > 0) - (d < 0)
    return flat.reshape(np.shape(y))


def _mp_vulkan_ulp(y: "mpmath.mpf", t: CoopVecType) -> "mpmath.mpf":
    """Vulkan's ULP of an exact (mpmath) value: its binade's spacing, the one below at a power of two."""
    import mpmath  # local: startup
    mant, emin, _ = numeric.float_format(component(t))
    v = abs(y)
    if v == 0:
        return mpmath.mpf(2) ** (emin - mant)
    _, e = mpmath.frexp(v)  # v = m 2^e, 0.5 <= m < 1
    k = max(int(e) - 1, emin)
    sp = mpmath.mpf(2) ** (k - mant)
    return sp / 2 if v == mpmath.mpf(2) ** k and k > emin else sp


def _exact_limits(op: Op, a: float, b: float | None, t: CoopVecType) -> tuple[float, float]:
    """The smallest and largest values of ``t`` within Vulkan's bound of the exact result
    (mpmath at 200 bits, fractions for division). Remembered per operand bits (``float.hex``
    tells -0 from +0): nearly every call is a zero operand (the data's zeros; atan(0), exp(0))."""
    return _exact_limits_of(op, a.hex(), None if b is None else b.hex(), t)


@functools.lru_cache(maxsize=4096)
def _exact_limits_of(op: Op, a: str, b: str | None, t: CoopVecType) -> tuple[float, float]:
    import mpmath  # local: startup
    with mpmath.workprec(200):
        return _exact_limits_mp(op, float.fromhex(a), None if b is None else float.fromhex(b), t)


def _exact_limits_mp(op: Op, a: float, b: float | None, t: CoopVecType) -> tuple[float, float]:
    import mpmath  # local: startup
    x = mpmath.mpf(a)
    if op is Op.fdiv:
        q = Fraction(a) / Fraction(b)
        y = mpmath.mpf(q.numerator) / q.denominator
    else:
        y = {Op.exp: mpmath.exp, Op.log: mpmath.log, Op.atan: mpmath.atan}[op](x)
    u = _mp_vulkan_ulp(y, t)
    w = {Op.fdiv: lambda: DIV_ULP * u, Op.exp: lambda: (EXP_ULP[t] + 2 * abs(x)) * u,
         Op.atan: lambda: ATAN_ULP[t] * u,
         Op.log: lambda: mpmath.mpf(LOG_ABS[t]) if 0.5 <= a <= 2.0 else 3 * u}[op]()
    lo_mp, hi_mp = y - w, y + w
    dt = t.dtype.type

    def grid(v: "mpmath.mpf") -> list[float]:
        d_lo, d_hi = numeric.neighbours(np.array(float(v)), component(t))
        return sorted({float(np.nextafter(dt(d_lo), dt(-np.inf))), float(d_lo), float(d_hi),
                       float(np.nextafter(dt(d_hi), dt(np.inf)))})

    if op is Op.log and 0.5 <= a <= 2.0:  # "Absolute error < 2^-21": the bound itself is excluded
        return (min(g for g in grid(lo_mp) if mpmath.mpf(g) > lo_mp),
                max(g for g in grid(hi_mp) if mpmath.mpf(g) < hi_mp))
    return (min(g for g in grid(lo_mp) if mpmath.mpf(g) >= lo_mp),
            max(g for g in grid(hi_mp) if mpmath.mpf(g) <= hi_mp))


#: A bound computed in float64 this close (relative) to a representable value cannot say on
#: which side of it the exact bound lies: :func:`settle_edges` decides those exactly.
_EDGE = 2.0 ** -44


def _near_grid(v: np.ndarray, t: CoopVecType) -> np.ndarray:
    """Whether a representable value of ``t`` lies within 2^-44 relative of ``v`` (or on it)."""
    n_lo, n_hi = numeric.neighbours(v, component(t))
    return np.minimum(v - n_lo, n_hi - v) <= np.abs(v) * _EDGE


def settle_edges(op: Op, a: np.ndarray, b: np.ndarray | None, t: CoopVecType, lo: np.ndarray, hi: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi] (float64 approximations of exact +- bound) made exact: widened by 2^-44 relative
    (no representable value lies that close to them), except where one does; those elements
    (rare) get the exact limits of :func:`_exact_limits`."""
    lo = np.array(lo, dtype=np.float64)
    hi = np.array(hi, dtype=np.float64)
    close = np.isfinite(lo) & np.isfinite(hi) & (_near_grid(lo, t) | _near_grid(hi, t))
    lo, hi = lo - np.abs(lo) * _EDGE, hi + np.abs(hi) * _EDGE
    if close.any():
        av = np.broadcast_to(a, lo.shape)
        bv = None if b is None else np.broadcast_to(b, lo.shape)
        for k in zip(*np.nonzero(close)):  # boundary elements only
            lo[k], hi[k] = _exact_limits(op, float(av[k]), None if bv is None else float(bv[k]), t)
    return lo, hi


def vulkan_ulp(x: np.ndarray, t: CoopVecType, side: np.ndarray | None = None) -> np.ndarray:
    """ulp(x) as the Vulkan spec defines it: the least distance between two distinct finite
    floats a <= x <= b. That is the spacing of x's binade, or of the binade below at an exact
    power of two (and the subnormal spacing at 0). ``side`` (from :func:`exact_side`): where
    ``x`` is a float64 approximation that landed on a power of two, the sign of exact - x; an
    exact value of larger magnitude lies in the binade above (its spacing), not on the edge."""
    mant, emin, _ = numeric.float_format(component(t))
    v = np.abs(np.asarray(x, dtype=np.float64))
    sp = numeric.ulp(v, component(t))
    f, _ = np.frexp(v)
    pow2 = (v > 2.0**emin) & (f == 0.5)
    if side is not None:
        pow2 &= np.sign(np.asarray(x, dtype=np.float64)) * side <= 0
    return np.where(v == 0, 2.0 ** (emin - mant), np.where(pow2, sp / 2, sp))


def tolerance(op: Op, operands: list[np.ndarray], scalar: float, t: CoopVecType, r: CoopVecType,
              expected: np.ndarray, ieee: bool) -> np.ndarray:
    """Per-component two-sided bound (2 x shape: how far below / above ``expected`` a device
    result may lie; execute.judge.tolerance_sides), 0 for exact and integer results.

    Every bound is an interval of admissible results [lo, hi] around the exact value:
    "correctly rounded" = its two neighbours (decision "faithful-rounding"), ULP bounds =
    exact +- n ULP, "inherited from" a formula = [x - E, x + E] over the formula's results
    (decision "inherited-precision": Fma, Tanh). Widened by 2^-45 relative where the exact value
    is an irrational approximated in float64. A flushed subnormal is the judge's to admit."""
    e = expected.astype(np.float64)
    if not r.is_float or op in EXACT_FLOAT_OPS:
        return np.zeros((2,) + e.shape)
    if op is Op.convert:
        return numeric.conversion_tolerance(operands[0], component(t), component(r), expected)
    a, b, c = [o.astype(np.float64) for o in operands] + [None] * (3 - len(operands))
    widen = False
    with np.errstate(all="ignore"):
        if op in CORRECTLY_ROUNDED:
            x = {Op.fadd: lambda: a + b, Op.fsub: lambda: a - b, Op.fmul: lambda: a * b,
                 Op.vts: lambda: a * float(scalar)}[op]()  # exact in float64 (elementwise_operands.py)
            lo, hi = (e, e) if ieee else numeric.neighbours(x, component(t))
        elif op is Op.fdiv:
            x = a / b
            w = DIV_ULP * vulkan_ulp(x, t, exact_side(op, a, b, x))
            lo, hi = settle_edges(op, a, b, t, x - w, x + w)
        elif op is Op.fma:
            lo, hi = _fma_interval(a, b, c, t)
        elif op is Op.tanh:
            lo, hi = _tanh_interval(a, t)
            widen = True
        else:
            lo, hi = settle_edges(op, a, None, t, *_transcendental_interval(op, a, t))
        sides = numeric.tolerance_sides(e, lo, hi, widen=widen)
        return np.where(np.isfinite(e) & np.isfinite(sides), sides, 0.0)


def _two_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s, err with s = fl(x + y) and s + err = x + y exactly (Knuth's TwoSum, float64)."""
    s = x + y
    yy = s - x
    return s, (x - (s - yy)) + (y - yy)


def _fma_interval(a: np.ndarray, b: np.ndarray, c: np.ndarray, t: CoopVecType) -> tuple[np.ndarray, np.ndarray]:
    """Fma "inherited from OpFMul followed by OpFAdd" (decision "inherited-precision"): the formula's
    permitted results are a*b rounded to either neighbour, plus c, rounded to either neighbour
    (a*b + c and c + a*b give the same ones); Fmin / Fmax are the least and greatest of those four,
    and the result may lie anywhere in [x - E, x + E], E = max(|x - Fmin|, |x - Fmax|), x = a*b + c
    exactly. That holds [Fmin, Fmax] and so both neighbours of x (a fused evaluation).

    a*b is exact in float64 (elementwise_operands.py: at most 48 significant bits), a rounded product plus c too;
    x = a*b + c may not be (up to 70 bits in float32), so it is kept as a TwoSum pair. A bound
    2x - F that float64 cannot place exactly and that lies within 2^-44 relative of a
    representable value is settled in fractions (rare elements)."""
    comp = component(t)
    p = a * b
    cands = [n for pr in numeric.neighbours(p, comp) for n in numeric.neighbours(pr + c, comp)]
    fmin, fmax = np.minimum.reduce(cands), np.maximum.reduce(cands)
    x, err = _two_sum(p, c)
    far_low = (x - fmin) >= (fmax - x)  # Fmin is the farther one: E = x - Fmin
    mirror, m_err = _two_sum(2 * x, -np.where(far_low, fmin, fmax))  # 2x - F = mirror + m_err + 2 err
    lo = np.minimum(np.where(far_low, fmin, mirror), fmin)  # never inside the hull (a near tie's rounding)
    hi = np.maximum(np.where(far_low, mirror, fmax), fmax)
    settle = ((err != 0) | (m_err != 0)) & _near_grid(mirror, t)
    for k in zip(*np.nonzero(settle)):  # boundary elements only
        lo[k], hi[k] = _fma_exact_limits(float(a[k]), float(b[k]), float(c[k]), float(fmin[k]), float(fmax[k]), t)
    return lo, hi


def _fma_exact_limits(a: float, b: float, c: float, fmin: float, fmax: float, t: CoopVecType
                      ) -> tuple[float, float]:
    """The least and greatest values of ``t`` in [x - E, x + E] (:func:`_fma_interval`), in fractions."""
    x = Fraction(a) * Fraction(b) + Fraction(c)
    e = max(abs(x - Fraction(fmin)), abs(x - Fraction(fmax)))
    lo, hi = x - e, x + e
    dt = t.dtype.type

    def grid(v: Fraction) -> list[float]:
        d_lo, d_hi = numeric.neighbours(np.array(float(v)), component(t))
        return [float(np.nextafter(dt(d_lo), dt(-np.inf))), float(d_lo), float(d_hi),
                float(np.nextafter(dt(d_hi), dt(np.inf)))]

    return min(g for g in grid(lo) if Fraction(g) >= lo), max(g for g in grid(hi) if Fraction(g) <= hi)


def _transcendental_interval(op: Op, a: np.ndarray, t: CoopVecType) -> tuple[np.ndarray, np.ndarray]:
    """[y - w, y + w] around the exact y (float64) with the Vulkan table's width w."""
    y = {Op.exp: np.exp, Op.log: np.log, Op.atan: np.arctan}[op](a)
    u = vulkan_ulp(y, t, exact_side(op, a, None, y))
    if op is Op.exp:
        w = (EXP_ULP[t] + 2 * np.abs(a)) * u
    elif op is Op.log:
        w = np.where((a >= 0.5) & (a <= 2.0), LOG_ABS[t], 3 * u)
    else:
        w = ATAN_ULP[t] * u
    return y - w, y + w


def _least_minus_ulps(q_lo: np.ndarray, q_hi: np.ndarray, n: float, t: CoopVecType) -> np.ndarray:
    """A lower bound on min (q - n ULP(q)) over q in [q_lo, q_hi]: the least result an operation
    bounded by n ULP may return for an exact value anywhere there. ULP is taken as the spacing of
    q's binade (at a power of two the one above, not Vulkan's below: outward). q - n ULP(q) falls
    as q falls, except just above a power of two, where ULP doubles: only the first power of two
    above q_lo can undercut q_lo's value (q_lo >= 0; below 0 the magnitude and ULP grow together)."""
    comp = component(t)
    at_lo = q_lo - n * numeric.ulp(q_lo, comp)
    _, e = np.frexp(np.where(q_lo > 0, q_lo, 1.0))
    p = np.ldexp(1.0, e)  # the least power of two above q_lo
    at_p = p - n * numeric.ulp(p, comp)
    return np.where((q_lo > 0) & (p <= q_hi), np.minimum(at_lo, at_p), at_lo)


def _tanh_interval(a: np.ndarray, t: CoopVecType) -> tuple[np.ndarray, np.ndarray]:
    """Tanh "inherited from sinh() / cosh()", those from (exp(x) -/+ exp(-x)) * 0.5 (decision
    "inherited-precision"), computed for |x| (tanh is odd and so is every step's bound):

    * exp(+-x): the representable values within (3 + 2|x|) ULP (fp16 1 + 2|x|) of the exact one;
    * the difference and the sum: correctly rounded (either neighbour), * 0.5 exact;
    * sinh() and cosh() themselves: [s - E, s + E] around the exact sinh / cosh over those
      results, then their representable values;
    * the quotient: 2.5 ULP around each exact quotient of such a sinh and cosh;
    * tanh: [y - E, y + E] around the exact tanh over the quotient's Fmin / Fmax.

    Bounds in float64 from irrational values, so outward (representable limits found after a
    2^-45 relative widening; the quotient's ULP the binade's, :func:`_least_minus_ulps`)."""
    comp = component(t)
    sign = np.where(a < 0, -1.0, 1.0)
    x = np.abs(a)
    n = EXP_ULP[t] + 2 * x
    ep, em = np.exp(x), np.exp(-x)
    ep_lo, ep_hi = numeric.within_grid(*_around(ep, n * vulkan_ulp(ep, t, exact_side(Op.exp, x, None, ep))), comp)
    em_lo, em_hi = numeric.within_grid(*_around(em, n * vulkan_ulp(em, t, exact_side(Op.exp, -x, None, em))), comp)
    d_lo, d_hi = numeric.rounded_either_way(ep_lo - em_hi, ep_hi - em_lo, comp)  # exact differences in float64
    s_lo, s_hi = numeric.rounded_either_way(ep_lo + em_lo, ep_hi + em_hi, comp)
    sinh_lo, sinh_hi = numeric.within_grid(*numeric.inherited(np.sinh(x), d_lo / 2, d_hi / 2), comp)
    cosh_lo, cosh_hi = numeric.within_grid(*numeric.inherited(np.cosh(x), s_lo / 2, s_hi / 2), comp)
    q_lo = sinh_lo / np.where(sinh_lo >= 0, cosh_hi, cosh_lo)  # cosh() > 0
    q_hi = sinh_hi / np.where(sinh_hi >= 0, cosh_lo, cosh_hi)
    fmin = _least_minus_ulps(q_lo, q_hi, DIV_ULP, t)
    fmax = -_least_minus_ulps(-q_hi, -q_lo, DIV_ULP, t)
    lo, hi = numeric.inherited(np.tanh(x), fmin, fmax)
    return np.where(sign < 0, -hi, lo), np.where(sign < 0, -lo, hi)


def _around(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return y - w, y + w
