"""The decode coverage tables: blocked dimensions counted by hand, formats never without blocking."""

from __future__ import annotations

from ctsgen.ops.decode_coverage import DECODERS, blocked_dims, decoder_label, tables


def _case(decoder: str, dim: int, block: list[int] | None, mode: str = "Repeat") -> dict:
    return {"variant": {"decoder": decoder, "Dim": dim, "clampMode": mode}, "layout": {"blockSize": block}}


def test_blocked_dimensions_count_the_sides_above_one() -> None:
    assert blocked_dims(_case("probe1", 3, None)) == 0
    assert blocked_dims(_case("probe1", 3, [1, 1, 1])) == 0
    assert blocked_dims(_case("q8_0", 3, [2, 1, 16])) == 2


def test_the_cases_land_in_their_cells_and_a_format_without_blocking_is_excluded() -> None:
    assert DECODERS == ["probe, 1 word", "probe, 3 words", "Q8_0", "Q4_0", "Q4_K", "MXFP4", "Q5_K", "Q6_K"]
    by_dim, blocked, by_clamp = tables([_case("q4_k", 2, [4, 64]), _case("probe3", 5, None, "Constant")])
    assert by_dim.counts[("Q4_K", 2)] == 1 and by_dim.counts[("probe, 3 words", 5)] == 1
    assert blocked.counts[("Q4_K", 2)] == 1 and blocked.counts[("probe, 3 words", 0)] == 1
    assert by_clamp.counts[("probe, 3 words", "Constant")] == 1
    assert {cell for cell in blocked.excluded} == {(decoder_label(f), 0) for f in ("q8_0", "q4_0", "q4_k", "mxfp4", "q5_k", "q6_k")}
