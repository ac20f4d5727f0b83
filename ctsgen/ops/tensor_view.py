"""Expected results of OpCooperativeMatrixLoadTensorNV / StoreTensorNV through a layout and a view.

SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View": each matrix
element (row, col) inside the view's clip rectangle is loaded from / stored
to element matrixCoordToTensorElementWithView(t, v, row, col, N). Outside
the clip "load or store is skipped. For load, the matrix element is
unmodified" (the shader poisons the matrix first, so this is visible).
Out of bounds of the layout the clamp mode applies exactly as without a view.

Also the view's run-time parameter words (the tensor-view family's format, after the layout's;
cm2-program's view nodes use it too) and :func:`decode_view` replaying the view instructions
from them (the reference semantics look ``TensorView`` up here at call time: the name a mutant
patches).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ctsgen.model.tensor import MAX_DIM, TensorLayout, TensorView
from ctsgen.model.types import ComponentType
from ctsgen.oracle.addressing import tensor_addresses_with_view
from ctsgen.oracle.values import from_bits
from ctsgen.oracle import values as oracle_values
from ctsgen.ops.tensor_layout import FAMILY_WORDS as LAYOUT_WORDS


def expected_load_view(t: TensorLayout, v: TensorView, rows: int, cols: int, tensor: np.ndarray,
                       component: ComponentType, matrix_before: np.ndarray, *, device: bool = False) -> np.ndarray:
    """The rows x cols matrix after loading from ``tensor`` (1-D) into ``matrix_before``.

    Raises UndefinedResultError where an address lies outside ``tensor`` or an Undefined-clamped
    element is out of bounds, unless ``device`` (a device's execution:
    :meth:`~ctsgen.oracle.addressing.TensorAddresses.load`)."""
    a, in_clip = tensor_addresses_with_view(t, v, rows, cols, is_store=False, device=device)
    clamp = from_bits(oracle_values.clamp_value_bits(t.clampValue, component), component)
    loaded = a.load(tensor, clamp, device=device)
    return np.where(in_clip, loaded, matrix_before.reshape(rows, cols)).astype(component.dtype)


def expected_store_view(t: TensorLayout, v: TensorView, matrix: np.ndarray, tensor: np.ndarray, *,
                        racing: bool = False) -> np.ndarray:
    """``tensor`` (1-D) after storing ``matrix`` through ``t`` and ``v``.

    Raises UndefinedResultError if two stored elements land on one tensor element (the result
    would depend on the order of racing stores), if one lands outside ``tensor``, or if an
    Undefined-clamped element is out of bounds, unless ``racing`` (a device's execution:
    :meth:`~ctsgen.oracle.addressing.TensorAddresses.store`).
    """
    a, _ = tensor_addresses_with_view(t, v, *matrix.shape, is_store=True, device=racing)
    return a.store(matrix, tensor, " through this view", racing=racing)


# -- parameter words: the tensor-layout family's words, then the view's ----
VIEW_SET_DIMENSION, VIEW_SET_STRIDE, VIEW_SET_CLIP = 1, 2, 4
W_VIEW_FLAGS = LAYOUT_WORDS
W_VIEW_DIMENSION = W_VIEW_FLAGS + 1
W_VIEW_STRIDE = W_VIEW_DIMENSION + MAX_DIM
W_CLIP = W_VIEW_STRIDE + MAX_DIM  # clipRowOffset, clipRowSpan, clipColOffset, clipColSpan


class ViewType(Protocol):
    """The view type ``tensorViewNV<VDim, hasDimensions, p0, ..., p<VDim-1>>`` (a variant's)."""

    @property
    def VDim(self) -> int: ...

    hasDimensions: bool
    permutation: tuple[int, ...]


def decode_view(words: np.ndarray, variant: ViewType) -> TensorView:
    """Replay the view instructions the shader runs, from a case's parameter words."""
    w = [int(x) for x in words]
    flags, n = w[W_VIEW_FLAGS], variant.VDim
    v = TensorView.create(n, variant.hasDimensions, variant.permutation)
    if flags & VIEW_SET_DIMENSION:
        v = v.set_dimension(*w[W_VIEW_DIMENSION:W_VIEW_DIMENSION + n])
    if flags & VIEW_SET_STRIDE:
        v = v.set_stride(*w[W_VIEW_STRIDE:W_VIEW_STRIDE + n])
    if flags & VIEW_SET_CLIP:
        v = v.set_clip(*w[W_CLIP:W_CLIP + 4])
    return v
