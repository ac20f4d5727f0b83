"""Coverage tables of cm2-elementwise packs: OpCooperativeMatrixPerElementOpNV (SPV_NV_cooperative_matrix2).

* function (``affine``, ``select``) x matrix Use, x component type, x scope
  (component types and scopes: the embedded H100 profile's matrix types);
* for ``select``: whether the selected row r0 and column c0 lie inside the
  matrix or one past it (then no element of that row / column is replaced).
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.families.cm2_elementwise.oracle import Op
from ctsgen.families.cm2_shared import profile_components, profile_scopes, scope_label
from ctsgen.model.types import MatrixUse

PLACES = ("inside", "past the matrix")


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of cm2-elementwise cases."""
    v = [p["variant"] for p in cases]
    ops = [o.value for o in Op]
    sel = [p for p in cases if p["variant"]["op"] == Op.select.value]

    def place(index: int, size: int) -> str:
        return PLACES[index >= size]

    return [
        grid("function x Use", "function", "use", ops, [u.name for u in MatrixUse],
             ((x["op"], x["matrix"]["use"]) for x in v)),
        grid("function x component type", "function", "componentType", ops, profile_components(),
             ((x["op"], x["matrix"]["componentType"]) for x in v)),
        grid("function x scope", "function", "scope", ops, profile_scopes(),
             ((x["op"], scope_label(x["matrix"])) for x in v)),
        grid(f"select: row r0 x column c0 ({len(sel)} cases)", "r0", "c0", PLACES, PLACES,
             ((place(p["r0"], p["variant"]["matrix"]["rows"]), place(p["c0"], p["variant"]["matrix"]["cols"]))
              for p in sel), partition=False),
    ]
