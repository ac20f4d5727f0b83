"""Plausible driver bugs in KHR cooperative-matrix loads, stores, arithmetic and MulAdd.

The reference semantics (KhrVariant.execute) call ``load_operand``, ``store_result`` and ``compute``,
defined in this family's case module and looked up there at call time: those are the names patched.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ctsgen.core.mutant import Mutant
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.ops.khr_addressing import KhrAccess, Layout, component_indices
from ctsgen.families.coopmat_khr import case
from ctsgen.families.coopmat_khr.operation import Op

CASE = "ctsgen.families.coopmat_khr.case"
FAMILY = "coopmat-khr"


def _gather(access: KhrAccess, m: MatrixType, memory: np.ndarray) -> np.ndarray:
    """A device's load at ``access``'s addresses, clipped to the memory it was given (a faulty address
    reads what lies there; here the nearest component)."""
    return np.take(memory, component_indices(access, m.rows, m.cols, m.component), mode="clip")


def _column_major_as_row_major() -> dict[str, Any]:
    """A ColumnMajor load reads rows: the MemoryLayout operand of OpCooperativeMatrixLoadKHR is ignored."""

    def load_operand(access: KhrAccess, m: MatrixType, memory: np.ndarray) -> np.ndarray:
        return _gather(replace(access, layout=Layout.RowMajor), m, memory)

    return {f"{CASE}:load_operand": load_operand}


def _stride_in_components() -> dict[str, Any]:
    """A load's Stride is counted in matrix components, not in elements of the pointee (the spec's issue
    "Should strides be in bytes or elements?" resolves: elements of the pointee type)."""
    original = case.load_operand

    def load_operand(access: KhrAccess, m: MatrixType, memory: np.ndarray) -> np.ndarray:
        p = access.pointee_for(m.component)
        per = p.size // m.component.size
        if per == 1:
            return original(access, m, memory)
        idx = component_indices(replace(access, stride=0), m.rows, m.cols, m.component)
        line = np.arange(m.rows if access.layout is Layout.RowMajor else m.cols).reshape(-1, 1)
        shift = line * access.stride
        idx = idx + (shift if access.layout is Layout.RowMajor else shift.T)
        return np.take(memory, idx, mode="clip")

    return {f"{CASE}:load_operand": load_operand}


def _store_offset_ignored() -> dict[str, Any]:
    """OpCooperativeMatrixStoreKHR writes at the start of the array: its Pointer's element offset is lost."""
    original = case.store_result

    def store_result(access: KhrAccess, matrix: np.ndarray, memory: np.ndarray, component: ComponentType
                     ) -> np.ndarray:
        return original(replace(access, offset=0), matrix, memory, component)

    return {f"{CASE}:store_result": store_result}


def _sdiv_floors() -> dict[str, Any]:
    """OpSDiv rounds toward negative infinity (an arithmetic shift or floor division), not toward zero."""
    original = case.compute

    def compute(v: Any, mats: list[np.ndarray], s: Any, *, strict: bool = True) -> tuple[np.ndarray, np.ndarray]:
        res = v.result.component
        if v.op is Op.div and res in (ComponentType.sint8, ComponentType.sint32):
            x, y = mats[0].astype(np.int64), mats[1].astype(np.int64)
            q = np.floor_divide(x, np.where(y == 0, 1, y))
            return (q & ((1 << (8 * res.size)) - 1)).astype(np.uint64).astype(res.bits_dtype).view(res.dtype), \
                np.zeros((2, *x.shape))
        return original(v, mats, s, strict=strict)

    return {f"{CASE}:compute": compute}


def _muladd_a_unsigned() -> dict[str, Any]:
    """MatrixASignedComponentsKHR is ignored: A's signed 8-bit components are zero-extended."""
    original = case.compute

    def compute(v: Any, mats: list[np.ndarray], s: Any, *, strict: bool = True) -> tuple[np.ndarray, np.ndarray]:
        if v.op is Op.muladd and mats[0].dtype == np.int8:
            mats = [mats[0].view(np.uint8), *mats[1:]]
            return original(v, mats, s, strict=False)
        return original(v, mats, s, strict=strict)

    return {f"{CASE}:compute": compute}


MUTANTS = [
    Mutant("khr-column-major-as-row-major", FAMILY, "a ColumnMajor OpCooperativeMatrixLoadKHR reads rows",
           _column_major_as_row_major, "any ColumnMajor load of a matrix whose transpose differs", kill_budget=150),
    Mutant("khr-stride-in-components", FAMILY,
           "a load's Stride counts matrix components, not elements of a wider pointee type",
           _stride_in_components, "a load through uvec2 / uvec4 / uint32 of 16- or 8-bit components, stride > 0",
           kill_budget=150),
    Mutant("khr-store-offset-ignored", FAMILY, "OpCooperativeMatrixStoreKHR ignores its Pointer's element offset",
           _store_offset_ignored, "any store with an element offset above 0", kill_budget=150),
    Mutant("khr-sdiv-floors", FAMILY, "OpSDiv on a cooperative matrix rounds toward negative infinity",
           _sdiv_floors, "a signed division with a negative, inexact quotient", kill_budget=350),
    Mutant("khr-muladd-a-zero-extended", FAMILY,
           "OpCooperativeMatrixMulAddKHR zero-extends a signed A (MatrixASignedComponentsKHR ignored)",
           _muladd_a_unsigned, "an int8 MulAdd with a negative element in A", kill_budget=750),
]
