"""Absolute error bounds propagated through a chain of float operations (a program's float domain).

Rule (docs/spec-decisions.md, "program-float-domain"). Each node has the
oracle's value ``v`` (the single-operation oracle applied to the oracle's
values of its operands: the exact result on those operands, rounded once to
nearest even) and a bound ``e`` with |device - v| <= e for every device that
keeps the rounding rules. For a node computing f of an operand whose device
value lies within ``e_in`` of the oracle's, with exact result ``x = f(v_in)``:

    |device - v| <= |fl_dev(f(d)) - f(d)|  +  |f(d) - f(v_in)|  +  |f(v_in) - v|
                    the device's rounding     the inherited error   the oracle's own
                    (allowance at |x| + s)    s <= sensitivity*e_in  rounding, computed

* :func:`exact_step`: max / min / clamp against scalars (GLSL.std.450 FMax,
  FMin, FClamp: exact, Lipschitz 1), a widening float conversion: e = e_in.
* :func:`rounded_step`: one correctly rounded operation (OpFAdd, OpFMul,
  OpVectorTimesScalar, OpFConvert to a narrower float; Vulkan "Precision and
  Operation of SPIR-V Instructions": "correctly rounded", i.e. either
  neighbour of the exact value, with denormals that may be flushed):
  e = s + :func:`rounding_allowance` (|x| + s) + |x - v|.
* a sum of products (a MatMulAdd) is :func:`rounded_step` with s the
  inherited spread sum_k |w_k| e_k and the device's rounding allowance the
  accumulation model's (the caller passes it); a product of two inexact
  operands (element-wise or a matrix product) spreads by :func:`product_spread`
  / :func:`matmul_spread`.
* a rounding the device makes but the oracle does not (fma's product, an
  inner step of a compound expression): :func:`inner_step`, whose result is a
  spread for the next step.
* where the oracle's float64 "exact" value may itself round (sums of float32
  values of far apart exponents), :func:`float64_error` bounds that.

:func:`rounding_allowance` is the largest error of one faithful rounding, or
of a flush to zero, of a value of magnitude at most ``m``: one spacing of the
binade (at most 2u m) plus the smallest normal (a subnormal result rounded or
flushed; a subnormal operand flushed is the same perturbation of the value it
reads, so a node's bound already covers its consumers reading it flushed).

Every bound is computed in float64 and widened by :data:`SLACK` relative per
step, far more than float64's own rounding of the bound arithmetic and of the
exact values (products and sums of 8/16-bit floats with small scalars are
exact in float64). tests/test_propagation.py checks the rule against exact
rational arithmetic (fractions.Fraction) with every rounding choice the rules
allow, worst case and at random.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

#: relative widening of every propagated bound (float64 rounding of the bound arithmetic itself)
SLACK = 2.0**-40


def unit_roundoff(dtype: np.dtype | type) -> float:
    """u = 2^-p of a float format with p significand bits (float16 2^-11, E4M3 2^-4, E5M2 2^-3)."""
    return 2.0 ** -(ml_dtypes.finfo(dtype).nmant + 1)


def smallest_normal(dtype: np.dtype | type) -> float:
    return float(ml_dtypes.finfo(dtype).smallest_normal)


def rounding_allowance(magnitude: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """Largest |fl(x) - x| of a faithful rounding (either neighbour) or a flush to zero of any x
    with |x| <= ``magnitude`` in the format ``dtype``: 2u |x| (one spacing of a normal binade)
    plus the smallest normal (the subnormal range, rounded or flushed)."""
    return 2 * unit_roundoff(dtype) * np.asarray(magnitude, np.float64) + smallest_normal(dtype)


def oracle_gap(oracle: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|oracle - exact|: the oracle's own rounding of the exact value, computed (float64,
    widened by one float64 rounding of the difference)."""
    d = np.abs(np.asarray(oracle, np.float64) - np.asarray(exact, np.float64))
    return d * (1 + 2.0**-52)


def widen(bound: np.ndarray) -> np.ndarray:
    return np.asarray(bound, np.float64) * (1 + SLACK)


def exact_step(err: np.ndarray) -> np.ndarray:
    """An exact, Lipschitz-1 operation (max, min, clamp against exact scalars; a widening
    conversion): the operand's error carries over unchanged."""
    return np.asarray(err, np.float64)


