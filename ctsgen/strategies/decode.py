"""Strategies for decode loads.

:func:`decode_variants` draws the decode function (probe or format), Dim,
clampMode, a matrix type the decode function can return exactly (probes:
32-bit Accumulators; formats: float16 or float32) and, for a format, a
block shape: sides whose product is the format's K, the outer ones from
{1, 2, 4} (blockSize > 1 in several dimensions; how many is drawn first,
often all of them). Formats run at every Dim: a 4-D or 5-D layout's sides are small
(the tensor-layout family's bounds), so its encoded tensor is no larger than
a 3-D one's. :func:`decode_cases` reuses
the tensor-layout family's layout strategy; a format's layout gets
blockSize = the block shape and strides valid for it. Shrinks toward a
probe of one word, Dim 1, blockSize 1 (probes) or the flattest block shape
(1, ..., 1, K), Undefined clamping and the tensor-layout family's simplest layout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from ctsgen.device.profile import default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.ops.decode_case import PROBES, DecodeCase, DecodeVariant
from ctsgen.ops.decode import FORMATS, block_shapes
from ctsgen.ops.tensor_layout_case import LayoutVariant, TensorLayoutCase
from ctsgen.strategies.tensor_layout import draw_layout_case, draw_optional_strides, layout_part
from ctsgen.model.tensor import MAX_DIM, ClampMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse
from ctsgen.strategies import matrix_types
from ctsgen.strategies.cached import SEEDS

DECODERS = PROBES + tuple(FORMATS)
PROBE_TYPES = (ComponentType.uint32, ComponentType.sint32, ComponentType.float32)
FORMAT_TYPES = (ComponentType.float16, ComponentType.float32)


def latin_strata(**axes: Sequence[object]) -> list[dict[str, object]]:
    """Cells that give every decoder every value of each axis: decoder i gets as many cells as
    the longest axis has values, cell r taking value (r + k * i) mod n of its k-th axis (n
    values). Each decoder pairs two axes of n values differently (a Latin square), so with n
    decoders or more every pair of their values meets somewhere; no crossed grid is needed."""
    rows = max(len(values) for values in axes.values())
    return [{"decoder": dec, **{name: values[(r + k * i) % len(values)]
                                for k, (name, values) in enumerate(axes.items())}}
            for i, dec in enumerate(DECODERS) for r in range(rows)]


def strata() -> list[dict[str, object]]:
    """Every decoder at every Dim and with every clampMode; the 40 cells also pair every Dim
    with every clampMode (:func:`latin_strata`)."""
    return latin_strata(Dim=range(1, MAX_DIM + 1), clampMode=list(ClampMode))


def draw_decode_parts(draw: st.DrawFn, options: StrategyOptions, decoder: str | None, Dim: int | None,
                      clampMode: ClampMode | None, shape_ok: Callable[[tuple[int, ...]], bool] = lambda s: True
                      ) -> tuple[str, int, ClampMode, MatrixType, tuple[int, ...] | None]:
    """(decoder, Dim, clampMode, matrix, block shape) of a decode variant; a format's
    block shape is one of :func:`block_shapes` that ``shape_ok`` accepts (the
    decode-vector family asks for a last side that is a multiple of V)."""
    dec = draw(st.sampled_from(DECODERS)) if decoder is None else decoder
    fmt = FORMATS.get(dec)
    d = draw(st.integers(1, MAX_DIM)) if Dim is None else Dim
    mode = draw(st.sampled_from(list(ClampMode))) if clampMode is None else clampMode
    types = FORMAT_TYPES if fmt else PROBE_TYPES
    matrix = draw(matrix_types(options.profile or default_profile(), components=types,
                               uses=None if fmt else (MatrixUse.Accumulator,)))
    shape = draw(_block_shape(d, fmt.K, shape_ok)) if fmt else None
    return dec, d, mode, matrix, shape


def _spread(shape: tuple[int, ...]) -> int:
    """How many sides of a block shape are > 1."""
    return sum(side > 1 for side in shape)


def _block_shape(dim: int, K: int, shape_ok: Callable[[tuple[int, ...]], bool]
                 ) -> st.SearchStrategy[tuple[int, ...]]:
    """One of :func:`block_shapes` that ``shape_ok`` accepts: first how many sides are > 1,
    then the shape; shrinks to the flattest. The count is uniform, or (half the draws) the
    largest there is: a block over every dimension is the hardest coordInBlock to linearise,
    and at Dim 5 a 32-element block has one such shape among 66."""
    shapes = [s for s in block_shapes(dim, K) if shape_ok(s)]
    spreads = sorted({_spread(s) for s in shapes})
    return st.one_of(st.sampled_from(spreads), st.just(spreads[-1])).flatmap(
        lambda n: st.sampled_from([s for s in shapes if _spread(s) == n]))


@st.composite
def decode_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                    decoder: str | None = None, Dim: int | None = None,
                    clampMode: ClampMode | None = None) -> DecodeVariant:
    dec, d, mode, matrix, shape = draw_decode_parts(draw, options, decoder, Dim, clampMode)
    return DecodeVariant(d, mode, matrix, dec, shape)


def decode_cases(variant: DecodeVariant, options: StrategyOptions = StrategyOptions()
                 ) -> st.SearchStrategy[DecodeCase]:
    """A decode load's run-time parameters: its layout (blockSize = the format's block shape) and a data seed."""
    return _decode_cases(variant, *layout_part(variant, options))


@st.composite
def _decode_cases(draw: st.DrawFn, variant: DecodeVariant, layout_variant: LayoutVariant, options: StrategyOptions
                  ) -> DecodeCase:
    """:func:`decode_cases`'s draws, with the layout part of ``variant`` and the layout's options
    built once for all the cases of the variant."""
    lc = draw_layout_case(draw, layout_variant, options)
    if variant.blockShape is not None:
        stride = draw_optional_strides(draw, lc.layoutDimension, variant.blockShape)
        lc = TensorLayoutCase(lc.shader, lc.layoutDimension, variant.blockShape, stride, lc.offset, lc.span,
                              lc.clampValue)
    return DecodeCase(variant, lc, draw(SEEDS))
