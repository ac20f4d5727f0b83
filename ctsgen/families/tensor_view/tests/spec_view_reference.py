"""A literal, scalar transcription of matrixCoordToTensorElementWithView
(SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View"), one matrix
element at a time, written from the spec text independently of
``ctsgen.oracle.addressing``. The layout half is the tensor-layout family's
own scalar transcription. Arithmetic is uint32 as in the pseudo-code.
"""

from __future__ import annotations

from tests.spec_reference import (
    MAX_DIM, Terminated, linearToSpanCoord, spanCoordToTensorCoord, tensorCoordToLinear, u32,
)


class Skipped(Exception):
    """"Load or store is skipped. For load, the matrix element is unmodified." """


def matrixCoordToLinear(t, v, row: int, col: int, N: int) -> int:
    if (row < v.clipRowOffset or row >= u32(v.clipRowOffset + v.clipRowSpan)
            or col < v.clipColOffset or col >= u32(v.clipColOffset + v.clipColSpan)):
        raise Skipped
    row = u32(row - v.clipRowOffset)
    col = u32(col - v.clipColOffset)
    width = min(N, v.clipColSpan)
    return u32(row * width + col)


def linearToViewCoord(t, v, index: int) -> list[int]:
    dimensions = v.viewDimension if v.hasDimensions else t.span
    viewCoord = [0] * MAX_DIM
    for dim in range(v.VDim - 1, -1, -1):
        i = v.permutation[dim]
        viewCoord[i] = index % dimensions[i]
        index //= dimensions[i]
    return viewCoord


def viewCoordToLinear(t, v, viewCoord: list[int]) -> int:
    stride = [0] * MAX_DIM
    if v.hasDimensions:
        stride[:v.VDim] = v.viewStride
    else:
        stride[v.VDim - 1] = 1
        for dim in range(v.VDim - 2, -1, -1):
            stride[dim] = stride[dim + 1] * t.span[dim + 1]
    index = 0
    for dim in range(v.VDim - 1, -1, -1):
        index = u32(index + viewCoord[dim] * stride[dim])
    return index


def matrixCoordToTensorElementWithView(t, v, row: int, col: int, N: int, is_store: bool = False):
    """The tensor element of (row, col): an int, None (Constant rule: clampValue or
    discarded store) or the string "skipped" (outside the clip)."""
    try:
        index = matrixCoordToLinear(t, v, row, col, N)
    except Skipped:
        return "skipped"
    index = viewCoordToLinear(t, v, linearToViewCoord(t, v, index))
    try:
        blockCoord, _cib, _tc = spanCoordToTensorCoord(t, linearToSpanCoord(t, index), is_store)
    except Terminated:
        return None
    return tensorCoordToLinear(t, blockCoord)
