"""Plausible driver bugs in the GEMM tile, for the mutation benchmark.

The reference semantics (GemmVariant.execute) call ``expected_tile`` (defined in
``ctsgen.ops.cm2_gemm``), and on the khr route ``khr_load`` / ``khr_store`` (defined in this
family's case module), each looked up in its defining module at call time: those are the names
patched. The rule (VK_NV_cooperative_matrix2 proposal, "4. Examples"):
D[tile] = alpha * (A x B)[tile] + beta * C[tile]; the khr route's addressing:
SPV_KHR_cooperative_matrix, "Cooperative Matrix Layout" (line i starts at Pointer[i * Stride]).
A khr mutant's access that leaves the case's memory reads zeros and drops its writes, as
robustBufferAccess would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dataclasses import replace

from ctsgen.core.mutant import Mutant
from ctsgen.ops import cm2_gemm as oracle
from ctsgen.ops.khr_addressing import component_indices, Layout, line_length

CASE = "ctsgen.families.cm2_gemm.case"
ORACLE = "ctsgen.ops.cm2_gemm"
FAMILY = "cm2-gemm"


def _epilogue(fault: Any) -> dict[str, Any]:
    """Call the correct tile with (alpha, beta) replaced by ``fault(alpha, beta)``."""
    original = oracle.expected_tile

    def expected_tile(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: Any, beta: Any, *rest: Any
                      ) -> tuple[np.ndarray, np.ndarray]:
        return original(a, b, c, *fault(alpha, beta), *rest)

    return {f"{ORACLE}:expected_tile": expected_tile}


def _as_python(x: Any) -> float | int:
    return float(x) if isinstance(x, (float, np.floating)) else int(x)


def _product(alpha: Any, beta: Any) -> float | int:
    """alpha * beta; for integers modulo 2^32 (the tile wraps modulo 2^32 anyway)."""
    p = _as_python(alpha) * _as_python(beta)
    return p if isinstance(p, float) else p & 0xFFFFFFFF


def _robust_indices(access: Any, rows: int, cols: int, memory: np.ndarray, component: Any
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The access's component indices (0 where outside ``memory``) and where they are inside it."""
    index = component_indices(access, rows, cols, component)
    inside = index < memory.size
    return np.where(inside, index, 0), inside


def _khr_access(fault: Any) -> dict[str, Any]:
    """Both khr accesses with the access replaced by ``fault(access, rows, cols)`` (robust out of memory)."""
    def khr_load(access: Any, rows: int, cols: int, memory: np.ndarray, component: Any) -> np.ndarray:
        index, inside = _robust_indices(fault(access, rows, cols), rows, cols, memory, component)
        return np.where(inside, memory[index], np.zeros((), memory.dtype))

    def khr_store(access: Any, matrix: np.ndarray, memory: np.ndarray, component: Any) -> np.ndarray:
        index, inside = _robust_indices(fault(access, *matrix.shape), *matrix.shape, memory, component)
        out = np.array(memory, copy=True)
        out[index[inside]] = matrix[inside]
        return out

    return {f"{CASE}:khr_load": khr_load, f"{CASE}:khr_store": khr_store}


def _layout_ignored(access: Any, rows: int, cols: int) -> Any:
    return replace(access, layout=Layout.RowMajor)


def _stride_ignored(access: Any, rows: int, cols: int) -> Any:
    return replace(access, stride=line_length(access.layout, rows, cols))


MUTANTS = [
    Mutant("gemm-ignores-beta", FAMILY, "the epilogue adds C unscaled (beta treated as 1)",
           lambda: _epilogue(lambda alpha, beta: (alpha, type(_as_python(beta))(1))),
           "a GEMM tile with beta != 1 and a non-zero C"),
    Mutant("gemm-alpha-scales-c", FAMILY, "alpha scales the whole sum: alpha * (A x B + beta * C)",
           lambda: _epilogue(lambda alpha, beta: (alpha, _product(alpha, beta))),
           "a GEMM tile with alpha != 1, beta != 0 and a non-zero C"),
    Mutant("gemm-khr-column-major-as-row-major", FAMILY,
           "OpCooperativeMatrixLoadKHR / StoreKHR ignore MemoryLayout: a ColumnMajor matrix is read and "
           "written as RowMajor", lambda: _khr_access(_layout_ignored),
           "a khr-route GEMM tile with a ColumnMajor A, B, C or D", kill_budget=300),
    Mutant("gemm-khr-stride-as-line-length", FAMILY,
           "OpCooperativeMatrixLoadKHR / StoreKHR ignore Stride: lines taken as packed (Stride = the tile's "
           "line length)", lambda: _khr_access(_stride_ignored),
           "a khr-route GEMM tile whose A, B, C or D has padding between its lines"),
]
