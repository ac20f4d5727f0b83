"""matrixCoordToTensorElement, vectorised over every element of a matrix.

A transcription of the pseudo-code in SPV_NV_cooperative_matrix2,
"3.X Tensor Layout and View" (functions matrixCoordToLinear,
linearToSpanCoord, spanCoordToTensorCoord, tensorCoordToLinear), evaluated
for all (row, col) at once with numpy. Loops run over the (at most five)
tensor dimensions, never over matrix elements.

Decisions on points the spec leaves open are recorded in
docs/spec-decisions.md and referenced here by name:

* remainders "as defined in OpSMod" take the sign of the divisor, which is
  numpy's ``np.mod`` on integers (negative coordinates wrap upward);
* RepeatMirrored reads ``dim`` in ``c >= dim ? 2*dim-2-c : c`` as the
  layoutDimension of the axis; with layoutDimension == 1 the period
  ``2*dim-2`` is 0 and the oracle maps every coordinate to 0, the only
  in-bounds one ("mirror-repeat-dim-1"; such cases are hazardous and opt-in).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctsgen.errors import CtsgenError
from ctsgen.model.tensor import ClampMode, TensorLayout, TensorView

UINT32 = 2**32


class UndefinedResultError(CtsgenError, ValueError):
    """The spec leaves an access's result undefined, so an oracle has no value to expect: two matrix
    elements stored to one tensor element (a race, decision "store-races"), an Undefined-clamped
    access out of bounds ("undefined-in-bounds"), or an address outside the memory the case gives.
    The strategies never draw such a case; a deviation's semantics (a mutant) can lead a spec case
    there, and :func:`ctsgen.mutants.deviations.expected_under` then leaves the case unjudged."""


@dataclass(frozen=True)
class TensorAddresses:
    """Where each matrix element goes, for an M x N matrix (arrays are M x N).

    ``index``: element index into the tensor (tensorCoordToLinear of
    blockCoord); meaningful where ``valid``.
    ``valid``: the element is loaded from / stored to memory. False where a
    coordinate is out of bounds and the clamp mode turns the access into
    the clamp value (loads) or a discarded store.
    ``out_of_bounds``: some ``spanCoord + offset`` was outside [0, layoutDimension).
    ``tensorCoord``, ``blockCoord``, ``coordInBlock``: LDim x M x N arrays,
    after clamping.
    """

    index: np.ndarray
    valid: np.ndarray
    out_of_bounds: np.ndarray
    tensorCoord: np.ndarray
    blockCoord: np.ndarray
    coordInBlock: np.ndarray

    def store(self, matrix: np.ndarray, tensor: np.ndarray, where: str = "", *, racing: bool = False
              ) -> np.ndarray:
        """``tensor`` (1-D) after the valid elements of ``matrix`` are stored to ``index``.

        Raises UndefinedResultError if two stored elements land on one tensor element (``where``
        says through what): the result would depend on the order of racing stores; or if one lands
        outside ``tensor``. ``racing=True`` stores as a device does instead: one of the racing
        elements lands (here the last in row-major order), one outside ``tensor`` is dropped (as
        robustBufferAccess drops it). The reference backend's execution passes it, so a mutant
        whose rule makes stores collide or stray gives wrong elements, as a driver with that bug
        would, not a crash of the software device; an oracle never does (its cases do not race by
        construction)."""
        targets, values = self.index[self.valid], matrix[self.valid]
        inside = (targets >= 0) & (targets < tensor.size)
        if not inside.all():
            if not racing:
                raise UndefinedResultError(f"a matrix element stores outside the tensor{where} (tensor element "
                                           f"{int(targets[~inside][0])} of {tensor.size})")
            targets, values = targets[inside], values[inside]
        landing, last = np.unique(targets[::-1], return_index=True)  # each target once, its last writer
        if landing.size != targets.size:
            if not racing:
                raise UndefinedResultError(f"two matrix elements store to the same tensor element{where} "
                                           "(a data race)")
            targets, values = landing, values[::-1][last]
        out = tensor.copy()
        out[targets] = values
        return out

    def load(self, tensor: np.ndarray, clamp: np.ndarray, *, device: bool = False) -> np.ndarray:
        """M x N: ``tensor`` (1-D) at ``index`` where ``valid``, ``clamp`` elsewhere.

        Raises UndefinedResultError where a valid element's index lies outside ``tensor`` (a spec
        case's tensor holds every address its layout reaches; a deviation's addressing may not),
        unless ``device`` (a device's execution: such an element reads 0, as robustBufferAccess
        reads outside a buffer)."""
        inside = (self.index >= 0) & (self.index < tensor.size)
        if not inside[self.valid].all():
            if not device:
                raise UndefinedResultError(f"a load reads tensor element {int(self.index[self.valid & ~inside][0])} "
                                           f"of a tensor of {tensor.size}")
            read = self.valid & inside
            return np.where(read, tensor[np.where(read, self.index, 0)], np.where(self.valid, tensor.dtype.type(0),
                                                                                   clamp))
        return np.where(self.valid, tensor[np.where(self.valid, self.index, 0)], clamp)

    def locate(self, element: int, *, is_store: bool, in_clip: np.ndarray | None = None) -> dict[str, object]:
        """What element ``element`` of a test's output buffer means, for a failure report.

        A load's output is the matrix, row-major: its (row, col), tensorCoord, whether it was out
        of bounds, the tensor element it read (None for the clamp value) and, with a view's
        ``in_clip``, whether it was clipped. A store's output is the tensor: which matrix element
        stored to it (None: no element, so it must keep its initial value)."""
        rows, cols = self.index.shape
        if not is_store:
            row, col = divmod(element, cols)
            if row >= rows:
                return {}
            out: dict[str, object] = {"row": row, "col": col}
            if in_clip is not None:
                out["clipped"] = not bool(in_clip[row, col])
            return {**out, "tensorCoord": [int(c) for c in self.tensorCoord[:, row, col]],
                    "outOfBounds": bool(self.out_of_bounds[row, col]),
                    "tensorElement": int(self.index[row, col]) if self.valid[row, col] else None}
        hits = np.argwhere(self.valid & (self.index == element))
        if not hits.size:
            return {"tensorElement": element, "storedBy": None}
        row, col = (int(x) for x in hits[0])
        return {"tensorElement": element, "storedBy": {"row": row, "col": col},
                "tensorCoord": [int(c) for c in self.tensorCoord[:, row, col]]}


def matrix_linear_index(M: int, N: int) -> np.ndarray:
    """matrixCoordToLinear without a view: ``row * N + col`` for every element."""
    return np.arange(M * N, dtype=np.int64).reshape(M, N)


def linear_to_span_coord(t: TensorLayout, index: np.ndarray) -> np.ndarray:
    """linearToSpanCoord: innermost dimension first, ``index % span[dim]``, then divide."""
    coords = np.empty((t.LDim,) + index.shape, dtype=np.int64)
    rest = index.astype(np.int64, copy=True)
    for dim in range(t.LDim - 1, -1, -1):
        rest, coords[dim] = np.divmod(rest, t.span[dim])
    return coords


def wrap_coordinate(mode: ClampMode, c: np.ndarray, dim: int) -> np.ndarray:
    """The clamp of spanCoordToTensorCoord for ClampToEdge / Repeat / RepeatMirrored,
    applied to every coordinate (callers select the out-of-bounds ones)."""
    if mode is ClampMode.ClampToEdge:
        return np.clip(c, 0, dim - 1)
    if mode is ClampMode.Repeat:
        return np.mod(c, dim)  # OpSMod: sign of the divisor
    if mode is ClampMode.RepeatMirrored:
        period = 2 * dim - 2
        if period == 0:  # decision "mirror-repeat-dim-1"
            return np.zeros_like(c)
        c = np.mod(c, period)
        return np.where(c >= dim, period - c, c)
    raise ValueError(f"{mode.name} does not move coordinates")


def span_coord_to_tensor_coord(t: TensorLayout, spanCoord: np.ndarray, is_store: bool
                               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, ClampMode]:
    """The clamping half of spanCoordToTensorCoord, for every element.

    Returns (tensorCoord, valid, out_of_bounds, effective clamp mode): for
    stores every mode other than Undefined is treated as Constant, i.e. an
    out-of-bounds store is discarded. The block split is done by
    :func:`tensor_addresses`.
    """
    mode = t.clampMode
    if is_store and mode is not ClampMode.Undefined:
        mode = ClampMode.Constant
    per_dim = (-1,) + (1,) * (spanCoord.ndim - 1)
    coord = spanCoord + np.asarray(t.offset, dtype=np.int64).reshape(per_dim)
    oob = (coord < 0) | (coord >= np.asarray(t.layoutDimension, dtype=np.int64).reshape(per_dim))
    if mode in (ClampMode.ClampToEdge, ClampMode.Repeat, ClampMode.RepeatMirrored):
        for dim in range(t.LDim):
            coord[dim] = np.where(oob[dim], wrap_coordinate(mode, coord[dim], t.layoutDimension[dim]), coord[dim])
    oob_any = oob.any(axis=0)
    valid = ~oob_any if mode is ClampMode.Constant else np.ones_like(oob_any)
    return coord, valid, oob_any, mode


def tensor_addresses(t: TensorLayout, M: int, N: int, *, is_store: bool,
                     index: np.ndarray | None = None, device: bool = False) -> TensorAddresses:
    """matrixCoordToTensorElement for every (row, col) of an M x N matrix.

    Raises UndefinedResultError if an Undefined-mode layout is accessed out of
    bounds (undefined behaviour has no expected value), unless ``device`` (a
    device's execution, which computes the unclamped address and goes on), and
    ValueError if an index would not fit the spec's uint32 arithmetic.
    ``index`` (M x N) replaces matrixCoordToLinear's ``row * N + col`` (a view
    computes its own).
    """
    if index is None:
        index = matrix_linear_index(M, N)
    spanCoord = linear_to_span_coord(t, index)
    coord, valid, oob, mode = span_coord_to_tensor_coord(t, spanCoord, is_store)
    if mode is ClampMode.Undefined and oob.any() and not device:
        raise UndefinedResultError("an Undefined clamp mode layout is accessed out of bounds: no defined result")
    block = np.asarray(t.blockSize, dtype=np.int64).reshape((-1, 1, 1))
    blockCoord, coordInBlock = np.divmod(np.where(valid, coord, 0), block)
    index = tensor_coord_to_linear(t.stride, blockCoord)
    if index.size and int(index.max()) >= UINT32:
        raise ValueError("tensorCoordToLinear exceeds 32 bits for this layout")
    return TensorAddresses(index, valid, oob, coord, blockCoord, coordInBlock)


def tensor_coord_to_linear(stride: tuple[int, ...], blockCoord: np.ndarray) -> np.ndarray:
    """tensorCoordToLinear: ``sum_dim blockCoord[dim] * stride[dim]`` (int64) for every element."""
    index = blockCoord[0] * stride[0]
    for dim in range(1, len(stride)):
        index = index + blockCoord[dim] * stride[dim]
    return index


def _check_uint32(what: str, values: np.ndarray) -> None:
    if values.size and (int(values.max()) >= UINT32 or int(values.min()) < 0):
        raise ValueError(f"{what} leaves the spec's uint32 arithmetic for this view; draw smaller "
                         f"view dimensions or strides")


def view_matrix_linear_index(v: TensorView, M: int, N: int) -> tuple[np.ndarray, np.ndarray]:
    """matrixCoordToLinear with a view, for every (row, col): ``(index, in_clip)``.

    Outside the clip rectangle the load or store is skipped (``in_clip``
    False, ``index`` 0 there); inside, ``index = (row - clipRowOffset) *
    min(N, clipColSpan) + (col - clipColOffset)``.
    """
    row = np.arange(M, dtype=np.int64).reshape(M, 1)
    col = np.arange(N, dtype=np.int64).reshape(1, N)
    in_clip = ((row >= v.clipRowOffset) & (row < v.clipRowOffset + v.clipRowSpan)
               & (col >= v.clipColOffset) & (col < v.clipColOffset + v.clipColSpan))
    width = min(N, v.clipColSpan)
    index = np.where(in_clip, (row - v.clipRowOffset) * width + (col - v.clipColOffset), 0)
    return index, in_clip


def view_dimensions_and_strides(t: TensorLayout, v: TensorView) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The dimensions linearToViewCoord divides by and the strides viewCoordToLinear
    multiplies by: the view's own with hasDimensions, else the layout's span and
    the packed strides of the span (``stride[VDim-1] = 1``, ``stride[d] = stride[d+1] * span[d+1]``)."""
    if v.hasDimensions:
        return v.viewDimension, v.viewStride
    dims = tuple(t.span[:v.VDim])
    strides = [1] * v.VDim
    for d in range(v.VDim - 2, -1, -1):
        strides[d] = strides[d + 1] * t.span[d + 1]
    return dims, tuple(strides)


