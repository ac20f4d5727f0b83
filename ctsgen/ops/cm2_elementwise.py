"""Expected results of OpCooperativeMatrixPerElementOpNV (SPV_NV_cooperative_matrix2).

Result element (row, col) is Func(row, col, M[row][col], extra operands...),
where an extra operand that is a cooperative matrix contributes its element
at (row, col) and any other extra operand is passed as is. The two
functions here both depend on the coordinates, so an implementation that
passes a wrong (row, col) gives a visibly wrong element:

* ``affine``: ``x * s + m + T(row * COLS + col)`` (scalar ``s``, matrix
  operand ``m``): every element gets a distinct offset (modulo 2^8 for 8-bit
  integers). Integers wrap; float data are small integers so every step is
  exact (float16 only for matrices of at most 1024 elements).
* ``select``: ``(row == r0 || col == c0) ? s : x`` (run-time r0, c0, s).
"""

from __future__ import annotations

import enum

import numpy as np

from ctsgen.model.types import ComponentType

#: |x|, |m| <= 16 and s in {+-1, +-2}: float results stay exact integers below 2^11
#: when the coordinate offset row*COLS+col is below 1024 (float16) or 2^20 (float32).
SMALL = 16
FLOAT16_MAX_ELEMENTS = 1024


class Op(str, enum.Enum):
    affine = "affine"
    select = "select"


def op_allows(op: Op, component: ComponentType, rows: int, cols: int) -> str | None:
    """None if ``op`` is exact for this matrix, else why not."""
    if op is Op.affine:
        if component is ComponentType.bfloat16:
            return "GLSL has no bfloat16 arithmetic"
        if component is ComponentType.float16 and rows * cols > FLOAT16_MAX_ELEMENTS:
            return f"float16 coordinate offsets are exact only up to {FLOAT16_MAX_ELEMENTS} elements"
    return None


def expected_per_element(op: Op, x: np.ndarray, component: ComponentType, *, s: float | int,
                         m: np.ndarray | None = None, r0: int = 0, c0: int = 0) -> np.ndarray:
    """The result matrix for source ``x`` (rows x cols, or a stack (..., rows, cols) of one tile per
    subgroup, each with its own coordinates) and the extra operands."""
    rows, cols = x.shape[-2:]
    r, c = np.indices((rows, cols))
    if op is Op.select:
        return np.where((r == r0) | (c == c0), np.asarray(s, dtype=component.dtype), x).astype(component.dtype)
    g = r * cols + c
    if component.is_float:
        out = x.astype(np.float64) * float(s) + m.astype(np.float64) + g
        if component is ComponentType.float16 and np.abs(out).max() >= 2048:
            raise ValueError("float16 affine result beyond the exact integer range; use smaller data")
        return out.astype(component.dtype)
    mask = (1 << (8 * component.size)) - 1
    wide = (x.astype(np.int64) * int(s) + m.astype(np.int64) + g) & mask
    return wide.astype(np.uint64).astype(component.bits_dtype).view(component.dtype)
