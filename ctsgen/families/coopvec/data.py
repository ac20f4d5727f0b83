"""Test data of a coopvec case: drawn so float results are meaningful, with edge values.

Floats: every value is exact in its interpretation (so the input and
matrix conversions are exact whatever a faithful implementation does);
magnitudes 2^-3..2 keep sums far from fp16 overflow; inputs are >= 0 and
weights positive with probability 3/4, and any output whose condition
number S/|y| (S = sum |w x| + |b|) exceeds 4 gets its weight row made
positive: the tolerance, proportional to S, then stays within a small
factor of |y| (no cancellation passing as agreement). Edge values: the
interpretation's max normal in an input column paired with min-subnormal
multiples in that weight column, min normals and subnormals.
Integers: full range of the stored type, saturation boundaries of the
conversion, biases near the int32 limits (wrapping).

``grid`` data (float paths): multiples of 1/4 (exact in fp16, E4M3 and E5M2),
sparse enough that the sum of |terms| of every output stays below
:data:`GRID_SUM_LIMIT`; every partial sum is then a multiple of 1/16 below
128, exact in fp16, so any accumulation order and precision gives the exact
result: the tolerance is zero (only the sign of a zero may differ). This
keeps a one-term error visible at K = 512, where the tolerance model of
``random`` data is about 17 fp16 ulps wide.
``special`` data (float MatMuls): every weight positive; invocation 0 has +Inf
and invocation 1 -Inf in one input component (interpretations with infinities),
invocation 2 has every component at the interpretation's max normal, which
overflows an fp16 result to +Inf for large enough row sums (a row that would
land near the overflow threshold is scaled down by 8 instead, so no result is
ambiguous). With mixed signs an fp16 accumulator could overflow to the sign of
an early partial sum, not of the total (an H100 fuzz session found exactly that).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ctsgen.core.family import CaseData
from ctsgen.ops import coopvec as oracle
from ctsgen.families.coopvec.variant import CaseOperands, CoopVecVariant
from ctsgen.ops.coopvec_matrix import MATMUL_OPS, CoopVecOp, MatrixLayout, outer_terms
from ctsgen.model.types import ComponentType, CoopVecType
from ctsgen.oracle.values import from_bits, sentinel_bits

T = CoopVecType


def exact_floats(rng: np.random.Generator, shape: tuple[int, ...], t: CoopVecType, positive: float) -> np.ndarray:
    """Values exact in ``t`` with magnitudes 2^-3..2, positive with probability ``positive``."""
    mag = np.exp2(rng.uniform(-3, 1, shape))
    sign = np.where(rng.random(shape) < positive, 1.0, -1.0)
    return (sign * mag).astype(t.dtype).astype(np.float64)


GRID = 0.25
GRID_SUM_LIMIT = 120.0  # < 128 = 2^11 * 1/16: a multiple of 1/16 below it is exact in fp16


def grid_floats(rng: np.random.Generator, shape: tuple[int, ...], limit: float = 2.0,
                density: float = 1.0) -> np.ndarray:
    """Multiples of 1/4 in [-limit, limit], each nonzero with probability at most ``density``."""
    n = int(limit / GRID)
    k = rng.integers(-n, n, shape, endpoint=True)
    return np.where(rng.random(shape) < density, k, 0) * GRID


def _ints(rng: np.random.Generator, shape: tuple[int, ...], lo: int, hi: int, edges: list[int]) -> np.ndarray:
    v = rng.integers(lo, hi, shape, endpoint=True, dtype=np.int64)
    if edges:
        mask = rng.random(shape) < 0.2
        v = np.where(mask, rng.choice(np.asarray(edges, dtype=np.int64), shape), v)
    return v


def _stored_input(rng: np.random.Generator, v: CoopVecVariant, edges: bool) -> np.ndarray:
    """Raw Input vectors (invocations x components) of the stored input type."""
    shape = (v.invocations, v.in_components)
    it, interp = v.inputType, v.inputInterpretation
    if interp.is_packed:
        return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    if interp.is_float:
        x = exact_floats(rng, shape, interp, 1.0)
        if edges:
            fi = ml_dtypes.finfo(interp.dtype)
            x[:, -1] = float(fi.smallest_normal)
            if v.K > 2:
                x[:, -2] = float(fi.smallest_subnormal) * 3
        return x.astype(it.dtype)
    lo, hi = (-128, 127) if interp is T.sint8 else (0, 255)
    if it.is_float:  # float -> int: halves test round-to-nearest-even, beyond-range values saturate
        x = rng.integers(2 * lo - 80, 2 * hi + 80, shape) / 2.0
        if edges:
            x[:, :min(6, v.K)] = [lo - 0.5, hi + 0.5, 2.5, -3.5, 1e9, -1e9][:min(6, v.K)]
        return x.astype(it.dtype)
    tlo, thi = {T.sint8: (-128, 127), T.uint8: (0, 255), T.sint32: (-2**31, 2**31 - 1),
                T.uint32: (0, 2**32 - 1)}[it]
    wide = _ints(rng, shape, max(tlo, lo - 300), min(thi, hi + 300),
                 [e for e in (tlo, thi, lo, hi, lo - 1, hi + 1, 0) if tlo <= e <= thi] if edges else [])
    return wide.astype(it.dtype)


def _matrix_values(rng: np.random.Generator, v: CoopVecVariant, edges: bool) -> np.ndarray:
    """The effective M x K matrix values (float64 / int64) of MatrixInterpretation."""
    mt = v.matrixInterpretation
    if mt.is_float:
        return exact_floats(rng, (v.M, v.K), mt, 0.75)
    lo, hi = (-128, 127) if mt is T.sint8 else (0, 255)
    return _ints(rng, (v.M, v.K), lo, hi, [lo, hi, 0, -1 if lo else 1] if edges else [])


def _condition(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, mt: CoopVecType, it: CoopVecType,
               rng: np.random.Generator, edges: bool) -> tuple[np.ndarray, np.ndarray]:
    """Apply float edge pairs, then make rows with condition number > 4 positive."""
    if edges and v_k(w) > 3:
        k = v_k(w) - 3  # an input column at its max normal, its weights min-subnormal multiples
        x[:, k] = float(ml_dtypes.finfo(it.dtype).max)
        w[:, k] = float(ml_dtypes.finfo(mt.dtype).smallest_subnormal) * rng.integers(1, 4, w.shape[0])
    bias = 0 if b is None else np.abs(b)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (np.abs(x) @ np.abs(w).T + bias) / np.abs(x @ w.T + (0 if b is None else b))
    bad = (kappa > 4).any(axis=0)
    w[bad] = np.abs(w[bad])
    return x, w


def v_k(w: np.ndarray) -> int:
    return w.shape[1]


def _place_matrix(v: CoopVecVariant, stored: np.ndarray, moff: int, stride: int) -> np.ndarray:
    """Bytes of the matrix buffer region: the strided RowMajor/ColumnMajor layout at
    MatrixOffset, or a tight row-major source for an optimal layout."""
    if v.optimal:
        return np.ascontiguousarray(stored.astype(v.source_type.dtype)).view(np.uint8).ravel()
    t = v.matrixInterpretation
    lines = stored if v.layout is MatrixLayout.RowMajor else stored.T
    raw = np.ascontiguousarray(lines.astype(t.dtype)).view(np.uint8)
    buf = np.zeros(moff + (lines.shape[0] - 1) * stride + raw.shape[1], dtype=np.uint8)
    idx = moff + np.arange(lines.shape[0])[:, None] * stride + np.arange(raw.shape[1])[None, :]
    buf[idx] = raw
    return buf


def _vectors(v: CoopVecVariant, rows: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """One vector per invocation, laid out one per in_stride bytes."""
    step = v.in_stride // np.dtype(dtype).itemsize
    out = np.zeros((v.invocations, step), dtype=dtype)
    out[:, :rows.shape[1]] = rows
    return out.ravel()


def case_data(case: CaseOperands) -> CaseData:
    v = case.shader
    rng = np.random.default_rng(case.seed)
    if v.op in MATMUL_OPS:
        return _matmul_data(case, v, rng)
    return _training_data(case, v, rng)


def _grid_matmul(rng: np.random.Generator, v: CoopVecVariant) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Grid inputs, weights and bias whose every output has sum |terms| <= GRID_SUM_LIMIT."""
    x = grid_floats(rng, (v.invocations, v.K))
    w = grid_floats(rng, (v.M, v.K), density=min(1.0, 48.0 / v.K))
    b = grid_floats(rng, (v.M,)) if v.op is CoopVecOp.matmuladd else None
    bound = np.cumsum(np.abs(w) * np.abs(x).max(axis=0), axis=1) + (0 if b is None else np.abs(b)[:, None])
    w[bound > GRID_SUM_LIMIT] = 0.0
    return x, w, b