def view_to_span_linear(t: TensorLayout, v: TensorView, index: np.ndarray) -> np.ndarray:
    """linearToViewCoord then viewCoordToLinear: the linear index in the span.

    linearToViewCoord walks ``dim`` from VDim-1 down to 0 and peels
    ``viewCoord[permutation[dim]] = index % dimensions[permutation[dim]]``;
    viewCoordToLinear sums ``viewCoord[dim] * stride[dim]``.
    """
    dims, strides = view_dimensions_and_strides(t, v)
    rest = index.astype(np.int64, copy=True)
    out = np.zeros_like(rest)
    for dim in range(v.VDim - 1, -1, -1):
        i = v.permutation[dim]
        rest, viewCoord = np.divmod(rest, dims[i])
        out += viewCoord * strides[i]
    _check_uint32("viewCoordToLinear", out)
    return out


def tensor_addresses_with_view(t: TensorLayout, v: TensorView, M: int, N: int, *, is_store: bool,
                               device: bool = False) -> tuple[TensorAddresses, np.ndarray]:
    """matrixCoordToTensorElementWithView for every (row, col): the addresses
    (``valid`` is False for clipped elements too) and ``in_clip``.

    SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View": a clipped
    element is skipped (a load leaves the matrix element unmodified); the
    others run through the layout exactly as without a view (``device`` as for
    :func:`tensor_addresses`).
    """
    v.check(t)
    index, in_clip = view_matrix_linear_index(v, M, N)
    _check_uint32("matrixCoordToLinear", index)
    span_index = view_to_span_linear(t, v, index)
    a = tensor_addresses(t, M, N, is_store=is_store, index=np.where(in_clip, span_index, 0), device=device)
    return TensorAddresses(a.index, a.valid & in_clip, a.out_of_bounds & in_clip, a.tensorCoord,
                           a.blockCoord, a.coordInBlock), in_clip
