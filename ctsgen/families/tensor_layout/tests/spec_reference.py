"""A literal, scalar transcription of the addressing pseudo-code of
SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View", written from the
spec text independently of ``ctsgen.oracle.addressing``.

Plain Python ints and loops, one matrix element at a time. The points the
spec leaves open follow docs/spec-decisions.md (remainder-is-opsmod, mirror-repeat-dim-1,
stores-discard):

* "remainders are computed as defined in OpSMod": the result takes the sign
  of the divisor, which is Python's ``%``;
* MirrorRepeat's ``dim`` is the layoutDimension of the axis; with
  layoutDimension == 1 the modulus ``2*dim-2`` is 0 and every coordinate
  maps to 0 (the only in-bounds one);
* a store with any clamp mode other than Undefined discards an out-of-bounds
  element (the spec's "treated as Constant").

Only the layout's state is read (``t.LDim``, ``t.span``, ...), never a helper
of the library under test.
"""

from __future__ import annotations

MAX_DIM = 5
UNDEFINED, CONSTANT, CLAMP_TO_EDGE, REPEAT, MIRROR_REPEAT = 0, 1, 2, 3, 4


class UndefinedBehaviour(Exception):
    """Raised where the spec says "undefined behavior"."""


class Terminated(Exception):
    """The Constant case: "terminate index calculation" (load clampValue / discard store)."""


def u32(x: int) -> int:
    return x & 0xFFFFFFFF


def s32(x: int) -> int:
    x = u32(x)
    return x - 2**32 if x >= 2**31 else x


def opsmod(a: int, b: int) -> int:
    """OpSMod: the remainder has the sign of the divisor (Python's % does exactly this)."""
    if b == 0:
        raise ZeroDivisionError
    r = abs(a) % abs(b)
    if r != 0 and (b < 0) != (a < 0):
        r = abs(b) - r
    return -r if b < 0 else r


def matrixCoordToLinear(t, row: int, col: int, N: int) -> int:
    index = u32(row * N + col)
    return index


def linearToSpanCoord(t, index: int) -> list[int]:
    spanCoord = [0] * MAX_DIM
    dim = t.LDim - 1
    while dim >= 0:
        spanCoord[dim] = index % t.span[dim]     # uint32 % uint32
        index = index // t.span[dim]             # uint32 / uint32
        dim -= 1
    return spanCoord


def spanCoordToTensorCoord(t, spanCoord: list[int], is_store: bool):
    """Returns (blockCoord, coordInBlock, tensorCoord); raises Terminated / UndefinedBehaviour."""
    blockCoord = [0] * MAX_DIM
    coordInBlock = [0] * MAX_DIM
    tensorCoord = [0] * MAX_DIM
    for dim in range(0, t.LDim):
        c = s32(spanCoord[dim] + t.offset[dim])
        if c < 0 or c >= t.layoutDimension[dim]:
            clampMode = int(t.clampMode)
            # For stores, other than Undefined, everything is treated as "discard"
            if is_store and clampMode != UNDEFINED:
                clampMode = CONSTANT
            if clampMode == UNDEFINED:
                raise UndefinedBehaviour(f"dimension {dim}: coordinate {c} out of bounds")
            elif clampMode == CONSTANT:
                raise Terminated
            elif clampMode == CLAMP_TO_EDGE:
                c = min(max(c, 0), t.layoutDimension[dim] - 1)
            elif clampMode == REPEAT:
                c = opsmod(c, t.layoutDimension[dim])
            elif clampMode == MIRROR_REPEAT:
                d = t.layoutDimension[dim]
                if 2 * d - 2 == 0:
                    c = 0  # decision: layoutDimension 1 maps every coordinate to 0
                else:
                    c = opsmod(c, 2 * d - 2)
                    c = (2 * d - 2 - c) if c >= d else c
            else:
                raise AssertionError(clampMode)
        tensorCoord[dim] = c
        coordInBlock[dim] = c % t.blockSize[dim]
        blockCoord[dim] = c // t.blockSize[dim]
    return blockCoord, coordInBlock, tensorCoord


def tensorCoordToLinear(t, blockCoord: list[int]) -> int:
    index = 0
    for dim in range(0, t.LDim):
        index = u32(index + blockCoord[dim] * t.stride[dim])
    return index


def matrixCoordToTensorElement(t, row: int, col: int, N: int, is_store: bool = False) -> int | None:
    """The tensor element index of matrix element (row, col), or None where
    the Constant rule applies (a load returns clampValue, a store is discarded)."""
    index = matrixCoordToLinear(t, row, col, N)
    spanCoord = linearToSpanCoord(t, index)
    try:
        blockCoord, _coordInBlock, _tc = spanCoordToTensorCoord(t, spanCoord, is_store)
    except Terminated:
        return None
    return tensorCoordToLinear(t, blockCoord)


def tensor_coord(t, row: int, col: int, N: int, is_store: bool = False) -> list[int] | None:
    """The clamped tensor coordinate of (row, col), or None if terminated."""
    try:
        return spanCoordToTensorCoord(t, linearToSpanCoord(t, matrixCoordToLinear(t, row, col, N)),
                                      is_store)[2][:t.LDim]
    except Terminated:
        return None


def all_elements(t, M: int, N: int, is_store: bool = False) -> list[list[int | None]]:
    return [[matrixCoordToTensorElement(t, r, c, N, is_store) for c in range(N)] for r in range(M)]


def load(t, M: int, N: int, tensor: list, clamp) -> list[list]:
    """The matrix a load through ``t`` produces (``clamp`` stands for clampValue)."""
    return [[clamp if i is None else tensor[i] for i in row] for row in all_elements(t, M, N)]


def store(t, matrix: list[list], tensor: list) -> list:
    """``tensor`` after storing ``matrix``; raises ValueError on two stores to one element."""
    out = list(tensor)
    written: dict[int, tuple[int, int]] = {}
    M, N = len(matrix), len(matrix[0])
    for r in range(M):
        for c in range(N):
            i = matrixCoordToTensorElement(t, r, c, N, is_store=True)
            if i is None:
                continue
            if i in written:
                raise ValueError(f"race: ({r},{c}) and {written[i]} both store element {i}")
            written[i] = (r, c)
            out[i] = matrix[r][c]
    return out
