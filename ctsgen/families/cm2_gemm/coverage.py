"""Coverage tables of cm2-gemm packs: the GEMM tile of the VK_NV_cooperative_matrix2 proposal.

* A/B component type -> C component type x scope: the domain is the embedded
  H100 profile's flexible-dimensions entries
  (VkCooperativeMatrixFlexibleDimensionsPropertiesNV), plus any other the pack holds;
* type x tile shape TILE_M x TILE_N x TILE_K, in granules of the entry
  (MGranularity, NGranularity, KGranularity);
* problem size in tiles (M / TILE_M x N / TILE_N x K / TILE_K);
* alpha x beta: 0 (a term dropped), 1, or another value;
* route (tensor layouts, or OpCooperativeMatrixLoadKHR / StoreKHR) x the MemoryLayouts of A, B, C
  and D ('RCRR': A RowMajor, B ColumnMajor, ...; '-' on the tensor route).
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.device.profile import default_profile
from ctsgen.ops.cm2 import scope_label
from ctsgen.model.types import ComponentType, Scope

SCALARS = ("0", "1", "other")


def _key(a: str, c: str, scope: str, wg: int) -> tuple[str, str]:
    """(types label 'float16 -> float32', scope label) of a flexible-dimensions entry or a variant."""
    return f"{a} -> {c}", scope_label({"scope": scope, "workgroupSize": wg})


def _variant_key(v: dict[str, Any]) -> tuple[str, str]:
    return _key(v["aType"], v["cType"], v["scope"], v["workgroupSize"])


def profile_entries() -> dict[tuple[str, str], tuple[int, int, int]]:
    """(types, scope) -> (M, N, K) granularity of the H100 profile's entries the family can use
    (A type = B type, C type = Result type), subgroup scope first, then by workgroup size."""
    out = {}
    for e in default_profile().flexible_dimensions:
        a, c = ComponentType.from_vk(e["AType"]), ComponentType.from_vk(e["CType"])
        if a is None or c is None or e["AType"] != e["BType"] or e["CType"] != e["ResultType"]:
            continue
        scope = Scope(e["scope"])
        wg = e["workgroupInvocations"] if scope is Scope.Workgroup else 0
        out[(scope is Scope.Workgroup, wg, _key(a.name, c.name, scope.name, wg))] = \
            (e["MGranularity"], e["NGranularity"], e["KGranularity"])
    return {key: g for (_, _, key), g in sorted(out.items())}


def tile_granules(v: dict[str, Any], granularities: dict[tuple[str, str], tuple[int, int, int]]) -> str:
    """The variant's tile in granules of its entry ('1x2x1'), or in elements when the profile lacks the entry."""
    g = granularities.get(_variant_key(v))
    if g is None:
        return "x".join(map(str, v["tile"])) + " elements"
    return "x".join(str(t // n) for t, n in zip(v["tile"], g))


def scalar_class(x: float | int) -> str:
    """'0', '1' or 'other': alpha = 0 or beta = 0 drops a term, 1 leaves it unscaled."""
    return SCALARS[0] if x == 0 else SCALARS[1] if x == 1 else SCALARS[2]


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of cm2-gemm cases."""
    v = [p["variant"] for p in cases]
    g = profile_entries()
    types = list(dict.fromkeys(t for t, _ in g))
    type_of = [_variant_key(x)[0] for x in v]
    return [
        grid("A/B type -> C type x scope", "types", "scope", types, dict.fromkeys(s for _, s in g),
             (_variant_key(x) for x in v)),
        grid("A/B type -> C type x tile TILE_M x TILE_N x TILE_K (in granules)", "types", "tile", types, [],
             zip(type_of, (tile_granules(x, g) for x in v))),
        grid("problem size in tiles: M/TILE_M x N/TILE_N x K/TILE_K", "M x N tiles", "K tiles", [], [],
             ((f"{p['tiles'][0]}x{p['tiles'][1]}", p["tiles"][2]) for p in cases)),
        grid("alpha x beta", "alpha", "beta", SCALARS, SCALARS,
             ((scalar_class(p["alpha"]), scalar_class(p["beta"])) for p in cases)),
        grid("route x MemoryLayouts of A, B, C, D", "route", "layouts", ["tensor", "khr"], [],
             ((x.get("route", "tensor"), "".join(s[0] for s in x.get("layouts", ())) or "-") for x in v)),
    ]
