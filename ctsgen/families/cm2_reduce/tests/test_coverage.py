"""The cm2-reduce coverage tables: result shapes classified by hand, xor excluded on floats."""

from __future__ import annotations

from ctsgen.families.cm2_reduce.coverage import shape_class, tables


def _variant(mode: str, combine: str, comp: str, src: tuple[int, int], res: tuple[int, int]) -> dict:
    def m(rows: int, cols: int) -> dict:
        return {"rows": rows, "cols": cols, "componentType": comp, "scope": "Workgroup", "workgroupSize": 64}
    return {"mode": mode, "combine": combine, "source": m(*src), "result": m(*res)}


def test_shape_classes() -> None:
    assert shape_class(_variant("Row", "sum", "float16", (16, 16), (16, 16))) == "source's shape"
    assert shape_class(_variant("Row", "sum", "float16", (16, 16), (16, 8))) == "other shape"
    assert shape_class(_variant("Block2x2", "sum", "float16", (16, 32), (8, 16))) == "half (2x2)"
    assert shape_class(_variant("RowColumn", "sum", "float16", (16, 32), (8, 16))) == "other shape"


def test_a_case_lands_in_its_cells_and_xor_on_floats_is_excluded() -> None:
    modes, types, shapes, scopes = tables([{"variant": _variant("Column", "xor", "uint32", (16, 8), (32, 8))}])
    assert modes.counts[("Column", "xor")] == 1 and types.counts[("uint32", "xor")] == 1
    assert shapes.counts[("Column", "other shape")] == 1 and scopes.counts[("Column", "Workgroup 64")] == 1
    assert ("float16", "xor") in types.excluded and ("sint32", "xor") not in types.excluded
    assert types.rows == ["float16", "float32", "sint32", "uint32"]  # the H100's Accumulator types