def _special_inputs(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, v: CoopVecVariant,
                    rng: np.random.Generator) -> None:
    """Infinities and max normals in the inputs of invocations 0, 1 and 2 (in place; see the module docstring)."""
    fi = ml_dtypes.finfo(v.inputInterpretation.dtype)
    n = x.shape[0]
    w[:] = np.abs(w)  # partial sums then grow monotonically: where and how they overflow is order-independent
    if np.isinf(np.asarray(np.inf).astype(v.inputInterpretation.dtype)):  # E4M3 (fn) has no infinity
        x[0, rng.integers(v.K)] = np.inf
        if n > 1:
            x[1, rng.integers(v.K)] = -np.inf
    if n > 2:
        x[2] = float(fi.max)
        y = x[2] @ w.T + (0 if b is None else b)
        res_max = float(ml_dtypes.finfo(v.resultType.dtype).max)
        if ((np.abs(y) > res_max / 2) & (np.abs(y) < res_max * 2)).any():
            x[2] /= 8  # an exact power-of-two scaling: every row far from the threshold


def _matmul_data(case: CaseOperands, v: CoopVecVariant, rng: np.random.Generator) -> CaseData:
    edges = case.values == "edges"
    if case.values == "grid":
        x, w, b = _grid_matmul(rng, v)
        raw_x = x.astype(v.inputType.dtype)
    else:
        raw_x = _stored_input(rng, v, edges)
        x = oracle.convert_input(raw_x, v.inputType, v.inputInterpretation)
        w = _matrix_values(rng, v, edges)
        bt = v.biasInterpretation
        b = None
        if v.op is CoopVecOp.matmuladd:
            if bt.is_float:
                b = exact_floats(rng, (v.M,), bt, 1.0)
            else:
                b = _ints(rng, (v.M,), -2**31, 2**31 - 1, [2**31 - 1, -2**31, 2**31 - 200] if edges else [])
        if v.resultType.is_float:
            x, w = _condition(x.astype(np.float64), w, b, v.matrixInterpretation, v.inputInterpretation, rng, edges)
            if case.values == "special":
                _special_inputs(x, w, b, v, rng)
            if v.inputType.is_float and not v.inputInterpretation.is_packed:
                raw_x = x.astype(v.inputType.dtype)
                # the values the shader's input conversion gives from what is stored (the same x, bit for bit,
                # under the spec): a deviation of that conversion (--expect-deviation) then moves the result
                x = oracle.convert_input(raw_x, v.inputType, v.inputInterpretation).astype(x.dtype)
    bt = v.biasInterpretation
    stored = w.T if v.transpose else w
    mbytes = _place_matrix(v, stored, case.matrixOffset, case.matrixStride)
    bias = np.zeros(case.biasOffset + v.M * bt.dtype.itemsize, dtype=np.uint8)
    if b is not None:
        bias[case.biasOffset:] = np.ascontiguousarray(b.astype(bt.dtype)).view(np.uint8)
    inp = _vectors(v, raw_x, v.inputType.dtype)
    rt = v.resultType
    step = v.out_stride // rt.dtype.itemsize
    rc = ComponentType[rt.name]
    out0 = np.full(v.invocations * step, from_bits(sentinel_bits(rc), rc), dtype=rt.dtype)  # the store writes M
    initial = [inp, mbytes, bias, out0] + ([np.zeros(0, np.uint8)] if v.optimal else [])
    y = oracle.matmul(x, w, b, rt)
    expected = out0.copy()
    v.write_rows(expected, 0, y)
    exp_list: list[np.ndarray | None] = [None, None, None, expected] + ([None] if v.optimal else [])
    tol = None
    if rt.is_float:
        t = np.full(expected.shape, np.nan)  # the padding after each vector keeps the poison, bit for bit
        t.reshape(v.invocations, step)[:, :v.M] = 0.0
        if case.values != "grid":
            with np.errstate(invalid="ignore", over="ignore"):
                t.reshape(v.invocations, step)[:, :v.M] = oracle.matmul_tolerance(x, w, b, rt)
        tol = [None, None, None, t] + ([None] if v.optimal else [])
    return CaseData(case.params(), initial, exp_list, tol)


