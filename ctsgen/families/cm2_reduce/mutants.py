"""Plausible driver bugs in OpCooperativeMatrixReduceNV, for the mutation benchmark.

The reference semantics (ReduceVariant.execute -> expected_reduce) take each
result element's reduction domain from ``reduction_domains`` in this family's oracle,
looked up at call time: the faults hand the combine function the wrong
source elements (SPV_NV_cooperative_matrix2, "Cooperative Matrix Reduce
Mode").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctsgen.families.cm2_reduce.oracle import ReduceMode
from ctsgen.mutants import Mutant

ORACLE = "ctsgen.families.cm2_reduce.oracle"
FAMILY = "cm2-reduce"


def _domains_for(mode: ReduceMode, fault: Any) -> dict[str, Any]:
    """Replace the reduction domains of one reduce mode, keeping the others."""
    from ctsgen.families.cm2_reduce import oracle

    original = oracle.reduction_domains

    def _domains(matrix: np.ndarray, m: ReduceMode) -> np.ndarray:
        return fault(matrix) if m is mode else original(matrix, m)

    return {f"{ORACLE}:reduction_domains": _domains}


def _quad_as_row_run(matrix: np.ndarray) -> np.ndarray:
    """2x2 combines four consecutive elements of row 2i (a 1x4 run), not rows 2i..2i+1 x cols 2j..2j+1."""
    r, c = matrix.shape
    return matrix.reshape(r // 2, 2, c // 2, 2).reshape(r // 2, c // 2, 4)


def _column_without_transpose(matrix: np.ndarray) -> np.ndarray:
    """Column reduction walks the source as if it were stored column-major."""
    r, c = matrix.shape
    return matrix.reshape(1, c, r)


MUTANTS = [
    Mutant("reduce-2x2-wrong-quad", FAMILY,
           "2x2 reduction combines a 1x4 run of one row instead of the 2x2 quad",
           lambda: _domains_for(ReduceMode.Block2x2, _quad_as_row_run),
           "a 2x2 max reduction of a matrix at least 4 columns wide"),
    Mutant("reduce-column-reads-transposed", FAMILY,
           "Column reduction reads the source as if it were column-major",
           lambda: _domains_for(ReduceMode.Column, _column_without_transpose),
           "a Column reduction of any matrix with two or more rows and columns"),
]
