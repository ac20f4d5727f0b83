"""Coverage tables of decode-vector packs: decode loads with a DecodeVectorFunc.

SPV_NV_cooperative_matrix_decode_vector: V (the vector decode function's
component count, 2, 4 or 8) x decode function, and the call pattern the
reference backend replays (scalar, vector, mixed; decision
decode-vector-call-patterns) x V; then the decode family's tables (decode
function x Dim, clampMode, dimensions with blockSize > 1: at least one, as
blockSize[LDim-1] is a multiple of V), whose fields decode-vector cases share.
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.ops import decode_coverage
from ctsgen.families.decode_vector.case import VS
from ctsgen.families.decode_vector.oracle import CALL_PATTERNS


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of decode-vector cases."""
    vs = [p["variant"]["V"] for p in cases]
    return [
        grid("V x decode function", "V", "decode function", VS, decode_coverage.DECODERS,
             zip(vs, (decode_coverage.decoder_label(p["variant"]["decoder"]) for p in cases))),
        grid("call pattern x V", "call pattern", "V", CALL_PATTERNS, VS, zip((p["call_pattern"] for p in cases), vs)),
        *decode_coverage.dim_and_clamp_tables(cases),
        decode_coverage.blocked_table(cases, {(d, 0): "blockSize[LDim-1] must be a multiple of V >= 2"
                                              for d in decode_coverage.DECODERS}),
    ]
