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
from ctsgen.strategies.cached import integers
from ctsgen.strategies.tensor import draw_strides, reused


@reused
def permutations(dim: int) -> st.SearchStrategy[tuple[int, ...]]:
    """A permutation of [0, dim) (the p0..p<Dim-1> of OpTypeTensorViewNV); shrinks to the identity."""
    if not 1 <= dim <= MAX_DIM:
        raise ValueError(f"dim must be in [1, {MAX_DIM}], got {dim}")
    return st.permutations(list(range(dim))).map(tuple)


def draw_view_dimensions(draw: st.DrawFn, dim: int, *, max_side: int = 8, max_elements: int = 4096
                         ) -> tuple[int, ...]:
    """``viewDimension`` for OpTensorViewSetDimensionNV: each in [1, max_side], the
    product at most ``max_elements`` (drawn outermost first, each bounded by what is left)."""
    if max_elements < 1:
        raise ValueError(f"max_elements must be >= 1, got {max_elements}")
    left, out = max_elements, []
    for _ in range(dim):
        d = draw(integers(1, max(1, min(max_side, left))))
        out.append(d)
        left //= d
    return tuple(out)


@st.composite
def view_dimensions(draw: st.DrawFn, dim: int, *, max_side: int = 8, max_elements: int = 4096
                    ) -> tuple[int, ...]:
    """:func:`draw_view_dimensions` as a strategy."""
    return draw_view_dimensions(draw, dim, max_side=max_side, max_elements=max_elements)


#: which kind of explicit viewStride :func:`draw_view_strides` draws (0 shrinks to packed strides)
_STRIDE_KINDS = st.integers(0, 1)
#: the same, after None (SetStride not executed) at 0
_OPTIONAL_STRIDE_KINDS = st.integers(0, 2)


def draw_view_strides(draw: st.DrawFn, viewDimension: tuple[int, ...], *, max_stride: int = 64,
                      optional: bool = False) -> tuple[int, ...] | None:
    """Explicit ``viewStride`` for OpTensorViewSetStrideNV: packed-plus-padding strides
    (injective over the view, shrinking to SetDimension's packed strides) or any small
    strides, zero and transposed orders included (reads may alias). ``optional``: or None
    (SetStride not executed), where it shrinks."""
    kind = draw(_OPTIONAL_STRIDE_KINDS if optional else _STRIDE_KINDS) - optional
    if kind < 0:
        return None
    dim = len(viewDimension)
    if kind == 0:
        return draw_strides(draw, viewDimension, (1,) * dim)
    small = integers(0, max_stride)
    return tuple(draw(small) for _ in range(dim))


@st.composite
def view_strides(draw: st.DrawFn, viewDimension: tuple[int, ...], *, max_stride: int = 64) -> tuple[int, ...]:
    """:func:`draw_view_strides` as a strategy."""
    return draw_view_strides(draw, viewDimension, max_stride=max_stride)


#: a clip axis's span: inside, any small one, or the whole 32-bit range left after the offset
_SPAN_KINDS = st.integers(0, 2)
#: what a clip window is: none, covering the whole matrix, or drawn axis by axis
_CLIP_KINDS = st.integers(0, 2)
#: a covering axis's span: exactly the side, a few past it, or the whole 32-bit range
_COVER_KINDS = st.integers(0, 2)


def _draw_clip_axis(draw: st.DrawFn, extent: int) -> tuple[int, int]:
    """(offset, span) of one clip axis for a matrix side of ``extent``: inside (ending at or
    before the side's end), cutting, past the end, empty, or the whole 32-bit range left
    after the offset."""
    offset = draw(integers(0, extent + 2))
    kind = draw(_SPAN_KINDS)
    if kind == 0:
        span = draw(integers(0, max(0, extent - offset)))
    elif kind == 1:
        span = draw(integers(0, extent + 4))
    else:
        span = UINT32_MAX - offset
    return offset, span


def _draw_covering_axis(draw: st.DrawFn, extent: int) -> tuple[int, int]:
    """(0, span) of one clip axis that keeps the whole matrix side: a span of exactly
    ``extent``, a few past it, or the whole 32-bit range."""
    kind = draw(_COVER_KINDS)
    return 0, (extent if kind == 0 else draw(integers(extent + 1, extent + 4)) if kind == 1 else UINT32_MAX)


def draw_clip_region(draw: st.DrawFn, rows: int, cols: int, *, max_elements: int | None = None
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
        kind = draw(_CLIP_KINDS)
        if kind == 0:
            return None
        axis = _draw_covering_axis if kind == 1 else _draw_clip_axis
        return (*axis(draw, rows), *axis(draw, cols))
    col_span = draw(integers(1, min(cols, max_elements)))
    row_span = draw(integers(1, max(1, min(rows, max_elements // col_span))))
    return (draw(integers(0, rows - 1)), row_span, draw(integers(0, cols - 1)), col_span)


@st.composite
def clip_regions(draw: st.DrawFn, rows: int, cols: int, *, max_elements: int | None = None
                 ) -> tuple[int, int, int, int] | None:
    """:func:`draw_clip_region` as a strategy."""
    return draw_clip_region(draw, rows, cols, max_elements=max_elements)


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
