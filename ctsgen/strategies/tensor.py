"""Strategies for tensor-layout state (SPV_NV_tensor_addressing, "3.X Tensor Layout and View").

Every piece draws a *valid* value by construction: strides obey the
OpTensorLayoutSetStrideNV rule, spans are never zero, in-bounds slices
stay in bounds. Edges are reachable (dimensions of 1, blocks larger than
a dimension, negative offsets, spans past the layout) and everything
shrinks toward the default: small dimensions, blockSize 1, the strides
SetDimension would set, offset 0.
"""

from __future__ import annotations

import functools
import math

from hypothesis import strategies as st

from ctsgen.model.tensor import MAX_DIM, ClampMode, TensorLayout, ceil_div
from ctsgen.strategies.cached import integers

#: Largest side per number of dimensions, so a tensor stays a few thousand elements.
DEFAULT_MAX_SIDE = {1: 600, 2: 40, 3: 14, 4: 7, 5: 5}

#: Strategy factories are memoised (their arguments are small tuples and ints): a
#: strategy object built once is validated once, where a fresh one per draw cost
#: Hypothesis about half of each case's draw time (bench/throughput.py).
reused = functools.lru_cache(maxsize=8192)

#: clampValue bit patterns worth hitting: zero, one, float 1.0, the sign and
#: top bits of 8/16/32-bit types, all ones.
EDGE_CLAMP_VALUES = (0, 1, 0x3F800000, 0x7F, 0x80, 0xFF, 0x3C00, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
                     0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)


@reused
def _sides(dim: int, min_side: int, max_side: int | None) -> st.SearchStrategy[int]:
    """One side of a ``dim``-dimensional layout, in [min_side, max_side or DEFAULT_MAX_SIDE[dim]]."""
    if not 1 <= dim <= MAX_DIM:
        raise ValueError(f"dim must be in [1, {MAX_DIM}], got {dim}")
    hi = DEFAULT_MAX_SIDE[dim] if max_side is None else max_side
    if not 1 <= min_side <= hi:
        raise ValueError(f"need 1 <= min_side <= max_side, got {min_side}, {hi}")
    return integers(min_side, hi)


def draw_layout_dimensions(draw: st.DrawFn, dim: int, *, min_side: int = 1, max_side: int | None = None
                           ) -> tuple[int, ...]:
    """``layoutDimension`` for a ``dim``-dimensional layout, each in [min_side, max_side]:
    the draws of :func:`layout_dimensions` without building a strategy per call."""
    side = _sides(dim, min_side, max_side)
    return tuple(draw(side) for _ in range(dim))


@reused
def layout_dimensions(dim: int, *, min_side: int = 1, max_side: int | None = None
                      ) -> st.SearchStrategy[tuple[int, ...]]:
    """Draw ``layoutDimension`` for a ``dim``-dimensional layout (each in [min_side, max_side])."""
    return st.tuples(*[_sides(dim, min_side, max_side)] * dim)


@reused
def block_sizes(dim: int, *, max_block: int = 8) -> st.SearchStrategy[tuple[int, ...]]:
    """Draw ``blockSize`` (each in [1, max_block]; may exceed the dimension)."""
    return st.tuples(*[integers(1, max_block)] * dim)


def draw_strides(draw: st.DrawFn, layoutDimension: tuple[int, ...], blockSize: tuple[int, ...], *,
                 max_padding: int = 3) -> tuple[int, ...]:
    """Valid explicit strides: each ``stride[i]`` is the minimum allowed,
    ``stride[i+1] * ceiling(layoutDimension[i+1] / blockSize[i+1])``, plus a
    padding in [0, max_padding] (innermost: 1 + padding), drawn outermost first.
    Shrinks to the strides OpTensorLayoutSetDimensionNV sets."""
    dim = len(layoutDimension)
    pad = integers(0, max_padding)
    padding = [draw(pad) for _ in range(dim)]
    out = [1 + padding[-1]] * dim
    for i in range(dim - 2, -1, -1):
        out[i] = out[i + 1] * ceil_div(layoutDimension[i + 1], blockSize[i + 1]) + padding[i]
    return tuple(out)


