"""Plausible driver bugs in OpCooperativeMatrixPerElementOpNV, for the mutation benchmark.

The reference semantics (PerElementVariant.execute) call
``expected_per_element`` in ``ctsgen.ops.cm2_elementwise``, looked up there at call time:
that is the name patched. SPV_NV_cooperative_matrix2: result
element (row, col) is Func(row, col, M[row][col], ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctsgen.ops.cm2_elementwise import Op
from ctsgen.model.types import ComponentType
from ctsgen.core.mutant import Mutant
from ctsgen.ops import cm2_elementwise as oracle

ORACLE = "ctsgen.ops.cm2_elementwise"
FAMILY = "cm2-elementwise"


def _coordinates_swapped() -> dict[str, Any]:
    """Func is called as Func(col, row, ...): the coordinates the function sees are swapped."""

    def expected_per_element(op: Op, x: np.ndarray, component: ComponentType, *, s: float,
                             m: np.ndarray | None = None, r0: int = 0, c0: int = 0) -> np.ndarray:
        rows, cols = x.shape[-2:]
        r, c = np.indices((rows, cols))
        row, col = c, r  # the fault
        if op is Op.select:
            return np.where((row == r0) | (col == c0), np.asarray(s, dtype=component.dtype), x
                            ).astype(component.dtype)
        g = row * cols + col
        if component.is_float:
            with np.errstate(over="ignore"):
                return (x.astype(np.float64) * float(s) + m.astype(np.float64) + g).astype(component.dtype)
        wide = (x.astype(np.int64) * int(s) + m.astype(np.int64) + g) & ((1 << (8 * component.size)) - 1)
        return wide.astype(np.uint64).astype(component.bits_dtype).view(component.dtype)

    return {f"{ORACLE}:expected_per_element": expected_per_element}


def _select_row_only() -> dict[str, Any]:
    """select's column operand is dropped: only row == r0 selects s."""
    original = oracle.expected_per_element

    def expected_per_element(op: Op, x: np.ndarray, component: ComponentType, **kw: Any) -> np.ndarray:
        if op is Op.select:
            kw["c0"] = -1  # matches no column
        return original(op, x, component, **kw)

    return {f"{ORACLE}:expected_per_element": expected_per_element}


MUTANTS = [
    Mutant("per-element-col-row", FAMILY, "the per-element function is given (col, row) instead of (row, col)",
           _coordinates_swapped,
           "an affine op on any matrix wider than one column, or a select with r0 != c0"),
    Mutant("per-element-select-row-only", FAMILY, "select compares only the row (the column operand is lost)",
           _select_row_only,
           "a select whose c0 lies inside the matrix"),
]
