"""Plausible driver bugs in tensor-view addressing, for the mutation benchmark.

The reference semantics (ViewVariant.execute) reach the view through
``ctsgen.oracle.addressing.tensor_addresses_with_view``, which looks up
``view_matrix_linear_index``, ``view_to_span_linear`` and
``view_dimensions_and_strides`` in that module at call time, and through
``decode_view``, which builds the view with the ``TensorView`` name of this
family's case module: those are the names patched. Each fault is one
sentence of SPV_NV_tensor_addressing "3.X Tensor Layout and View" read
wrongly; ``killed_by`` names the smallest kind of case that exposes it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ctsgen.core.mutant import Mutant
from ctsgen.oracle import addressing

ADDR = "ctsgen.oracle.addressing"
FAMILY = "tensor-view"


def _inverted_permutation() -> dict[str, Any]:
    """linearToViewCoord peels ``viewCoord[inverse(p)[dim]]`` instead of ``viewCoord[p[dim]]``."""
    original = addressing.view_to_span_linear

    def view_to_span_linear(t: Any, v: Any, index: np.ndarray) -> np.ndarray:
        inverse = tuple(int(i) for i in np.argsort(v.permutation))
        return original(t, replace(v, permutation=inverse), index)

    return {f"{ADDR}:view_to_span_linear": view_to_span_linear}


def _ignored_permutation() -> dict[str, Any]:
    """The view's p0..p<VDim-1> are ignored (the identity permutation is used)."""
    original = addressing.view_to_span_linear

    def view_to_span_linear(t: Any, v: Any, index: np.ndarray) -> np.ndarray:
        return original(t, replace(v, permutation=tuple(range(v.VDim))), index)

    return {f"{ADDR}:view_to_span_linear": view_to_span_linear}


def _clip_swapped() -> dict[str, Any]:
    """OpTensorViewSetClipNV stores the row operands as the column ones and vice versa."""
    original = addressing.view_matrix_linear_index

    def view_matrix_linear_index(v: Any, M: int, N: int) -> tuple[np.ndarray, np.ndarray]:
        swapped = replace(v, clipRowOffset=v.clipColOffset, clipRowSpan=v.clipColSpan,
                          clipColOffset=v.clipRowOffset, clipColSpan=v.clipRowSpan)
        return original(swapped, M, N)

    return {f"{ADDR}:view_matrix_linear_index": view_matrix_linear_index}


def _clip_width_n() -> dict[str, Any]:
    """matrixCoordToLinear with a clip multiplies the row by N, not min(N, clipColSpan)."""
    original = addressing.view_matrix_linear_index

    def view_matrix_linear_index(v: Any, M: int, N: int) -> tuple[np.ndarray, np.ndarray]:
        index, in_clip = original(v, M, N)
        row = np.arange(M, dtype=np.int64).reshape(M, 1)
        # undo the spec's width, apply N: index + (row - clipRowOffset) * (N - min(N, clipColSpan))
        extra = (row - v.clipRowOffset) * (N - min(N, v.clipColSpan))
        return np.where(in_clip, index + extra, 0), in_clip

    return {f"{ADDR}:view_matrix_linear_index": view_matrix_linear_index}


def _span_as_layout_dimension() -> dict[str, Any]:
    """Without hasDimensions the view borrows the layout's dimensions instead of its span."""
    original = addressing.view_dimensions_and_strides

    def view_dimensions_and_strides(t: Any, v: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if v.hasDimensions:
            return original(t, v)
        return original(replace(t, span=tuple(t.layoutDimension)), v)

    return {f"{ADDR}:view_dimensions_and_strides": view_dimensions_and_strides}


def _set_dimension_strides_reversed() -> dict[str, Any]:
    """OpTensorViewSetDimensionNV packs the strides with the first dimension innermost."""
    def set_dimension(self: Any, *Dim: int) -> Any:
        dims = tuple(int(d) for d in Dim)
        strides = [1] * len(dims)
        for i in range(1, len(dims)):
            strides[i] = strides[i - 1] * dims[i - 1]
        return replace(self, viewDimension=dims, viewStride=tuple(strides))

    # replaced on the class itself, so every view the reference semantics build takes it
    return {"ctsgen.model.tensor:TensorView.set_dimension": set_dimension}


MUTANTS = [
    Mutant("view-permutation-inverted", FAMILY,
           "the view's permutation is applied inverted (viewCoord[inverse(p)[dim]] is peeled)",
           _inverted_permutation,
           "a load through a 3-D view whose permutation is a 3-cycle", kill_budget=200),
    Mutant("view-permutation-ignored", FAMILY, "the view's permutation is ignored (identity used)",
           _ignored_permutation,
           "a load through a 2-D view with permutation (1, 0)"),
    Mutant("clip-row-col-swapped", FAMILY, "OpTensorViewSetClipNV swaps the row and column clip operands",
           _clip_swapped,
           "a load with a clip whose row and column ranges differ"),
    Mutant("clip-width-ignores-span", FAMILY,
           "matrixCoordToLinear uses N instead of min(N, clipColSpan) as the clipped row width",
           _clip_width_n,
           "a load with a clip narrower than the matrix covering two or more rows", kill_budget=450),
    Mutant("view-span-as-layout-dimension", FAMILY,
           "a view without dimensions borrows the layout's dimensions instead of its span",
           _span_as_layout_dimension,
           "a hasDimensions=false load through a sliced layout whose span differs from its dimensions",
           kill_budget=500),
    Mutant("view-set-dimension-strides-reversed", FAMILY,
           "OpTensorViewSetDimensionNV packs the strides with the first dimension innermost",
           _set_dimension_strides_reversed,
           "a hasDimensions load through a 2-D view with default strides", kill_budget=300),
]