@st.composite
def strides(draw: st.DrawFn, layoutDimension: tuple[int, ...], blockSize: tuple[int, ...], *,
            max_padding: int = 3) -> tuple[int, ...]:
    """:func:`draw_strides` as a strategy."""
    return draw_strides(draw, layoutDimension, blockSize, max_padding=max_padding)


def draw_slice(draw: st.DrawFn, layoutDimension: tuple[int, ...], *, in_bounds: bool = False,
               min_elements: int = 1, max_span: int | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(offset, span)`` for OpTensorLayoutSliceNV.

    ``in_bounds``: every span coordinate plus offset stays inside the layout
    (what a Undefined-clamp layout needs); otherwise offsets may be negative
    and spans may run past the layout. ``min_elements``: the span holds at
    least that many elements (a store needs one per matrix element, or two
    matrix elements would race for one tensor element); with ``in_bounds``
    the caller must make the layout itself that large.
    """
    dim = len(layoutDimension)
    if in_bounds and math.prod(layoutDimension) < min_elements:
        raise ValueError(f"a layout of {math.prod(layoutDimension)} elements has no in-bounds "
                         f"span of {min_elements} elements")
    hi = [d if in_bounds else max(2 * d, 4) for d in layoutDimension]
    if max_span is not None and not in_bounds:
        hi = [min(h, max_span) for h in hi]
    inner = [draw(integers(1, hi[i])) for i in range(1, dim)]
    need0 = ceil_div(min_elements, math.prod(inner))
    if need0 > hi[0]:
        # the inner spans are too small for min_elements: use the largest ones
        inner = hi[1:]
        need0 = ceil_div(min_elements, math.prod(inner))
    span0 = draw(integers(need0, max(need0, hi[0])))
    span = (span0, *inner)
    if in_bounds:
        offset = tuple(draw(integers(0, d - s)) for d, s in zip(layoutDimension, span))
    else:
        offset = tuple(draw(integers(-(d + s), d + 2)) for d, s in zip(layoutDimension, span))
    return offset, span


@st.composite
def slices(draw: st.DrawFn, layoutDimension: tuple[int, ...], *, in_bounds: bool = False,
           min_elements: int = 1, max_span: int | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`draw_slice` as a strategy."""
    return draw_slice(draw, layoutDimension, in_bounds=in_bounds, min_elements=min_elements, max_span=max_span)


#: a 32-bit clampValue, often an edge bit pattern (shrinks to 0)
CLAMP_VALUES = st.one_of(st.sampled_from(EDGE_CLAMP_VALUES), st.integers(0, 2**32 - 1))


def clamp_values() -> st.SearchStrategy[int]:
    """Draw a 32-bit clampValue, often an edge bit pattern (shrinks to 0)."""
    return CLAMP_VALUES


@st.composite
def tensor_layouts(draw: st.DrawFn, *, dim: int | None = None, clamp_mode: ClampMode | None = None,
                   blocked: bool = True, sliced: bool = True, in_bounds: bool = False,
                   max_side: int | None = None) -> TensorLayout:
    """Draw a valid ``tensorLayoutNV`` state built by the spec's instruction
    sequence (create, SetBlockSize, SetDimension, SetStride, Slice, SetClampValue).

    Keyword arguments fix or bound what is drawn; RepeatMirrored layouts get
    every layoutDimension >= 2 (see docs/spec-decisions.md, "mirror-repeat-dim-1").
    """
    d = draw(st.integers(1, MAX_DIM)) if dim is None else dim
    mode = draw(st.sampled_from(list(ClampMode))) if clamp_mode is None else clamp_mode
    min_side = 2 if mode is ClampMode.RepeatMirrored else 1
    dims = draw(layout_dimensions(d, min_side=min_side, max_side=max_side))
    t = TensorLayout.create(d, mode)
    if blocked and draw(st.booleans()):
        t = t.set_block_size(*draw(block_sizes(d)))
    t = t.set_dimension(*dims)
    if draw(st.booleans()):
        t = t.set_stride(*draw(strides(dims, t.blockSize)))
    if sliced and draw(st.booleans()):
        offset, span = draw(slices(dims, in_bounds=in_bounds or mode is ClampMode.Undefined))
        t = t.slice(offset, span)
    if mode is ClampMode.Constant:
        t = t.set_clamp_value(draw(clamp_values()))
    return t
