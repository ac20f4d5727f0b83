"""The Vulkan precision bounds audited at binade edges against exact arithmetic (mpmath at 200
bits, fractions for division): around each edge argument, every representable result within 12
spacings of the expected value is admitted by the oracle exactly when |r - y| <= n ULP(y) holds
for the exact y, with ULP as Vulkan defines it (decision "coopvec-elementwise-rules")."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from ctsgen.ops import coopvec_elementwise as oracle
from ctsgen.ops.coopvec_elementwise_ops import Op
from ctsgen.model.types import CoopVecType as T

FMT = {T.float16: (10, -14), T.float32: (23, -126)}


def vulkan_ulp_exact(y: mpmath.mpf, t: T) -> mpmath.mpf:
    mant, emin = FMT[t]
    a = abs(y)
    e = int(mpmath.floor(mpmath.log(a, 2)))
    while mpmath.mpf(2) ** e > a:
        e -= 1
    while mpmath.mpf(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    sp = mpmath.mpf(2) ** (e - mant)
    return sp / 2 if a == mpmath.mpf(2) ** e and e > emin else sp


def exact_bound(op: Op, a: float, b: float | None, t: T) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(exact y, admissible |r - y|)."""
    x = mpmath.mpf(a)
    if op is Op.fdiv:
        q = Fraction(a) / Fraction(b)
        y = mpmath.mpf(q.numerator) / q.denominator
        return y, 2.5 * vulkan_ulp_exact(y, t)
    if op is Op.exp:
        y = mpmath.exp(x)
        n = {T.float32: 3, T.float16: 1}[t] + 2 * abs(x)
        return y, n * vulkan_ulp_exact(y, t)
    if op is Op.log:
        y = mpmath.log(x)
        if 0.5 <= a <= 2:
            return y, mpmath.mpf(2) ** ({T.float32: -21, T.float16: -7}[t])
        return y, 3 * vulkan_ulp_exact(y, t)
    y = mpmath.atan(x)
    return y, {T.float32: 4096, T.float16: 5}[t] * vulkan_ulp_exact(y, t)


def edge_args(op: Op, t: T) -> list[tuple[float, float | None]]:
    """Arguments whose exact result lies at or next to a power of two, plus the tiny ones."""
    dt = t.dtype

    def around(v: float) -> list[float]:
        c = dt.type(v)
        return [float(np.nextafter(c, dt.type(-np.inf))), float(c), float(np.nextafter(c, dt.type(np.inf)))]

    out: list[tuple[float, float | None]] = []
    if op is Op.exp:
        out.append((0.0, None))
        for k in (-3, -2, -1, 1, 2, 3):
            out += [(v, None) for v in around(k * np.log(2))]
        tiny = [2.0**-20, 2.0**-60] if t is T.float32 else [2.0**-12, 2.0**-14]
        out += [(s * v, None) for v in tiny for s in (1, -1)]
    elif op is Op.log:
        for k in (-3, -1, 1, 2):
            out += [(v, None) for v in around(np.exp(2.0**k)) + around(np.exp(-(2.0**k)))]
        out += [(v, None) for v in around(0.5) + around(2.0) + around(1.0)]
    elif op is Op.atan:
        out += [(v, None) for k in (-4, -1, 0) for v in around(np.tan(2.0**k))]
        out += [(2.0**-10, None), (-(2.0**-10), None)]
    else:
        for b in (3.0, 1.5, 7.0):
            out += [(v, b) for k in (0, 1, 3) for v in around(2.0**k * b)]
    return out


@pytest.mark.parametrize("t", [T.float16, T.float32])
@pytest.mark.parametrize("op", [Op.exp, Op.log, Op.atan, Op.fdiv])
def test_bounds_admit_exactly_what_vulkan_allows_at_binade_edges(op: Op, t: T) -> None:
    dt = t.dtype
    args = edge_args(op, t)
    a = np.array([[x for x, _ in args]], dtype=dt)
    ops = [a] + ([np.array([[y for _, y in args]], dtype=dt)] if op is Op.fdiv else [])
    e = oracle.apply(op, ops, 0.0, t, t)
    sides = oracle.tolerance(op, ops, 0.0, t, t, e, False)[:, 0]
    with mpmath.workprec(200):
        for i, (x, y) in enumerate(args):
            ref, width = exact_bound(op, float(a[0, i]), None if y is None else float(ops[1][0, i]), t)
            r = e[0, i]
            cands = [r]
            lo = hi = r
            for _ in range(12):
                lo, hi = np.nextafter(lo, dt.type(-np.inf)), np.nextafter(hi, dt.type(np.inf))
                cands += [lo, hi]
            for c in cands:
                want = abs(mpmath.mpf(float(c)) - ref) <= width
                d = float(c) - float(r)
                got = (-d <= sides[0, i]) if d < 0 else (d <= sides[1, i])
                assert got == want, (op, t, float(a[0, i]), float(c))
