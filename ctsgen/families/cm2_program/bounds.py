"""The float domain of cm2-program: each node's error bound, and the stored values' tolerances.

docs/spec-decisions.md, "cm2-program-float-domain". A float-domain case
loads full-significand float data (case.py) and is judged against the
composed oracle's values (oracle.py) within an absolute bound per stored
element, propagated node by node by ctsgen.oracle.propagation from the
oracle's (expected, not observed) values. Per node kind:

* load, view load, constant, generated matrix: 0 (data movement; constants
  and clamp values are the exact domain's small integers);
* decode loads: 0. Their blocks stay the exact domain's (decoded values are
  integers in [-2, 2], decision "cm2-program-decode-small"): the decode family
  is bit-exact only for scales that make every decoded value exact, and has no
  bound for a decode function's rounding of full-significand scales;
* transpose, a Use-only or widening conversion, store: exact (the bound moves
  with its element); a select: 0 where it writes s, else the operand's;
* a narrowing conversion (float32 -> float16), +, -, *, scalar multiply: one
  correctly rounded operation (either neighbour, or a flush) on operands
  anywhere within their bounds;
* affine ``x * s + m + T(row * 16 + col)``: OpFMul, then two OpFAdd, each
  correctly rounded, the oracle rounding the whole once;
* MulAdd: the inherited |A| e_B + e_A |B| + e_A e_B + e_C plus the cm2-gemm
  family's bound at the device operands' magnitude S = (|A| + e_A)(|B| + e_B)
  + |C| + e_C (``ops.cm2_gemm.tile_error``: gamma_K plus two roundings,
  partial sums rounded to nearest in any order, and u |y|, so a device that
  family passes on one MulAdd passes here) plus K + 1 smallest normals (a
  subnormal partial sum flushed);
* reduce max / min: exact, Lipschitz 1: the largest operand bound of the
  element's reduction domain;
* reduce sum: the operand bounds summed over the domain plus cm2-reduce's any-order
  bound gamma_{n-1} sum (|x| + e) (``oracle.numeric.sum_error_bound``) plus n - 1
  smallest normals.

Where float64's "exact" value of a sum may itself round (float32 operands), the
bound adds :func:`ctsgen.oracle.propagation.float64_error`.
"""

from __future__ import annotations

import numpy as np

from ctsgen.ops.cm2_gemm import tile_error
from ctsgen.families.cm2_program import oracle
from ctsgen.families.cm2_program.oracle import Run
from ctsgen.families.cm2_program.program import NO_OPERANDS, SIDE, SINKS, W_C0, W_R0, Op
from ctsgen.ops.cm2_reduce import Combine, domain_size
from ctsgen.ops import cm2_reduce as cm2_reduce_ops
from ctsgen.oracle import propagation as prop
from ctsgen.oracle.numeric import sum_error_bound


def _f64(run: Run, i: int) -> np.ndarray:
    return run.values[i].astype(np.float64)


