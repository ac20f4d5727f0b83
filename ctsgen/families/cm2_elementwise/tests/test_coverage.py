"""The cm2-elementwise coverage tables: select's r0 / c0 one past the matrix select nothing."""

from __future__ import annotations

from ctsgen.families.cm2_elementwise.coverage import tables


def _case(op: str, r0: int, c0: int) -> dict:
    return {"variant": {"op": op, "matrix": {"rows": 16, "cols": 8, "use": "B", "componentType": "uint8",
                                             "scope": "Subgroup", "workgroupSize": 32}}, "r0": r0, "c0": c0}


def test_select_places_and_the_other_cells() -> None:
    by_use, by_type, by_scope, select = tables([_case("select", 16, 7), _case("select", 0, 8), _case("affine", 0, 0)])
    assert select.counts[("past the matrix", "inside")] == 1 and select.counts[("inside", "past the matrix")] == 1
    assert sum(select.counts.values()) == 2  # the affine case selects nothing
    assert by_use.counts[("affine", "B")] == 1 and by_type.counts[("select", "uint8")] == 2
    assert by_scope.counts[("select", "Subgroup")] == 2
