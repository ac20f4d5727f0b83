"""Compiler bugs in kernels: each replaces one rule of ctsgen.kernel.evaluate (its docstring lists
them), the way a driver's lowering of that construct goes wrong. Each names the bug it models."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ctsgen.core.mutant import Mutant
from ctsgen.toolchain.spirv_patch import muladd_accumulator_reused

EVAL = "ctsgen.kernel.evaluate"
FAMILY = "coopmat-kernel"


def _first_iteration_carried() -> dict[str, Any]:
    """A loop-carried matrix keeps its first iteration's value: the phi at the loop header takes the
    value from the first back edge for every later iteration."""
    return {f"{EVAL}:carried": lambda first, current: {**current, **{k: v for k, v in first.items()
                                                                     if not k.startswith("#")}}}


def _merge_other_side() -> dict[str, Any]:
    """A branch's merge takes the other side's value (a phi with its incoming blocks swapped)."""
    return {f"{EVAL}:merge": lambda mask, then, orelse: np.where(mask, orelse, then)}


def _missing_barrier() -> dict[str, Any]:
    """No barrier between the writes to Workgroup memory and the reads after them: the reader sees
    the memory's previous contents (llama.cpp PR #20084)."""
    return {f"{EVAL}:visible": lambda written, before: before}


def _read_back_stale() -> dict[str, Any]:
    """A plain load of Workgroup memory moved above the barrier and the cooperative-matrix store
    before it (the barrier's memory semantics not applied to a scalar load after a matrix store):
    a condition read back from a matrix decides on the memory's previous contents."""
    return {f"{EVAL}:read_back": lambda written, before: before}


def _shared_offset_zero() -> dict[str, Any]:
    """A cooperative-matrix load from Workgroup memory at any offset returns the offset-0 tile (Intel
    Xe3, Mesa issue 15932)."""
    return {f"{EVAL}:shared_tile": lambda shared, rot: np.broadcast_to(shared[:1], shared.shape).copy()}


def _array_neighbour_alias() -> dict[str, Any]:
    """A store to one element of an array of matrices also lands in its neighbour (a deref of an
    array of matrices lowered with the wrong element size)."""
    def array_store(array: np.ndarray, k: np.ndarray, value: np.ndarray) -> np.ndarray:
        out = array.copy()
        out[int(k)] = value
        out[(int(k) + 1) % len(array)] = value
        return out
    return {f"{EVAL}:array_store": array_store}


def _inout_not_written_back() -> dict[str, Any]:
    """An ``inout``/``out`` matrix parameter is never written back to the caller's variable."""
    return {f"{EVAL}:writeback": lambda before, after: before}


def _element_mapping_differs() -> dict[str, Any]:
    """Element access maps the second matrix's components in another order than the first's, though
    both have one type (each matrix's composite lowered with its own layout)."""
    def zip_operand(y: np.ndarray) -> np.ndarray:
        return y.reshape(*y.shape[:-2], -1)[..., ::-1].reshape(y.shape)
    return {f"{EVAL}:zip_operand": zip_operand}


def _muladd_clobbers_accumulator() -> dict[str, Any]:
    """lavapipe (Mesa 26.2.6) in a module that reuses C's value after the MulAdd (slang, spirv-opt): a MulAdd whose
    K exceeds the 8-wide K granule accumulates every granule but the last into its C operand in place
    (src/compiler/nir/nir_lower_cooperative_matrix.c, split_cmat_muladd; docs/repros/lavapipe-muladd-accumulator)."""
    def accumulator_after(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        k = a.shape[-1] - LAVAPIPE_K_GRANULE
        if k <= 0:
            return c
        wide = lambda x: x.astype(np.float64 if x.dtype.kind in "fV" else np.int64)  # noqa: E731
        return (wide(c) + wide(a)[..., :k] @ wide(b)[..., :k, :]).astype(c.dtype)
    return {"ctsgen.ops.khr_muladd:accumulator_after": accumulator_after}


#: lavapipe's K granule (its VK_KHR_cooperative_matrix and flexible-dimensions entries: 8x8x8).
LAVAPIPE_K_GRANULE = 8


def _m(name: str, description: str, factory: Any, killed_by: str, budget: int) -> Mutant:
    """Budgets: bench/mutant_kill_budgets.py --family coopmat-kernel --seeds 4 (docs/validation.md,
    "Kernels")."""
    return Mutant(name, FAMILY, description, factory, killed_by, kill_budget=budget)


MUTANTS = [
    _m("kernel-loop-carry-first", "a loop-carried matrix keeps its first iteration's value",
       _first_iteration_carried, "a loop of 2 iterations accumulating a MulAdd", 750),
    _m("kernel-merge-other-side", "a branch merge takes the other side's value", _merge_other_side,
       "a branch that changes one matrix on one side", 550),
    _m("kernel-missing-barrier", "a reader of Workgroup memory sees its previous contents (no barrier)",
       _missing_barrier, "one shared load", 350),
    _m("kernel-read-back-stale", "a value read back from a matrix through Workgroup memory sees the memory's "
       "previous contents (a scalar load hoisted above the barrier)", _read_back_stale,
       "a branch on an element read back from an Accumulator", 550),
    _m("kernel-shared-offset-zero", "a Workgroup-memory load at any offset returns the offset-0 tile (Mesa 15932)",
       _shared_offset_zero, "a shared load or exchange in 2 subgroups", 400),
    _m("kernel-array-neighbour-alias", "a store to an array element also lands in its neighbour",
       _array_neighbour_alias, "a store to r0[0] of an array of 2", 200),
    _m("kernel-inout-not-written-back", "an inout or out matrix parameter is never written back",
       _inout_not_written_back, "a call of a function with an out parameter", 350),
    replace(_m("lavapipe-muladd-accumulator", "a MulAdd with K past 8 adds all its K granules but the last into its C "
               "operand", _muladd_clobbers_accumulator, "a MulAdd with K = 16 whose C is stored after it", 400),
            shows_in=muladd_accumulator_reused, route="glslang-O1"),
    _m("kernel-element-mapping-differs", "element access maps two matrices of one type differently",
       _element_mapping_differs, "an element-wise loop over two different matrices", 350),
]
