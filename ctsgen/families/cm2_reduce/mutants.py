"""Plausible driver bugs in OpCooperativeMatrixReduceNV, for the mutation benchmark.

The reference semantics (ReduceVariant.execute -> expected_reduce) take each
result element's reduction domain from ``reduction_domains`` in this family's oracle,
looked up at call time: the faults hand the combine function the wrong
source elements (SPV_NV_cooperative_matrix2, "Cooperative Matrix Reduce
Mode").
``lavapipe-reduce-tiles`` models a deviation seen on a driver (docs/validation.md), for
``--expect-deviation``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctsgen.ops.cm2_reduce import ReduceMode
from ctsgen.core.mutant import Mutant
from ctsgen.ops import cm2_reduce as oracle

ORACLE = "ctsgen.ops.cm2_reduce"
FAMILY = "cm2-reduce"


def _domains_for(mode: ReduceMode, fault: Any) -> dict[str, Any]:
    """Replace the reduction domains of one reduce mode, keeping the others."""
    original = oracle.reduction_domains

    def _domains(matrix: np.ndarray, m: ReduceMode) -> np.ndarray:
        return fault(matrix) if m is mode else original(matrix, m)

    return {f"{ORACLE}:reduction_domains": _domains}


def _quad_as_row_run(matrix: np.ndarray) -> np.ndarray:
    """2x2 combines four consecutive elements of row 2i (a 1x4 run), not rows 2i..2i+1 x cols 2j..2j+1."""
    *lead, r, c = matrix.shape
    return matrix.reshape(*lead, r // 2, 2, c // 2, 2).reshape(*lead, r // 2, c // 2, 4)


def _column_without_transpose(matrix: np.ndarray) -> np.ndarray:
    """Column reduction walks the source as if it were stored column-major."""
    *lead, r, c = matrix.shape
    return matrix.reshape(*lead, 1, c, r)


#: lavapipe's tile edge: its cooperative matrices are handled as 8x8 tiles (subgroup size 8).
LAVAPIPE_TILE = 8


def _lavapipe_reduce(original: Any) -> Any:
    """``expected_reduce`` as lavapipe (Mesa 26.2.6, LLVM 22.1.8) computes Row and Column reductions.

    The source is cut into 8x8 tiles numbered row-major (tile (ti, tj) is number ti * C + tj, C
    tiles per row). Row: result rows 0-7 are right; result rows 8K..8K+7 (K >= 1) get the row
    reductions of tile number K alone (16x24: rows 8-15 get rows 0-7's reductions of columns
    8-15). Column: result columns 0-7 are right; columns 8K..8K+7 get the column reductions of
    tile number K alone, which is tile (0, K) (rows 0-7 only). A source 8 wide or 8 tall is
    therefore right; Row|Column and 2x2 are right (docs/validation.md, "lavapipe: Row and Column
    reductions")."""
    t = LAVAPIPE_TILE

    def reduce(matrix: np.ndarray, mode: ReduceMode, combine: Any, component: Any, out_rows: int,
               out_cols: int) -> tuple[np.ndarray, np.ndarray]:
        expected, tolerance = original(matrix, mode, combine, component, out_rows, out_cols)
        r, c = matrix.shape[-2:]
        if mode not in (ReduceMode.Row, ReduceMode.Column) or r % t or c % t:
            return expected, tolerance
        expected, tolerance = np.array(expected, copy=True), np.array(tolerance, copy=True)
        for k in range(1, (r if mode is ReduceMode.Row else c) // t):
            ti, tj = divmod(k, c // t)
            tile = matrix[..., ti * t:(ti + 1) * t, tj * t:(tj + 1) * t]
            if mode is ReduceMode.Row:
                rows = slice(k * t, (k + 1) * t)
                expected[..., rows, :], tolerance[..., rows, :] = original(tile, mode, combine, component, t, out_cols)
            else:
                cols = slice(k * t, (k + 1) * t)
                expected[..., cols], tolerance[..., cols] = original(tile, mode, combine, component, out_rows, t)
        return expected, tolerance

    return reduce


def _lavapipe_targets() -> dict[str, Any]:
    """``expected_reduce`` replaced where it is defined, so every caller (this family's cases and
    cm2-program's reduce nodes, each through ``ctsgen.ops.cm2_reduce``) takes it."""
    return {f"{ORACLE}:expected_reduce": _lavapipe_reduce(oracle.expected_reduce)}


MUTANTS = [
    Mutant("reduce-2x2-wrong-quad", FAMILY,
           "2x2 reduction combines a 1x4 run of one row instead of the 2x2 quad",
           lambda: _domains_for(ReduceMode.Block2x2, _quad_as_row_run),
           "a 2x2 max reduction of a matrix at least 4 columns wide"),
    Mutant("reduce-column-reads-transposed", FAMILY,
           "Column reduction reads the source as if it were column-major",
           lambda: _domains_for(ReduceMode.Column, _column_without_transpose),
           "a Column reduction of any matrix with two or more rows and columns", kill_budget=300),
    Mutant("lavapipe-reduce-tiles", FAMILY,
           "Row/Column reductions past the first 8 rows/columns reduce one 8x8 tile, numbered "
           "row-major (seen on lavapipe)",
           _lavapipe_targets,
           "a Row reduction of a 16x16 matrix",
           instructions=("OpCooperativeMatrixReduceNV",)),
]
