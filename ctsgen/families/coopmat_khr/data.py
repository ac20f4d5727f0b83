"""The memory each load of a coopmat-khr case reads: every component a valid operand, by construction.

A load may read one component into several matrix elements (stride 0, overlapping lines), so the
values are drawn per memory component, not per matrix element: every component of operand k's
memory is a value of that operand's domain (ctsgen.ops.elementwise_operands: divisors never 0, float
operands in the range where results stay normal and exact in float64, conversion sources whose result
is defined; ctsgen.ops.cm2_convert.source_values for a bfloat16 source). With ``edges`` the
instruction's edge tuples are then written where the matrix's first elements load from. One joint
rule follows: OpSDiv's INT_MIN / -1 (signed overflow, undefined) cannot be read, because a divisor
component of -1 read beside a dividend of INT_MIN becomes 1.

MulAdd: float A and B with magnitudes in [2^-3, 2) and C in [2^-3, 32) (no overflow of a float16
accumulator for K <= 64); integer operands over their whole range, half small, C half near its type's
limits (saturation and wrap both reached). SaturatingAccumulation leaves an overflowing A x B undefined
(ctsgen.ops.khr_muladd.saturation_defined): with 8-bit operands a signed 32-bit result cannot overflow
for K < 2^16, and an unsigned result underflows only through a negative product, so there the signed
operands are drawn non-negative; wider operands (or a longer K) are drawn with |x| <= isqrt(max / K).
"""

from __future__ import annotations

import math

import numpy as np

from ctsgen.model.types import ComponentType, CoopVecType, MatrixType
from ctsgen.families.coopmat_khr.operation import FLOAT_OP, INT_OP, Op, element_type
from ctsgen.ops.cm2_convert import source_values
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.ops.elementwise_operands import ints, normals, operands
from ctsgen.ops.khr_addressing import KhrAccess, component_indices, extent_components
from ctsgen.oracle.values import pattern_values

#: unbiased exponents of MulAdd's float A / B and C values
AB_EXPONENTS, C_EXPONENTS = (-3, 0), (-3, 4)


def memories(op: Op, mats: tuple[MatrixType, ...], result: MatrixType, saturating: bool, acc: list[KhrAccess],
             seed: int, edges: bool) -> list[np.ndarray]:
    """Each load's memory (components of its matrix's type, as long as the access reaches) for ``op``
    on the loaded matrix types ``mats`` with their accesses ``acc``."""
    rng = np.random.Generator(np.random.PCG64(seed))
    sizes = [extent_components(a, m.rows, m.cols, m.component) for a, m in zip(acc, mats)]
    src, res = mats[0].component, result.component
    if op is Op.muladd:
        return [_muladd_values(k, mats[k].component, res, saturating, mats, rng, n) for k, n in enumerate(sizes)]
    if op is Op.copy:
        return [pattern_values("random", src, sizes[0], seed)]
    if op is Op.convert and ComponentType.bfloat16 in (src, res):
        return [source_values(src, res, sizes[0], seed)]
    t, r = element_type(src), element_type(res)
    eop = ElementOp.convert if op is Op.convert else (FLOAT_OP if src.is_float else INT_OP)[op]
    background = operands(eop, t, r, (1, max(sizes)), rng, False, False)
    mems = [background[k].ravel()[:n].copy() for k, n in enumerate(sizes)]
    if edges:
        m = mats[0]
        laden = operands(eop, t, r, (m.rows, m.cols), rng, True, False)
        for k, mem in enumerate(mems):
            mem[component_indices(acc[k], m.rows, m.cols, src)] = laden[k]
    if op is Op.div and src in (ComponentType.sint8, ComponentType.sint32):
        _no_signed_overflow(mems, acc, mats[0])
    return mems


def _no_signed_overflow(mems: list[np.ndarray], acc: list[KhrAccess], m: MatrixType) -> None:
    """Where a dividend of INT_MIN is loaded beside a divisor of -1, that divisor component becomes 1."""
    x_idx = component_indices(acc[0], m.rows, m.cols, m.component)
    y_idx = component_indices(acc[1], m.rows, m.cols, m.component)
    lowest = np.iinfo(m.component.dtype).min
    bad = (mems[0][x_idx] == lowest) & (mems[1][y_idx] == -1)
    mems[1][y_idx[bad]] = 1


def _muladd_values(k: int, comp: ComponentType, res: ComponentType, saturating: bool, mats: tuple[MatrixType, ...],
                   rng: np.random.Generator, n: int) -> np.ndarray:
    """Operand k's memory (A, B, C) of a MulAdd."""
    if comp.is_float:
        lo, hi = C_EXPONENTS if k == 2 else AB_EXPONENTS
        if comp is ComponentType.bfloat16:  # float32 normals rounded to bfloat16: still normal, in range
            return normals(rng, (n,), CoopVecType.float32, lo, hi).astype(comp.dtype)
        return normals(rng, (n,), CoopVecType[comp.name], lo, hi)
    values = ints(rng, (n,), CoopVecType[comp.name])
    if k == 2:  # near the result type's limits: saturation and wrap-around reachable
        info = np.iinfo(comp.dtype)
        near = rng.integers(0, 1 << 17, n)
        limit = np.where(rng.random(n) < 0.5, int(info.max) - near, int(info.min) + near)
        return np.where(rng.random(n) < 0.5, limit, values.astype(np.int64)).astype(comp.dtype)
    if not saturating:
        return values
    v = values.astype(np.int64)
    signed_operands = any(m.component in (ComponentType.sint8, ComponentType.sint32) for m in mats[:2])
    if res in (ComponentType.uint32, ComponentType.uint8) and signed_operands:
        v = np.where(v < 0, -(v + 1), v)
    # |A x B| <= K cap^2 <= the result's largest value (8-bit operands: no cap below 2^16 terms)
    cap = math.isqrt(int(np.iinfo(res.dtype).max) // mats[0].cols)
    return np.where(np.abs(v) > cap, np.sign(v) * (np.abs(v) % (cap + 1)), v).astype(comp.dtype)
