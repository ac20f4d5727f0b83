"""The decode-vector coverage tables: V and call pattern cells; blockSize[LDim-1] % V rules out unblocked layouts."""

from __future__ import annotations

from ctsgen.ops.decode_coverage import DECODERS
from ctsgen.families.decode_vector.coverage import tables


def test_v_call_pattern_and_the_excluded_unblocked_column() -> None:
    case = {"variant": {"decoder": "mxfp4", "V": 8, "Dim": 2, "clampMode": "Undefined"},
            "layout": {"blockSize": [4, 8]}, "call_pattern": "mixed"}
    by_v, pattern, by_dim, by_clamp, blocked = tables([case])
    assert by_v.counts[(8, "MXFP4")] == 1 and pattern.counts[("mixed", 8)] == 1
    assert blocked.counts[("MXFP4", 2)] == 1
    assert {(d, 0) for d in DECODERS} <= set(blocked.excluded)
    assert len(by_v.empty_cells()) == 3 * 8 - 1
