"""Strategies for decode-vector loads, valid by construction.

:func:`decode_vector_variants` draws a decode-family variant's parts and V, with a
format's block shape restricted to those whose last side is a multiple of V
(SPV_NV_cooperative_matrix_decode_vector: blockSize[LDim-1] % V == 0).
:func:`decode_vector_cases` draws a decode-family layout; a probe's blockSize gets a
last side of V or 2V (outer sides as drawn, or 1), with strides redrawn for it; a
last layoutDimension below V is widened to a multiple of V, so that V-groups exist.
The call pattern is drawn too (the reference backend's choice; the GPU ignores it).
Shrinks toward V = 2, a one-word probe, Dim 1, blockSize (1, ..., V), Undefined
clamping and the scalar call pattern.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ctsgen.core.family import StrategyOptions
from ctsgen.strategies.decode import draw_decode_parts, latin_strata
from ctsgen.families.decode_vector.case import VS, DecodeVectorCase, DecodeVectorVariant
from ctsgen.families.decode_vector.oracle import CALL_PATTERNS
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.strategies.tensor_layout import draw_layout_case, draw_optional_strides
from ctsgen.model.tensor import MAX_DIM, ClampMode
from ctsgen.strategies.cached import SEEDS


def strata() -> list[dict[str, object]]:
    """Every decoder at every Dim, with every V (each decoder's five cells take two Vs twice)
    and every clampMode; the 40 cells also pair every Dim with every V and every clampMode
    (:func:`ctsgen.strategies.decode.latin_strata`). V comes before clampMode so that
    Q8_0's and MXFP4's Dim-5 cells get V = 2, the only V a 2 x 2 x 2 x 2 x 2 block allows."""
    return latin_strata(Dim=range(1, MAX_DIM + 1), V=VS, clampMode=list(ClampMode))


@st.composite
def decode_vector_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                           decoder: str | None = None, V: int | None = None, Dim: int | None = None,
                           clampMode: ClampMode | None = None) -> DecodeVectorVariant:
    v = draw(st.sampled_from(VS)) if V is None else V
    dec, d, mode, matrix, shape = draw_decode_parts(draw, options, decoder, Dim, clampMode,
                                                    shape_ok=lambda s: s[-1] % v == 0)
    return DecodeVectorVariant(d, mode, matrix, dec, shape, v)


#: V-groups in a probe's last block side, in a widened last layoutDimension
_GROUPS_PER_BLOCK, _GROUPS_PER_SIDE = st.integers(1, 2), st.integers(1, 4)
_CALL_PATTERNS = st.sampled_from(CALL_PATTERNS)


@st.composite
def decode_vector_cases(draw: st.DrawFn, variant: DecodeVectorVariant,
                        options: StrategyOptions = StrategyOptions()) -> DecodeVectorCase:
    lc = draw_layout_case(draw, variant.layout_variant(), StrategyOptions(profile=options.profile))
    if variant.blockShape is not None:
        block = variant.blockShape
    else:
        outer = (lc.blockSize or (1,) * variant.Dim)[:-1]
        block = (*outer, variant.V * draw(_GROUPS_PER_BLOCK))
    dims = lc.layoutDimension
    if dims[-1] < variant.V:  # room for a whole V-group along LDim-1 (widening keeps slices in bounds)
        dims = (*dims[:-1], variant.V * draw(_GROUPS_PER_SIDE))
    stride = draw_optional_strides(draw, dims, block)
    lc = TensorLayoutCase(lc.shader, dims, block, stride, lc.offset, lc.span, lc.clampValue)
    seed = draw(SEEDS)
    pattern = draw(_CALL_PATTERNS)
    return DecodeVectorCase(variant, lc, seed, pattern)
