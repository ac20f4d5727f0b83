"""Strategies for tensor-view state (SPV_NV_tensor_addressing, "3.X Tensor Layout and View").

Valid by construction and shrinking toward the simplest view: the identity
permutation, viewDimension of ones, the strides OpTensorViewSetDimensionNV
sets, no clip.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from ctsgen.model.tensor import MAX_DIM, UINT32_MAX
from ctsgen.strategies.tensor import reused, strides


@reused
def permutations(dim: int) -> st.SearchStrategy[tuple[int, ...]]:
    """A permutation of [0, dim) (the p0..p<Dim-1> of OpTypeTensorViewNV); shrinks to the identity."""
    if not 1 <= dim <= MAX_DIM:
        raise ValueError(f"dim must be in [1, {MAX_DIM}], got {dim}")
    return st.permutations(list(range(dim))).map(tuple)


@reused
@st.composite
def view_dimensions(draw: st.DrawFn, dim: int, *, max_side: int = 8, max_elements: int = 4096
                    ) -> tuple[int, ...]:
    """``viewDimension`` for OpTensorViewSetDimensionNV: each in [1, max_side], the
    product at most ``max_elements`` (drawn outermost first, each bounded by what is left)."""
    if max_elements < 1:
        raise ValueError(f"max_elements must be >= 1, got {max_elements}")
    left, out = max_elements, []
    for _ in range(dim):
        d = draw(st.integers(1, max(1, min(max_side, left))))
        out.append(d)
        left //= d
    return tuple(out)


@reused
def view_strides(viewDimension: tuple[int, ...], *, max_stride: int = 64) -> st.SearchStrategy[tuple[int, ...]]:
    """Explicit ``viewStride`` for OpTensorViewSetStrideNV: packed-plus-padding strides
    (injective over the view, shrinking to SetDimension's packed strides) or any small
    strides, zero and transposed orders included (reads may alias)."""
    dim = len(viewDimension)
    return st.one_of(strides(viewDimension, (1,) * dim),
                     st.tuples(*[st.integers(0, max_stride)] * dim))


@reused
def _clip_axis(extent: int) -> st.SearchStrategy[tuple[int, int]]:
    """(offset, span) of one clip axis for a matrix side of ``extent``: inside (ending at or
    before the side's end), cutting, past the end, empty, or the whole 32-bit range left
    after the offset."""

    @st.composite
    def axis(draw: st.DrawFn) -> tuple[int, int]:
        offset = draw(st.integers(0, extent + 2))
        span = draw(st.one_of(st.integers(0, max(0, extent - offset)), st.integers(0, extent + 4),
                              st.just(UINT32_MAX - offset)))
        return offset, span

    return axis()


@reused
def _covering_axis(extent: int) -> st.SearchStrategy[tuple[int, int]]:
    """(0, span) of one clip axis that keeps the whole matrix side: a span of exactly
    ``extent``, a few past it, or the whole 32-bit range."""
    return st.tuples(st.just(0), st.one_of(st.just(extent), st.integers(extent + 1, extent + 4),
                                           st.just(UINT32_MAX)))


@reused
@st.composite
def clip_regions(draw: st.DrawFn, rows: int, cols: int, *, max_elements: int | None = None
                 ) -> tuple[int, int, int, int] | None:
    """``(clipRowOffset, clipRowSpan, clipColOffset, clipColSpan)`` for OpTensorViewSetClipNV,
    or None (no clip; shrinks to it). A window that covers the whole matrix (exactly, or
    running past it) is drawn as such, both axes at once: axes drawn on their own
    rarely both start at 0 with a span of at least the side.

    ``max_elements``: the view's linear indices inside the clip, ``(row - clipRowOffset) *
    min(cols, clipColSpan) + col - clipColOffset``, stay below it (a store must not wrap
    around the view); a clip is then forced when the whole matrix does not fit.
    Offset + span never passes 2^32-1 (decision "clip-no-wrap").
    """
    if max_elements is None or rows * cols <= max_elements:
        got = draw(st.one_of(st.none(), st.tuples(_covering_axis(rows), _covering_axis(cols)),
                             st.tuples(_clip_axis(rows), _clip_axis(cols))))
        return None if got is None else (*got[0], *got[1])
    col_span = draw(st.integers(1, min(cols, max_elements)))
    row_span = draw(st.integers(1, max(1, min(rows, max_elements // col_span))))
    return (draw(st.integers(0, rows - 1)), row_span, draw(st.integers(0, cols - 1)), col_span)


def store_safe_view(viewDimension: tuple[int, ...], viewStride: tuple[int, ...] | None,
                    span_elements: int) -> tuple[int, ...] | None:
    """``viewStride`` if it maps the view's coordinates to distinct indices below
    ``span_elements`` (so no two stored elements meet in the span), else None
    (SetDimension's packed strides, which do)."""
    if viewStride is None:
        return None
    coords = np.indices(viewDimension, dtype=np.int64).reshape(len(viewDimension), -1)
    linear = np.tensordot(np.asarray(viewStride, dtype=np.int64), coords, axes=1)
    if np.unique(linear).size == math.prod(viewDimension) and int(linear.max()) < span_elements:
        return viewStride
    return None
