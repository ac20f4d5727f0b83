"""The cm2-convert coverage tables: kinds and Use changes, same-width signedness changes and the
component pairs the H100 has no matrix types for excluded."""

from __future__ import annotations

from ctsgen.families.cm2_convert.coverage import tables


def _m(comp: str, use: str) -> dict:
    return {"componentType": comp, "use": use, "rows": 16, "cols": 16, "scope": "Workgroup", "workgroupSize": 128}


def test_cells_and_exclusions() -> None:
    types, uses, scopes = tables([{"variant": {"kind": "convert", "source": _m("float32", "Accumulator"),
                                               "result": _m("float16", "A")}},
                                  {"variant": {"kind": "transpose", "source": _m("float16", "Accumulator"),
                                               "result": _m("float16", "B")}}])
    assert types.counts[("float32", "float16")] == 1 and types.counts[("float16", "float16")] == 1
    bitcasts = {("sint8", "uint8"), ("uint8", "sint8"), ("sint32", "uint32"), ("uint32", "sint32")}
    assert bitcasts <= set(types.excluded)
    # the H100: float32 / sint32 / uint32 Accumulator only, sint8 / uint8 / bfloat16 A / B only
    device = {("sint8", "float32"), ("bfloat16", "uint32"), ("float32", "float32"), ("uint8", "uint8")}
    assert device <= set(types.excluded)
    convertible = {("sint8", "float16"), ("float32", "uint8"), ("float16", "float16"), ("uint32", "uint8")}
    assert not convertible & set(types.excluded)
    assert len(types.excluded) == 4 + 15 and len(types.empty_cells()) == 49 - 19 - 2
    assert uses.counts[("component conversion", "Accumulator -> A")] == 1
    assert uses.counts[("OpCooperativeMatrixTransposeNV", "Accumulator -> B")] == 1
    assert ("OpCooperativeMatrixTransposeNV", "Accumulator -> A") in uses.excluded
    assert ("OpCooperativeMatrixConvertNV", "A -> A") in uses.excluded
    assert scopes.counts[("OpCooperativeMatrixTransposeNV", "Workgroup 128")] == 1
