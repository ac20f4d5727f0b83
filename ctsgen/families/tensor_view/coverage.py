"""Coverage tables of tensor-view packs, along the axes of ``tensorViewNV<Dim, hasDimensions, p0, ..., p<Dim-1>>``.

SPV_NV_tensor_addressing (OpTypeTensorViewNV, OpTensorViewSet*NV) and
SPV_NV_cooperative_matrix2 (matrixCoordToTensorElementWithView):

* every permutation of every view Dim (VDim! of them per VDim);
* the layout's Dim x the view's VDim;
* hasDimensions x the clip region (OpTensorViewSetClipNV) against the
  matrix: not set (offsets 0, spans 0xFFFFFFFF), exactly the matrix, cutting
  it (some element skipped), running past it (a span past the last row or
  column: the clip width is min(N, clipColSpan)), or both;
* hasDimensions x the view's dimensions and strides: the layout span's
  (hasDimensions false), OpTensorViewSetDimensionNV with its packed strides,
  or an explicit OpTensorViewSetStrideNV.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

from ctsgen.core.coverage import Table, grid, one_way
from ctsgen.model.tensor import MAX_DIM

DIMS = tuple(range(1, MAX_DIM + 1))
CLIPS = ("not set", "exactly the matrix", "cuts the matrix", "runs past it", "cuts and runs past")
VIEW_STATE = ("layout span's", "SetDimension (packed strides)", "SetDimension + SetStride")
NO_EFFECT = ("no effect without hasDimensions: the layout span's dimensions and strides are used "
             "(SPV_NV_cooperative_matrix2, linearToViewCoord / viewCoordToLinear)")


def permutation_label(perm: list[int] | tuple[int, ...]) -> str:
    """``VDim: p<permutation>``, as the variant id spells the permutation (view3_..._p201 -> '3: p201')."""
    return f"{len(perm)}: p{''.join(map(str, perm))}"


def clip_class(clip: list[int] | None, rows: int, cols: int) -> str:
    """Where the clip window [rowOffset, rowOffset + rowSpan) x [colOffset, colOffset + colSpan)
    lies against the rows x cols matrix (one of CLIPS)."""
    if clip is None:
        return CLIPS[0]
    r0, rs, c0, cs = clip
    cuts = r0 > 0 or c0 > 0 or r0 + rs < rows or c0 + cs < cols
    past = r0 + rs > rows or c0 + cs > cols
    return CLIPS[1 + cuts + 2 * past]


def _view_state(p: dict[str, Any]) -> str:
    if p["viewDimension"] is None:
        return VIEW_STATE[0]
    return VIEW_STATE[1] if p["viewStride"] is None else VIEW_STATE[2]


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of tensor-view cases."""
    v = [p["variant"] for p in cases]
    has = [bool(x["hasDimensions"]) for x in v]
    return [
        one_way("permutation of each view Dim (all VDim! permutations)", "VDim: permutation",
                [permutation_label(x["permutation"]) for x in v],
                [permutation_label(q) for d in DIMS for q in permutations(range(d))]),
        grid("layout Dim x view Dim", "Dim", "VDim", DIMS, DIMS, ((x["Dim"], x["VDim"]) for x in v)),
        grid("hasDimensions x clip region", "hasDimensions", "clip", (False, True), CLIPS,
             zip(has, (clip_class(p["clip"], x["matrix"]["rows"], x["matrix"]["cols"]) for p, x in zip(cases, v)))),
        grid("hasDimensions x view dimensions and strides", "hasDimensions", "dimensions", (False, True), VIEW_STATE,
             zip(has, (_view_state(p) for p in cases)),
             excluded={(False, VIEW_STATE[1]): NO_EFFECT, (False, VIEW_STATE[2]): NO_EFFECT,
                       (True, VIEW_STATE[0]): "a view with hasDimensions divides by viewDimension, which "
                                              "OpCreateTensorViewNV sets to zero: SetDimension is required"}),
    ]
