"""Coverage tables of decode packs: OpCooperativeMatrixLoadTensorNV with a DecodeFunc.

SPV_NV_cooperative_matrix2 (DecodeFunc receives blockCoord and coordInBlock
of a tensor of Dim 1..5) over the decode functions of :mod:`.formats` (the
block formats Q8_0, Q4_0, Q4_K, MXFP4, Q5_K, Q6_K and the addressing probes):

* decode function x Dim;
* decode function x how many dimensions have blockSize > 1 (0..Dim; a
  format's block holds K > 1 elements, so at least one);
* decode function x clampMode (the five Tensor Clamp Mode values).
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.ops.decode_case import PROBES
from ctsgen.ops.decode import FORMATS
from ctsgen.model.tensor import MAX_DIM, ClampMode

DIMS = tuple(range(1, MAX_DIM + 1))
LABELS = {"probe1": "probe, 1 word", "probe3": "probe, 3 words", **{name: name.upper() for name in FORMATS}}
DECODERS = [LABELS[d] for d in PROBES + tuple(FORMATS)]


def decoder_label(decoder: str) -> str:
    """The decode function as the docs name it (Q8_0, MXFP4, 'probe, 1 word')."""
    return LABELS.get(decoder, decoder)


def blocked_dims(p: dict[str, Any]) -> int:
    """How many dimensions of the case's layout have blockSize > 1 (0 without setTensorLayoutBlockSizeNV)."""
    return sum(b > 1 for b in p["layout"]["blockSize"] or ())


def blocked_table(cases: list[dict[str, Any]], excluded: dict[tuple[str, int], str]) -> Table:
    """Decode function x how many dimensions have blockSize > 1; ``excluded``: the cells the caller's
    spec rules out besides a format without blocking."""
    return grid("decode function x dimensions with blockSize > 1", "decode function", "dims", DECODERS,
                range(MAX_DIM + 1), ((decoder_label(p["variant"]["decoder"]), blocked_dims(p)) for p in cases),
                excluded={**{(LABELS[f], 0): "a format's block holds K > 1 elements" for f in FORMATS}, **excluded})


def dim_and_clamp_tables(cases: list[dict[str, Any]]) -> list[Table]:
    """Decode function x Dim and decode function x clampMode."""
    dec = [decoder_label(p["variant"]["decoder"]) for p in cases]
    return [
        grid("decode function x Dim", "decode function", "Dim", DECODERS, DIMS,
             zip(dec, (p["variant"]["Dim"] for p in cases))),
        grid("decode function x clampMode", "decode function", "clampMode", DECODERS, [m.name for m in ClampMode],
             zip(dec, (p["variant"]["clampMode"] for p in cases))),
    ]


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of decode cases."""
    by_dim, by_clamp = dim_and_clamp_tables(cases)
    return [by_dim, blocked_table(cases, {}), by_clamp]
