"""Coverage tables of cm2-reduce packs: OpCooperativeMatrixReduceNV (SPV_NV_cooperative_matrix2).

* Cooperative Matrix Reduce Mode (Row, Column, Row|Column, 2x2) x combine function;
* Accumulator component type x combine function (xor is bitwise: integers only);
* reduce mode x the result's shape against the source's (2x2 halves both
  sides; Row keeps the rows, Column the columns, Row|Column takes any shape);
* reduce mode x scope.

The component types and scopes of the domains are those of the embedded H100
profile's matrix types (:func:`profile_components`, :func:`profile_scopes`,
shared with the other cm2 families), plus any other the pack holds.
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.families.cm2_reduce.oracle import Combine, ReduceMode
from ctsgen.families.cm2_shared import profile_components, profile_scopes, scope_label
from ctsgen.model.types import ComponentType, MatrixUse

SHAPES = ("source's shape", "half (2x2)", "other shape")


def shape_class(variant: dict[str, Any]) -> str:
    """Where the result's shape stands against the source's (one of SHAPES; 'half (2x2)' is
    the 2x2 mode's result, a Row|Column result of half the size is an 'other shape')."""
    source, result = variant["source"], variant["result"]
    if (result["rows"], result["cols"]) == (source["rows"], source["cols"]):
        return SHAPES[0]
    halved = (2 * result["rows"], 2 * result["cols"]) == (source["rows"], source["cols"])
    return SHAPES[1] if halved and variant["mode"] == ReduceMode.Block2x2.name else SHAPES[2]


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of cm2-reduce cases."""
    v = [p["variant"] for p in cases]
    modes, combines = [m.name for m in ReduceMode], [c.value for c in Combine]
    floats = [c.name for c in ComponentType if c.is_float]
    half = "2x2 halves the rows and the columns"
    return [
        grid("reduce mode x combine function", "mode", "combine", modes, combines,
             ((x["mode"], x["combine"]) for x in v)),
        grid("component type x combine function", "componentType", "combine",
             profile_components(MatrixUse.Accumulator), combines,
             ((x["source"]["componentType"], x["combine"]) for x in v),
             excluded={(f, Combine.xor.value): "xor is a bitwise function: integer components only" for f in floats}),
        grid("reduce mode x result shape", "mode", "result", modes, SHAPES,
             ((x["mode"], shape_class(x)) for x in v),
             excluded={**{(m, SHAPES[1]): "only 2x2 halves the shape" for m in modes if m != ReduceMode.Block2x2.name},
                       (ReduceMode.Block2x2.name, SHAPES[0]): half, (ReduceMode.Block2x2.name, SHAPES[2]): half}),
        grid("reduce mode x scope", "mode", "scope", modes, profile_scopes(),
             ((x["mode"], scope_label(x["source"])) for x in v)),
    ]
