"""Shared Hypothesis strategies: small composable pieces every family draws from.

Each strategy is named for what it draws and bounded by keyword
arguments, in the style of ``hypothesis.extra.numpy``; all of them
generate valid values by construction and shrink toward the simplest
readable case.
"""

from ctsgen.strategies.counts import component_counts
from ctsgen.strategies.matrices import matrix_types
from ctsgen.strategies.tensor import (
    block_sizes,
    clamp_values,
    layout_dimensions,
    slices,
    strides,
    tensor_layouts,
)
from ctsgen.strategies.views import clip_regions, permutations, store_safe_view, view_dimensions, view_strides

__all__ = ["block_sizes", "clamp_values", "clip_regions", "component_counts", "layout_dimensions", "matrix_types", "permutations",
           "slices", "store_safe_view", "strides", "tensor_layouts", "view_dimensions", "view_strides"]
