"""Expected results of OpCooperativeMatrixLoadTensorNV / StoreTensorNV through a tensor layout.

SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View": each matrix
element (row, col) is loaded from / stored to element
matrixCoordToTensorElement(t, row, col, N) of the tensor. Out of bounds,
a Constant-clamped load returns clampValue and every clamp mode other than
Undefined discards the store.
"""

from __future__ import annotations

import numpy as np

from ctsgen.model.tensor import TensorLayout
from ctsgen.model.types import ComponentType
from ctsgen.oracle.addressing import tensor_addresses
from ctsgen.oracle.values import clamp_value_bits, from_bits


def expected_load(t: TensorLayout, rows: int, cols: int, tensor: np.ndarray,
                  component: ComponentType) -> np.ndarray:
    """The rows x cols matrix a load through ``t`` produces from ``tensor`` (1-D)."""
    a = tensor_addresses(t, rows, cols, is_store=False)
    clamp = from_bits(clamp_value_bits(t.clampValue, component), component)
    return np.where(a.valid, tensor[np.where(a.valid, a.index, 0)], clamp)


def expected_store(t: TensorLayout, matrix: np.ndarray, tensor: np.ndarray, *, racing: bool = False) -> np.ndarray:
    """``tensor`` (1-D) after storing ``matrix`` through ``t``.

    Raises ValueError if two stored elements land on one tensor element (the result would
    depend on the order of racing stores), unless ``racing`` (a device's execution:
    :meth:`~ctsgen.oracle.addressing.TensorAddresses.store`).
    """
    return tensor_addresses(t, *matrix.shape, is_store=True).store(matrix, tensor, racing=racing)
