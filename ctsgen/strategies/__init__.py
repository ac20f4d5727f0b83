"""Shared Hypothesis strategies: small composable pieces every family draws from.

Each strategy is named for what it draws and bounded by keyword
arguments, in the style of ``hypothesis.extra.numpy``; all of them
generate valid values by construction and shrink toward the simplest
readable case.
"""

from ctsgen.strategies.matrices import matrix_types
from ctsgen.strategies.tensor import (
    block_sizes,
    clamp_values,
    layout_dimensions,
    slices,
    strides,
    tensor_layouts,
)

__all__ = ["block_sizes", "clamp_values", "layout_dimensions", "matrix_types", "slices", "strides",
           "tensor_layouts"]
