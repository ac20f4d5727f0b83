"""Strategies for loads and stores through a tensor layout and a tensor view.

:func:`view_variants` draws the compile-time signature (the tensor-layout
family's part, then ``VDim``, ``hasDimensions`` and a permutation of
[0, VDim)); :func:`view_cases` draws a tensor-layout case with the
tensor-layout family's own strategy and adds the view state. Validity by
construction:

* a view with hasDimensions always runs OpTensorViewSetDimensionNV (its
  dimensions start at zero and linearToViewCoord divides by them); one
  without has VDim == Dim (it borrows the layout's span);
* clip offset + span never passes 2^32-1 (decision "clip-no-wrap");
* stores never let two matrix elements reach one tensor element: the view's
  linear indices of the elements inside the clip stay below the product of
  its dimensions, and that product stays at most the layout span's element
  count (see :func:`ctsgen.strategies.views.store_safe_view`).

Everything shrinks toward the identity permutation, no explicit view
stride, no clip, and the tensor-layout family's simplest layout.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from ctsgen.device.profile import default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.ops.tensor_layout_case import LayoutVariant, TensorLayoutCase
from ctsgen.ops.tensor_layout import Operation
from ctsgen.strategies.tensor_layout import draw_layout_case, layout_part, operations
from ctsgen.ops.tensor_view_case import TensorViewCase, ViewVariant
from ctsgen.model.tensor import MAX_DIM, ClampMode
from ctsgen.strategies import matrix_types, permutations, store_safe_view
from ctsgen.strategies.views import draw_clip_region, draw_view_dimensions, draw_view_strides


def strata() -> list[dict[str, object]]:
    """Every operation x Dim x hasDimensions x clampMode."""
    return [{"operation": op, "Dim": d, "hasDimensions": h, "clampMode": mode}
            for op in Operation for d in range(1, MAX_DIM + 1) for h in (False, True) for mode in ClampMode]


@st.composite
def view_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                  operation: Operation | None = None, Dim: int | None = None,
                  clampMode: ClampMode | None = None, hasDimensions: bool | None = None) -> ViewVariant:
    """Draw a compile-time signature; keyword arguments pin a part of it."""
    profile = options.profile or default_profile()
    op = draw(st.sampled_from(operations(profile, operation)))
    d = draw(st.integers(1, MAX_DIM)) if Dim is None else Dim
    mode = draw(st.sampled_from(list(ClampMode))) if clampMode is None else clampMode
    has = draw(st.booleans()) if hasDimensions is None else hasDimensions
    vdim = draw(st.integers(1, MAX_DIM)) if has else d
    perm = draw(permutations(vdim))
    matrix = draw(matrix_types(profile))
    return ViewVariant(op, d, mode, matrix, has, perm)


def view_cases(variant: ViewVariant, options: StrategyOptions = StrategyOptions()
               ) -> st.SearchStrategy[TensorViewCase]:
    """Draw valid run-time layout and view parameters for ``variant``."""
    return _view_cases(variant, *layout_part(variant, options))


@st.composite
def _view_cases(draw: st.DrawFn, variant: ViewVariant, layout_variant: LayoutVariant, options: StrategyOptions
                ) -> TensorViewCase:
    """:func:`view_cases`'s draws, with the layout part of ``variant`` and the layout's options
    built once for all the cases of the variant."""
    return draw_view_over(draw, variant, draw_layout_case(draw, layout_variant, options))


def draw_view_over(draw: st.DrawFn, variant: ViewVariant, lc: TensorLayoutCase) -> TensorViewCase:
    """Draw valid view parameters for ``variant`` over the layout case ``lc`` (drawn by any
    strategy of ``variant``'s layout part: a decode load's, with blockSize = its block shape)."""
    m = variant.matrix
    store = variant.operation is Operation.store
    dims = stride = clip = None
    # a store's view stays inside the layout's span (the layout replayed only then)
    span_elements = lc.layout().span_elements if store else None
    if variant.hasDimensions:
        dims = draw_view_dimensions(draw, variant.VDim, max_elements=span_elements if store else 4096)
        stride = draw_view_strides(draw, dims, optional=True)
    if store:
        capacity = math.prod(dims) if dims is not None else span_elements
        clip = draw_clip_region(draw, m.rows, m.cols, max_elements=capacity)
        if dims is not None:
            stride = store_safe_view(dims, stride, span_elements)
    else:
        clip = draw_clip_region(draw, m.rows, m.cols)
    return TensorViewCase(variant, lc, dims, stride, clip)