def _operand(run: Run, bounds: list[np.ndarray | None], i: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(oracle value as float64, bound) of node i's operand k."""
    a = run.program.nodes[i].args[k]
    return _f64(run, a), bounds[a]


def muladd_bound(run: Run, i: int, bounds: list[np.ndarray | None]) -> np.ndarray:
    n = run.program.nodes[i]
    (a, ea), (b, eb), (c, ec) = (_operand(run, bounds, i, k) for k in range(3))
    k = a.shape[1]
    exact = a @ b + c
    spread = prop.matmul_spread(a, ea, b, eb) + ec
    s = prop.matmul_magnitude(a, ea, b, eb) + np.abs(c) + ec
    f64 = prop.float64_error(s, k + 1)
    dt = n.type.component.dtype
    own = tile_error(s, np.abs(exact) + spread + f64, k, n.type.component) + (k + 1) * prop.smallest_normal(dt)
    return prop.rounded_step(exact, spread + f64, run.values[i], dt, own=own)


def reduce_bound(run: Run, i: int, bounds: list[np.ndarray | None]) -> np.ndarray:
    n = run.program.nodes[i]
    x, e = _operand(run, bounds, i, 0)
    shape = (n.type.rows, n.type.cols)
    de = cm2_reduce_ops.reduction_domains(e, n.mode)
    if n.combine is not Combine.sum:  # max / min: exact, Lipschitz 1 in the largest operand error
        return np.broadcast_to(prop.exact_step(de.max(axis=2)), shape).copy()
    dx = cm2_reduce_ops.reduction_domains(x, n.mode)
    terms = domain_size(n.mode, *x.shape)
    mag = (np.abs(dx) + de).sum(axis=2)
    own = sum_error_bound(mag, terms, n.type.component) + (terms - 1) * prop.smallest_normal(n.type.component.dtype)
    f64 = prop.float64_error(np.abs(dx).sum(axis=2), terms)
    bound = prop.rounded_step(dx.sum(axis=2), de.sum(axis=2) + f64, run.values[i][:dx.shape[0], :dx.shape[1]],
                              n.type.component.dtype, own=own)
    return np.broadcast_to(bound, shape).copy()


def perelement_bound(run: Run, i: int, bounds: list[np.ndarray | None]) -> np.ndarray:
    n = run.program.nodes[i]
    x, e = _operand(run, bounds, i, 0)
    if n.fn == "select":  # (row == r0 || col == c0) ? s : x
        r, c = np.indices(x.shape)
        return np.where((r == run.word(i, W_R0)) | (c == run.word(i, W_C0)), 0.0, prop.exact_step(e))
    m, em = _operand(run, bounds, i, 1)
    dt, s = n.type.component.dtype, float(run.scalar(i))
    r, c = np.indices(x.shape)
    g = (r * SIDE + c).astype(np.float64)  # T(row * 16 + col): an integer below 2^8, exact
    xs = x * s  # exact in float64
    spread = prop.inner_step(xs + m, prop.inner_step(xs, abs(s) * e, dt) + em, dt)
    exact = xs + m + g
    return prop.rounded_step(exact, spread + prop.float64_error(np.abs(xs) + np.abs(m) + g, 2), run.values[i], dt)


def arith_bound(run: Run, i: int, bounds: list[np.ndarray | None]) -> np.ndarray:
    n = run.program.nodes[i]
    (x, ex), (y, ey) = _operand(run, bounds, i, 0), _operand(run, bounds, i, 1)
    if n.op is Op.mul:
        exact, spread = x * y, prop.product_spread(x, ex, y, ey)  # a product of two float32 is exact in float64
    else:
        exact = x + y if n.op is Op.add else x - y
        spread = ex + ey + prop.float64_error(np.abs(x) + np.abs(y), 1)
    return prop.rounded_step(exact, spread, run.values[i], n.type.component.dtype)


def node_bound(run: Run, i: int, bounds: list[np.ndarray | None]) -> np.ndarray | None:
    """Node i's bound on |device - oracle| per element (None for a store), given its operands'."""
    n = run.program.nodes[i]
    if n.op in SINKS:
        return None
    if n.op in NO_OPERANDS:
        return np.zeros((n.type.rows, n.type.cols))
    if n.op is Op.muladd:
        return muladd_bound(run, i, bounds)
    if n.op is Op.reduce:
        return reduce_bound(run, i, bounds)
    if n.op is Op.perelement:
        return perelement_bound(run, i, bounds)
    if n.op in (Op.add, Op.sub, Op.mul):
        return arith_bound(run, i, bounds)
    x, e = _operand(run, bounds, i, 0)
    if n.op is Op.scale:
        return prop.scale_step(x, e, float(run.scalar(i)), run.values[i], n.type.component.dtype)
    if n.op is Op.transpose:
        return prop.exact_step(e).T.copy()
    src = run.program.nodes[n.args[0]].type.component
    if n.type.component.dtype.itemsize < src.dtype.itemsize:  # a narrowing conversion: one rounding
        return prop.rounded_step(x, e, run.values[i], n.type.component.dtype)
    return prop.exact_step(e)  # a Use change or a widening conversion


def node_bounds(run: Run) -> list[np.ndarray | None]:
    """Every node's bound (SIDE x SIDE; None for a store) from an evaluated run
    (``run.values``: every node's oracle value)."""
    out: list[np.ndarray | None] = []
    for i in range(len(run.program.nodes)):
        out.append(node_bound(run, i, out))
    return out


def stored_bounds(run: Run, bounds: list[np.ndarray | None]) -> list[np.ndarray]:
    """Each buffer's tolerance (float64, the buffer's size): every store writes its value's bounds
    where it writes the value (the oracle's own store, ``oracle.eval_store`` / ``eval_storeview`` / ``eval_storekhr``,
    run on the bounds), 0 everywhere else (input data, and output elements that keep their poison)."""
    tol = [np.zeros(b.size) for b in run.buffers]
    shadow = Run(run.program, run.words, tol, run.offsets, list(bounds))
    for i, n in enumerate(run.program.nodes):
        if n.op in SINKS:
            {Op.store: oracle.eval_store, Op.storeview: oracle.eval_storeview,
             Op.storekhr: oracle.eval_storekhr}[n.op](shadow, i)
    return tol