def rounded_step(exact: np.ndarray, spread: np.ndarray, oracle: np.ndarray, dtype: np.dtype | type,
                 own: np.ndarray | None = None) -> np.ndarray:
    """Bound of a node whose exact result on the oracle's operands is ``exact``, whose exact
    result on any device operands lies within ``spread`` of it, whose oracle value is ``oracle``
    and whose device result is the exact result on its operands plus at most ``own`` (default:
    one faithful rounding to ``dtype`` at magnitude |exact| + spread, :func:`rounding_allowance`)."""
    spread = np.asarray(spread, np.float64)
    if own is None:
        own = rounding_allowance(np.abs(np.asarray(exact, np.float64)) + spread, dtype)
    return widen(spread + own + oracle_gap(oracle, exact))


def scale_step(v: np.ndarray, err: np.ndarray, s: float, oracle: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """x * s (OpVectorTimesScalar / OpFMul by an exact scalar): sensitivity |s|, one rounding."""
    return rounded_step(np.asarray(v, np.float64) * s, abs(s) * np.asarray(err, np.float64), oracle, dtype)


def add_step(v: np.ndarray, err: np.ndarray, s: float, oracle: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """x + s (OpFAdd of an exact scalar): sensitivity 1, one rounding."""
    return rounded_step(np.asarray(v, np.float64) + s, err, oracle, dtype)


def inner_step(exact: np.ndarray, spread: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """The spread of an intermediate result the device rounds and the oracle does not (it rounds
    the whole expression once): the inherited ``spread`` plus one faithful rounding (or flush) at
    magnitude |exact| + spread. The next step takes it as its spread."""
    spread = np.asarray(spread, np.float64)
    return spread + rounding_allowance(np.abs(np.asarray(exact, np.float64)) + spread, dtype)


def fma_step(v: np.ndarray, err: np.ndarray, s: float, t: float, oracle: np.ndarray,
             dtype: np.dtype | type) -> np.ndarray:
    """fma(x, s, t): Vulkan's precision "inherited from OpFMul followed by OpFAdd", so two
    roundings (a fused evaluation's one rounding is within them): the product's spread |s| e
    plus its rounding, then the sum's rounding; the oracle rounds the exact x s + t once."""
    x = np.asarray(v, np.float64)
    return rounded_step(x * s + t, inner_step(x * s, abs(s) * np.asarray(err, np.float64), dtype), oracle, dtype)


def dot_spread(w: np.ndarray, err: np.ndarray) -> np.ndarray:
    """sum_k |w_mk| e_k for every invocation's operand errors (invocations x K): how far the
    exact W d + b on device operands d lies from W v + b (invocations x M)."""
    return np.asarray(err, np.float64) @ np.abs(np.asarray(w, np.float64)).T


def dot_magnitude(w: np.ndarray, x: np.ndarray, err: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """S = sum_k |w_mk| (|x_k| + e_k) + |b_m|: a bound on every partial sum's magnitude of the
    products on any device operands (what an accumulation model's rounding allowance scales)."""
    s = (np.abs(np.asarray(x, np.float64)) + np.asarray(err, np.float64)) @ np.abs(np.asarray(w, np.float64)).T
    return s if bias is None else s + np.abs(np.asarray(bias, np.float64))


def product_spread(x: np.ndarray, ex: np.ndarray, y: np.ndarray, ey: np.ndarray) -> np.ndarray:
    """max |x' y' - x y| over |x' - x| <= ex, |y' - y| <= ey (element-wise): |x| ey + |y| ex + ex ey."""
    x, y = np.abs(np.asarray(x, np.float64)), np.abs(np.asarray(y, np.float64))
    ex, ey = np.asarray(ex, np.float64), np.asarray(ey, np.float64)
    return x * ey + y * ex + ex * ey


def matmul_spread(a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray) -> np.ndarray:
    """How far the exact A'B' of device operands (|A' - A| <= ea, |B' - B| <= eb element-wise) lies
    from AB: |A| eb + ea |B| + ea eb (matrix products of the magnitudes)."""
    a, b = np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64))
    ea, eb = np.asarray(ea, np.float64), np.asarray(eb, np.float64)
    return a @ eb + ea @ b + ea @ eb


def matmul_magnitude(a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray) -> np.ndarray:
    """(|A| + ea)(|B| + eb): a bound on sum_k |a'_ik b'_kj| over every device operand (what a
    dot product's accumulation error scales)."""
    return (np.abs(np.asarray(a, np.float64)) + ea) @ (np.abs(np.asarray(b, np.float64)) + eb)


def float64_error(magnitude: np.ndarray, terms: int) -> np.ndarray:
    """Bound on float64's own error in an "exact" sum of ``terms`` values (any order) whose
    absolute values add up to ``magnitude``: gamma_terms(2^-53) magnitude. Zero where the sum
    is exact (float16 data), but float32 values of far apart exponents round in float64."""
    nu = terms * 2.0**-53
    return np.asarray(magnitude, np.float64) * (nu / (1 - nu))
