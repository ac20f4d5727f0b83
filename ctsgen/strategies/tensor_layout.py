"""Strategies for tensor-layout loads and stores.

Drawn in two dependent steps, so a pack can share compiled shaders:
:func:`layout_variants` draws the compile-time signature, :func:`layout_cases`
the run-time parameters valid for it. Validity by construction:

* stores never set blockSize, and their span holds at least one element per
  matrix element (otherwise two stores race for one tensor element);
* Undefined clamping is only drawn with every access in bounds;
* RepeatMirrored keeps every layoutDimension >= 2 unless hazardous cases
  are asked for (docs/spec-decisions.md, "mirror-repeat-dim-1").

Everything shrinks toward Dim 1, Undefined clamping, the smallest float16
subgroup matrix the device lists (8x8 B on the H100), no block size,
default strides, no slice, iota data. (A store is one draw shorter than a
load, which draws its optional blockSize, so the shrinker may end on either.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, ProfileLacksError, default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.ops.tensor_layout_case import LayoutVariant, TensorLayoutCase
from ctsgen.ops.tensor_layout import Operation
from ctsgen.model.tensor import MAX_DIM, ClampMode, ceil_div
from ctsgen.strategies import block_sizes, layout_dimensions, matrix_types, slices
from ctsgen.strategies.cached import SEEDS
from ctsgen.strategies.tensor import CLAMP_VALUES, draw_layout_dimensions, draw_slice, draw_strides, reused

if TYPE_CHECKING:
    from ctsgen.ops.decode_case import DecodeVariant
    from ctsgen.ops.tensor_view_case import ViewVariant


def strata() -> list[dict[str, object]]:
    """Every operation x Dim x clampMode: the cells a pack must cover."""
    return [{"operation": op, "Dim": d, "clampMode": mode}
            for op in Operation for d in range(1, MAX_DIM + 1) for mode in ClampMode]


@st.composite
def layout_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                    operation: Operation | None = None, Dim: int | None = None,
                    clampMode: ClampMode | None = None) -> LayoutVariant:
    """Draw a compile-time signature; keyword arguments pin a part of it."""
    profile = options.profile or default_profile()
    op = draw(st.sampled_from(operations(profile, operation)))
    d = draw(st.integers(1, MAX_DIM)) if Dim is None else Dim
    mode = draw(st.sampled_from(list(ClampMode))) if clampMode is None else clampMode
    matrix = draw(matrix_types(profile))
    return LayoutVariant(op, d, mode, matrix)


def operations(profile: DeviceProfile, pinned: Operation | None = None) -> list[Operation]:
    """The operations ``profile`` runs (``pinned``: that one), load first: a load's layout may set a
    blockSize at run time, which needs cooperativeMatrixBlockLoads (LayoutVariant.requirements)."""
    ops = [op for op in Operation if pinned in (None, op)
           and (op is not Operation.load or profile.has_feature("cooperativeMatrixBlockLoads"))]
    if not ops:
        raise ProfileLacksError(f"device profile {profile.name!r} runs no tensor-layout {pinned.value}: feature "
                                "cooperativeMatrixBlockLoads is not supported")
    return ops


_PATTERNS = st.sampled_from(("iota", "random"))
_BOOLEANS = st.booleans()
#: the optional instructions' "not executed" (None) or a value; each shrinks to None
_OPTIONAL_CLAMP = st.one_of(st.none(), CLAMP_VALUES)


@reused
def _optional(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """None (the instruction is not executed) or a drawn value; shrinks to None."""
    return st.one_of(st.none(), strategy)


@st.composite
def layout_cases(draw: st.DrawFn, variant: LayoutVariant,
                 options: StrategyOptions = StrategyOptions()) -> TensorLayoutCase:
    """Draw valid run-time parameters for ``variant``."""
    return draw_layout_case(draw, variant, options)


def layout_part(variant: ViewVariant | DecodeVariant, options: StrategyOptions
                ) -> tuple[LayoutVariant, StrategyOptions]:
    """The layout variant under a view or decode variant, and the options its layout cases are drawn
    with: the profile's, never the hazardous group (it stays in the tensor-layout family's opt-in
    cases). Built once per variant and passed to its cases' composite."""
    return variant.layout_variant(), StrategyOptions(profile=options.profile)


def draw_layout_case(draw: st.DrawFn, variant: LayoutVariant,
                     options: StrategyOptions = StrategyOptions()) -> TensorLayoutCase:
    """:func:`layout_cases`'s draws, for strategies that build on a layout case (tensor-view,
    decode): one helper called with their ``draw``, not a strategy built for each case."""
    D, mode, m = variant.Dim, variant.clampMode, variant.matrix
    min_side = 2 if mode is ClampMode.RepeatMirrored and not options.include_hazardous else 1
    dims = list(draw_layout_dimensions(draw, D, min_side=min_side))
    in_bounds = mode is ClampMode.Undefined
    sliced = draw(_BOOLEANS)
    blockSize = None
    if variant.operation is Operation.load:
        blockSize = draw(_optional(block_sizes(D)))
        need = 1
    else:
        need = m.elements  # one tensor element per stored matrix element
        if not sliced or in_bounds:
            dims[0] = max(dims[0], ceil_div(need, math.prod(dims[1:])))
    dims = tuple(dims)
    stride = draw_optional_strides(draw, dims, blockSize or (1,) * D)
    offset = span = None
    if sliced:
        offset, span = draw_slice(draw, dims, in_bounds=in_bounds, min_elements=need)
    clampValue = draw(_OPTIONAL_CLAMP)
    pattern = draw(_PATTERNS)
    seed = draw(SEEDS) if pattern == "random" else 0
    return TensorLayoutCase(variant, dims, blockSize, stride, offset, span, clampValue, pattern, seed)


def draw_optional_strides(draw: st.DrawFn, layoutDimension: tuple[int, ...], blockSize: tuple[int, ...]
                          ) -> tuple[int, ...] | None:
    """None (SetStride not executed; shrinks to it) or :func:`draw_strides`: the choices of
    ``one_of(none(), strides(...))`` without a strategy built for each layout."""
    if not draw(_BOOLEANS):
        return None
    return draw_strides(draw, layoutDimension, blockSize)


@st.composite
def hazardous_layout_cases(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(),
                           variants: Sequence[LayoutVariant] = ()) -> TensorLayoutCase:
    """Draw a load that hits "mirror-repeat-dim-1" (docs/spec-decisions.md):
    RepeatMirrored with an axis of layoutDimension 1 accessed out of bounds.
    The spec gives it no defined period; the H100 never finishes it. Opt-in only.

    ``variants``: prefer these shaders (those that fit), so hazardous cases
    share dispatches with ordinary ones and the runner must isolate them."""
    fitting = sorted({v for v in variants if v.operation is Operation.load
                      and v.clampMode is ClampMode.RepeatMirrored and v.Dim > 1}, key=lambda v: v.id)
    v = draw(st.sampled_from(fitting) if fitting else
             layout_variants(options, operation=Operation.load, clampMode=ClampMode.RepeatMirrored))
    dims = list(draw(layout_dimensions(v.Dim, min_side=2)))
    axis = draw(st.integers(0, v.Dim - 1))
    dims[axis] = 1
    offset, span = draw(slices(tuple(dims)))
    offset = list(offset)
    offset[axis] = draw(st.sampled_from([1, -1, 2, -5]))  # nonzero: every access on the axis is out of bounds
    return TensorLayoutCase(v, tuple(dims), offset=tuple(offset), span=span)