def _training_data(case: CaseOperands, v: CoopVecVariant, rng: np.random.Generator) -> CaseData:
    """fp16 vectors and matrix; ``grid`` values keep every partial sum exact (|sums| < 128 on the
    1/16 grid: products of two multiples of 1/4 in [-1, 1], 32 of them, plus an initial value <= 2)."""
    f16 = np.float16
    grid = case.values == "grid"

    def values(shape: tuple[int, ...], limit: float) -> np.ndarray:
        return (grid_floats(rng, shape, limit) if grid else exact_floats(rng, shape, T.float16, 1.0)).astype(f16)

    if v.op is CoopVecOp.outer_product:
        a, b = values((v.invocations, v.M), 1.0), values((v.invocations, v.K), 1.0)
        c0 = values((v.M, v.K), 2.0)
        terms = outer_terms(a, b)
        expected = oracle.accumulate_f16(c0, terms).ravel()
        tol = np.zeros(expected.shape) if grid else \
            oracle.accumulate_tolerance(c0, terms, product_rounding=True).ravel()
        return CaseData(case.params(), [_vectors(v, a, f16), c0.ravel(), _vectors(v, b, f16), np.zeros(0, np.uint8)],
                        [None, expected, None, None], [None, tol, None, None])
    vecs = values((v.invocations, v.K), 2.0)
    pad = case.biasOffset // 2
    acc0 = np.zeros(pad + v.K, dtype=f16)
    acc0[:pad] = np.float16(-1.5)  # elements before the offset must stay untouched
    acc0[pad:] = values((v.K,), 2.0)
    expected = acc0.copy()
    expected[pad:] = oracle.accumulate_f16(acc0[pad:], vecs)
    tol = np.zeros(acc0.shape, np.float64)
    tol[:pad] = np.nan  # bit for bit
    if not grid:
        tol[pad:] = oracle.accumulate_tolerance(acc0[pad:], vecs, product_rounding=False)
    return CaseData(case.params(), [_vectors(v, vecs, f16), acc0], [None, expected], [None, tol])
