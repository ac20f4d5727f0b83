"""Expected results of OpCooperativeMatrixLoadTensorNV / StoreTensorNV through a layout and a view.

SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View": each matrix
element (row, col) inside the view's clip rectangle is loaded from / stored
to element matrixCoordToTensorElementWithView(t, v, row, col, N). Outside
the clip "load or store is skipped. For load, the matrix element is
unmodified" (the shader poisons the matrix first, so this is visible).
Out of bounds of the layout the clamp mode applies exactly as without a view.
"""

from __future__ import annotations

import numpy as np

from ctsgen.model.tensor import TensorLayout, TensorView
from ctsgen.model.types import ComponentType
from ctsgen.oracle.addressing import tensor_addresses_with_view
from ctsgen.oracle.values import clamp_value_bits, from_bits


def expected_load_view(t: TensorLayout, v: TensorView, rows: int, cols: int, tensor: np.ndarray,
                       component: ComponentType, matrix_before: np.ndarray) -> np.ndarray:
    """The rows x cols matrix after loading from ``tensor`` (1-D) into ``matrix_before``."""
    a, in_clip = tensor_addresses_with_view(t, v, rows, cols, is_store=False)
    clamp = from_bits(clamp_value_bits(t.clampValue, component), component)
    loaded = np.where(a.valid, tensor[np.where(a.valid, a.index, 0)], clamp)
    return np.where(in_clip, loaded, matrix_before.reshape(rows, cols)).astype(component.dtype)


def expected_store_view(t: TensorLayout, v: TensorView, matrix: np.ndarray, tensor: np.ndarray, *,
                        racing: bool = False) -> np.ndarray:
    """``tensor`` (1-D) after storing ``matrix`` through ``t`` and ``v``.

    Raises ValueError if two stored elements land on one tensor element (the result would
    depend on the order of racing stores), unless ``racing`` (a device's execution:
    :meth:`~ctsgen.oracle.addressing.TensorAddresses.store`).
    """
    a, _ = tensor_addresses_with_view(t, v, *matrix.shape, is_store=True)
    return a.store(matrix, tensor, " through this view", racing=racing)
