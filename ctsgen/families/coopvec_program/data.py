"""Test data of a coopvec-program case, drawn inside the exact domain (program.py).

* Input vectors: integers in [-INPUT, INPUT] ([0, INPUT] for an unsigned
  InputInterpretation), packed four to a word for a packed one.
* Each layer's weights: integers in [-WEIGHT, WEIGHT] ([0, WEIGHT] for an
  unsigned MatrixInterpretation), biases in [-BIAS, BIAS] (at most a quarter
  of the layer's limit). Drawn after the layer's actual input is known
  (the composed oracle evaluates the chain up to it): with X_k the largest
  |x_k| over the invocations, a row whose sum_k |w_mk| X_k + |b_m| could pass
  the layer's limit keeps each weight with a probability that halves the
  expected sum, then drops the weights past the longest prefix that fits.
  Every partial sum of the MatMulAdd, in any order, then stays within the
  limit: an integer exact in the Result Type (and in the next layer's
  interpretation, after the activation and the conversions).

A MatMulAdd repeated per invocation (a ``loop``, program.py) is drawn the same
way, then (``trips`` > 1) the bound is carried through the repetitions: with
X^(0) the input's largest |x_k| and X^(t+1)_m = sum_k |w_mk| X^(t)_k + |b_m|,
a row that passes the limit within ``trips`` repetitions loses its last
nonzero weight until none does (X^(t) only shrinks as weights go; with no
weight left a row is its bias, within a quarter of the limit). Every partial
sum of every trip is then within the limit as well.

Integer layers whose result needs no limit (integer arithmetic wraps, exact in
any order) keep their weights; float layers always have one (2^11 for float16).

Float domain (``float_data``; docs/spec-decisions.md "program-float-domain"):
the same limits bound the magnitudes, but every drawn value is a full-mantissa
float of its type, |v| in [1/8, INPUT] (inputs) or [1/8, 1] (weights) or
[1/8, BIAS] (biases), random sign: normal in float16, E4M3 and E5M2 (no
subnormal operand a device may flush), rounded to nearest from a uniform draw.
"""

from __future__ import annotations

import numpy as np

from ctsgen.families.coopvec_program.program import UNBOUNDED, Layer

#: magnitude of drawn input components, by kind of InputInterpretation (float, integer)
INPUT = {True: 4, False: 16}
#: magnitude of drawn weights and biases, by kind of interpretation (float, integer)
WEIGHT = {True: 3, False: 8}
BIAS = {True: 4, False: 64}


def _floats(rng: np.random.Generator, shape: tuple[int, ...], top: float, dtype: np.dtype) -> np.ndarray:
    """Full-mantissa values of ``dtype`` with |v| in [1/8, top] (rounded to nearest), random sign."""
    v = rng.uniform(0.125, top, shape) * rng.choice([-1.0, 1.0], shape)
    return v.astype(dtype).astype(np.float64)


def _ints(rng: np.random.Generator, shape: tuple[int, ...], bound: int, unsigned: bool) -> np.ndarray:
    return rng.integers(0 if unsigned else -bound, bound, shape, endpoint=True)


def input_vectors(rng: np.random.Generator, layer: Layer, invocations: int, limit: int,
                  float_data: bool = False) -> np.ndarray:
    """The stored input vectors (invocations x components of the Input type) of the first layer."""
    interp = layer.inputInterpretation
    bound = min(INPUT[interp.is_float], limit)
    if float_data:
        return _floats(rng, (invocations, layer.K), bound, layer.inputType.dtype).astype(layer.inputType.dtype)
    unsigned = not interp.is_float and not interp.is_signed
    if interp.is_packed:
        v = _ints(rng, (invocations, layer.K), bound, unsigned).astype(np.int8 if interp.is_signed else np.uint8)
        return np.ascontiguousarray(v).view("<u4").astype(np.uint32)
    return _ints(rng, (invocations, layer.K), bound, unsigned).astype(layer.inputType.dtype)


