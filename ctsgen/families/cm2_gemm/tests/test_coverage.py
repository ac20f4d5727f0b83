"""The cm2-gemm coverage tables: tiles in granules of the H100's entries, alpha / beta classes."""

from __future__ import annotations

from ctsgen.families.cm2_gemm.coverage import profile_entries, scalar_class, tables, tile_granules


def _variant(tile: list[int], scope: str = "Workgroup", wg: int = 128) -> dict:
    return {"aType": "float16", "cType": "float16", "scope": scope, "workgroupSize": wg, "tile": tile}


def test_tiles_in_granules() -> None:
    g = profile_entries()
    assert g[("float16 -> float16", "Workgroup 128")] == (32, 16, 16)  # the H100 read-out
    assert tile_granules(_variant([64, 16, 32]), g) == "2x1x2"
    assert tile_granules(_variant([16, 16, 16], "Subgroup", 32), g) == "1x1x1"
    assert tile_granules(_variant([64, 16, 32], wg=512), g) == "64x16x32 elements"


def test_scalar_classes_and_cells() -> None:
    assert [scalar_class(x) for x in (0.0, 1.0, -1.0, 0, 7)] == ["0", "1", "other", "0", "other"]
    case = {"variant": _variant([32, 32, 16]), "tiles": [2, 1, 3], "alpha": 0.5, "beta": 0.0}
    khr = {**case, "variant": {**_variant([32, 32, 16]), "route": "khr",
                               "layouts": ["RowMajor", "ColumnMajor", "RowMajor", "RowMajor"]}}
    by_scope, tiles, problem, scalars, routes = tables([case, khr])
    assert by_scope.counts[("float16 -> float16", "Workgroup 128")] == 2
    assert tiles.counts[("float16 -> float16", "1x2x1")] == 2
    assert problem.counts[("2x1", 3)] == 2 and scalars.counts[("other", "0")] == 2
    assert routes.counts[("tensor", "-")] == 1 and routes.counts[("khr", "RCRR")] == 1
