"""Strategies for decode loads.

:func:`decode_variants` draws the decode function (probe or format), Dim,
clampMode, a matrix type the decode function can return exactly (probes:
32-bit Accumulators; formats: float16 or float32) and, for a format, a
block shape: sides whose product is the format's K, the outer ones from
{1, 2, 4} (blockSize > 1 in several dimensions). :func:`decode_cases` reuses
the tensor-layout family's layout strategy; a format's layout gets
blockSize = the block shape and strides valid for it. Shrinks toward a
probe of one word, Dim 1, blockSize 1 (probes) or the flattest block shape
(1, ..., 1, K), Undefined clamping and the tensor-layout family's simplest layout.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import strategies as st

from ctsgen.device.profile import default_profile
from ctsgen.families.base import StrategyOptions
from ctsgen.families.decode.case import PROBES, DecodeCase, DecodeVariant
from ctsgen.families.decode.formats import FORMATS
from ctsgen.families.tensor_layout.case import TensorLayoutCase
from ctsgen.families.tensor_layout.strategy import layout_cases
from ctsgen.model.tensor import MAX_DIM, ClampMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse
from ctsgen.strategies import matrix_types, strides

DECODERS = PROBES + tuple(FORMATS)
PROBE_TYPES = (ComponentType.uint32, ComponentType.sint32, ComponentType.float32)
FORMAT_TYPES = (ComponentType.float16, ComponentType.float32)
MAX_FORMAT_DIM = 3


def strata() -> list[dict[str, object]]:
    """Every decoder x clampMode."""
    return [{"decoder": d, "clampMode": mode} for d in DECODERS for mode in ClampMode]


def block_shapes(dim: int, K: int) -> list[tuple[int, ...]]:
    """Block shapes of ``dim`` sides with product K, outer sides in {1, 2, 4}, flattest first."""
    shapes = [()]
    for _ in range(dim - 1):
        shapes = [s + (o,) for s in shapes for o in (1, 2, 4)]
    out = [s + (K // math.prod(s),) for s in shapes if K % math.prod(s) == 0]
    return sorted(out, key=lambda s: (math.prod(s[:-1]), s))


def draw_decode_parts(draw: st.DrawFn, options: StrategyOptions, decoder: str | None, Dim: int | None,
                      clampMode: ClampMode | None, shape_ok: Callable[[tuple[int, ...]], bool] = lambda s: True
                      ) -> tuple[str, int, ClampMode, MatrixType, tuple[int, ...] | None]:
    """(decoder, Dim, clampMode, matrix, block shape) of a decode variant; a format's
    block shape is one of :func:`block_shapes` that ``shape_ok`` accepts (the
    decode-vector family asks for a last side that is a multiple of V)."""
    dec = draw(st.sampled_from(DECODERS)) if decoder is None else decoder
    fmt = FORMATS.get(dec)
    d = draw(st.integers(1, MAX_FORMAT_DIM if fmt else MAX_DIM)) if Dim is None else Dim
    mode = draw(st.sampled_from(list(ClampMode))) if clampMode is None else clampMode
    types = FORMAT_TYPES if fmt else PROBE_TYPES
    matrix = draw(matrix_types(options.profile or default_profile()).filter(
        lambda m: m.component in types and (fmt is not None or m.use is MatrixUse.Accumulator)))
    shape = draw(st.sampled_from([s for s in block_shapes(d, fmt.K) if shape_ok(s)])) if fmt else None
    return dec, d, mode, matrix, shape


@st.composite
def decode_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                    decoder: str | None = None, Dim: int | None = None,
                    clampMode: ClampMode | None = None) -> DecodeVariant:
    dec, d, mode, matrix, shape = draw_decode_parts(draw, options, decoder, Dim, clampMode)
    return DecodeVariant(d, mode, matrix, dec, shape)


@st.composite
def decode_cases(draw: st.DrawFn, variant: DecodeVariant, options: StrategyOptions = StrategyOptions()
                 ) -> DecodeCase:
    lc = draw(layout_cases(variant.layout_variant(), StrategyOptions(profile=options.profile)))
    if variant.blockShape is not None:
        stride = draw(st.one_of(st.none(), strides(lc.layoutDimension, variant.blockShape)))
        lc = TensorLayoutCase(lc.shader, lc.layoutDimension, variant.blockShape, stride, lc.offset, lc.span,
                              lc.clampValue)
    seed = draw(st.integers(0, 2**32 - 1))
    return DecodeCase(variant, lc, seed)


def all_decode_cases(options: StrategyOptions = StrategyOptions(), **pinned: object) -> st.SearchStrategy[DecodeCase]:
    return decode_variants(options, **pinned).flatmap(lambda v: decode_cases(v, options))
