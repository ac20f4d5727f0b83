"""Expected results of OpCooperativeMatrixLoadTensorNV / StoreTensorNV through a tensor layout.

SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View": each matrix
element (row, col) is loaded from / stored to element
matrixCoordToTensorElement(t, row, col, N) of the tensor. Out of bounds,
a Constant-clamped load returns clampValue and every clamp mode other than
Undefined discards the store.

Also the layout's run-time parameter words (the tensor-layout family's format, which the
tensor-view, decode, decode-vector and cm2-program families extend or embed),
:func:`decode_layout` replaying the shader's instruction sequence from them (the reference
semantics look ``TensorLayout`` up here at call time: the name a mutant patches), and a load's or
store's initial buffers.
"""

from __future__ import annotations

import enum

import numpy as np

from ctsgen.model.tensor import MAX_DIM, ClampMode, TensorLayout
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.oracle import addressing
from ctsgen.oracle.values import from_bits, pattern_values, sentinel_bits
from ctsgen.oracle import values as oracle_values


def expected_load(t: TensorLayout, rows: int, cols: int, tensor: np.ndarray,
                  component: ComponentType, *, device: bool = False) -> np.ndarray:
    """The rows x cols matrix a load through ``t`` produces from ``tensor`` (1-D).

    Raises UndefinedResultError where an element's address lies outside ``tensor`` (or an
    Undefined-clamped element is out of bounds), unless ``device`` (a device's execution: such an
    element reads 0, as robustBufferAccess reads outside a buffer). A spec case never reads past
    its tensor, whose extent is the layout's; a deviation's addressing can."""
    a = addressing.tensor_addresses(t, rows, cols, is_store=False, device=device)
    return a.load(tensor, from_bits(oracle_values.clamp_value_bits(t.clampValue, component), component), device=device)


def expected_store(t: TensorLayout, matrix: np.ndarray, tensor: np.ndarray, *, racing: bool = False) -> np.ndarray:
    """``tensor`` (1-D) after storing ``matrix`` through ``t``.

    Raises UndefinedResultError if two stored elements land on one tensor element (the result
    would depend on the order of racing stores), if one lands outside ``tensor``, or if an
    Undefined-clamped element is out of bounds, unless ``racing`` (a device's execution:
    :meth:`~ctsgen.oracle.addressing.TensorAddresses.store`).
    """
    a = addressing.tensor_addresses(t, *matrix.shape, is_store=True, device=racing)
    return a.store(matrix, tensor, racing=racing)


class Operation(str, enum.Enum):
    load = "load"    # OpCooperativeMatrixLoadTensorNV
    store = "store"  # OpCooperativeMatrixStoreTensorNV


# -- parameter words of a layout (after one element offset per buffer) -----
FLAG_SET_BLOCK_SIZE, FLAG_SET_STRIDE, FLAG_SLICE, FLAG_SET_CLAMP_VALUE = 1, 2, 4, 8
W_FLAGS, W_CLAMP_VALUE, W_FILL = 0, 1, 2
W_BLOCK_SIZE, W_DIMENSION, W_STRIDE, W_OFFSET, W_SPAN = (3 + k * MAX_DIM for k in range(5))
FAMILY_WORDS = 3 + 5 * MAX_DIM


def decode_layout(words: np.ndarray, Dim: int, clampMode: ClampMode) -> TensorLayout:
    """Replay the instruction sequence the shader runs, from a case's parameter words."""
    w = [int(x) for x in words]
    flags = w[W_FLAGS]

    def vec(base: int, signed: bool = False) -> tuple[int, ...]:
        vals = w[base:base + Dim]
        return tuple(v - 2**32 if signed and v >= 2**31 else v for v in vals)

    t = TensorLayout.create(Dim, clampMode)
    if flags & FLAG_SET_BLOCK_SIZE:
        t = t.set_block_size(*vec(W_BLOCK_SIZE))
    t = t.set_dimension(*vec(W_DIMENSION))
    if flags & FLAG_SET_STRIDE:
        t = t.set_stride(*vec(W_STRIDE))
    if flags & FLAG_SLICE:
        t = t.slice(vec(W_OFFSET, signed=True), vec(W_SPAN))
    if flags & FLAG_SET_CLAMP_VALUE:
        t = t.set_clamp_value(w[W_CLAMP_VALUE])
    return t


def initial_buffers(operation: Operation, m: MatrixType, extent: int, pattern: str, seed: int) -> list[np.ndarray]:
    """A load's or store's input and output buffers before the dispatch: the source (the tensor,
    ``extent`` elements, for a load; the matrix for a store) filled by ``pattern``, and the
    destination poisoned with the sentinel, so an element the instruction does not write shows."""
    comp = m.component
    source, destination = (extent, m.elements) if operation is Operation.load else (m.elements, extent)
    poison = from_bits(sentinel_bits(comp), comp)
    return [pattern_values(pattern, comp, source, seed), np.full(destination, poison, dtype=comp.dtype)]