def layer_values(rng: np.random.Generator, layer: Layer, x: np.ndarray, limit: int,
                 float_data: bool = False, trips: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The effective M x K weights and the M biases of a layer whose input (as InputInterpretation
    values, invocations x K) is ``x``, so that every output's sum |terms| + |bias| <= ``limit``,
    through ``trips`` repetitions of a looped (square) layer."""
    M, K = layer.M, layer.K
    mt, bt = layer.matrixInterpretation, layer.biasInterpretation
    bound = BIAS[bt.is_float] if limit >= UNBOUNDED else min(BIAS[bt.is_float], limit // 4)
    if float_data:
        w = _floats(rng, (M, K), 1.0, mt.dtype)
        b = _floats(rng, (M,), bound, bt.dtype) if bound >= 1 else np.zeros(M)
    else:
        w = _ints(rng, (M, K), WEIGHT[mt.is_float], not mt.is_float and not mt.is_signed)
        b = _ints(rng, (M,), bound, False)
    if limit >= UNBOUNDED:
        return w, b
    X = np.abs(x.astype(np.float64)).max(axis=0)
    budget = limit - np.abs(b)
    total = (np.abs(w) * X).sum(axis=1)
    keep = np.minimum(1.0, 0.5 * budget / np.maximum(total, 1.0))
    w = np.where(rng.random((M, K)) < keep[:, None], w, 0)
    w = np.where(np.cumsum(np.abs(w) * X, axis=1) <= budget[:, None], w, 0)
    return _within_trips(w, b, X, limit, trips), b


def trip_bounds(w: np.ndarray, b: np.ndarray, X: np.ndarray, trips: int) -> np.ndarray:
    """trips x M: the bound X^(t) of each component after t = 1 .. trips repetitions (module docstring)."""
    out = []
    aw, ab = np.abs(w.astype(np.float64)), np.abs(b.astype(np.float64))
    for _ in range(trips):
        X = aw @ X + ab
        out.append(X)
    return np.asarray(out).reshape(trips, w.shape[0])


def _within_trips(w: np.ndarray, b: np.ndarray, X: np.ndarray, limit: int, trips: int) -> np.ndarray:
    """``w`` with weights dropped (each offending row's last nonzero one at a time) until ``trips``
    repetitions stay within ``limit``."""
    if trips <= 1:
        return w
    w = w.copy()
    while True:
        over = (trip_bounds(w, b, X, trips) > limit).any(axis=0) & (w != 0).any(axis=1)
        if not over.any():
            return w
        rows = np.flatnonzero(over)
        last = w.shape[1] - 1 - np.argmax((w[rows] != 0)[:, ::-1], axis=1)
        w[rows, last] = 0


def place_matrix(layer: Layer, w: np.ndarray, moff: int, stride: int) -> np.ndarray:
    """The bytes of a layer's matrix buffer for the effective M x K matrix ``w``: for RowMajor /
    ColumnMajor the stored matrix (K x M when transposed) line by line, MatrixStride bytes apart
    from MatrixOffset; for an optimal layout the tight row-major source the backend converts
    (MatrixConversion). The inverse of ``ctsgen.ops.coopvec_matrix.CoopVecSignature.read_matrix``."""
    v = layer.variant()
    stored = w.T if layer.transpose else w
    if v.optimal:
        return np.ascontiguousarray(stored.astype(v.source_type.dtype)).view(np.uint8).ravel()
    lines = stored if layer.layout.name == "RowMajor" else stored.T
    raw = np.ascontiguousarray(lines.astype(layer.matrixInterpretation.dtype)).view(np.uint8)
    buf = np.zeros(moff + (lines.shape[0] - 1) * stride + raw.shape[1], np.uint8)
    buf[moff + np.arange(lines.shape[0])[:, None] * stride + np.arange(raw.shape[1])[None, :]] = raw
    return buf


def place_bias(buf: np.ndarray, layer: Layer, b: np.ndarray, boff: int) -> None:
    """The biases as BiasInterpretation values at byte BiasOffset of the shared bias buffer."""
    raw = np.ascontiguousarray(b.astype(layer.biasInterpretation.dtype)).view(np.uint8)
    buf[boff:boff + raw.size] = raw
