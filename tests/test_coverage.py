"""`ctsgen coverage`: the tables count what the pack holds, one section per family; empty cells are listed."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ctsgen.cli import main
from ctsgen.core.coverage import Table, grid
from ctsgen.pack.coverage import coverage_tables, format_tables
from ctsgen.device.profile import default_profile
from ctsgen.families import families, get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.model.tensor import ClampMode
from ctsgen.pack.read import load_pack
from ctsgen.pack.write import write_pack
from ctsgen.strategies.sampling import draw_examples

HOOKED = sorted(name for name, fam in families().items() if getattr(fam, "coverage", None))


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("coverage") / "pack"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(tmp_path_factory.mktemp("spirv-cache")))
        assert main(["generate", "--count", "30", "--seed", "0", "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_grid_counts_match_the_case_names_and_list_the_empty_cells(pack: Path) -> None:
    """30 cases cannot fill the 50 Dim x clampMode x operation cells: 20 or more are listed empty."""
    grid_ = coverage_tables(load_pack(pack))[0]
    names = [c["name"] for c in json.loads((pack / "manifest.json").read_text())["cases"]]
    # tensor_layout.<op>.dim<D>.clamp_<mode>...: count the names independently of the tables
    by_name = Counter((int(n.split(".")[2][3:]), n.split(".")[1], n.split(".")[3][len("clamp_"):]) for n in names)
    for (dim, cell), count in grid_.counts.items():
        mode, op = cell.split("/")
        assert by_name[(dim, op, ClampMode[mode].snake)] == count
    assert sum(grid_.counts.values()) == 30
    assert len(grid_.empty_cells()) == 50 - len(by_name) >= 20
    text = format_tables(coverage_tables(load_pack(pack)))
    first_empty = grid_.empty_cells()[0]
    assert f"{first_empty[0]} x {first_empty[1]}" in text


def test_coverage_command_prints_and_plots(pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # matplotlib is an optional extra for users; the README's install (and CI) includes it
    png = tmp_path / "c.png"
    assert main(["coverage", str(pack), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "== tensor-layout: 30 cases" in out
    assert "Dim x clampMode x operation" in out and "component types" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the family hooks, on drawn cases (no pack needed) ------------------------

def _parameters(name: str, n: int = 40) -> list[dict[str, Any]]:
    """``n`` cases of the family as a pack stores them (``case.to_json()`` is a case record's parameters)."""
    cases = draw_examples(get_family(name).cases(StrategyOptions(profile=default_profile())), n, 1)
    return [c.to_json() for c in cases]


def _cells(t: Table) -> Counter:
    return Counter({cell: n for cell, n in t.counts.items() if n})


@pytest.mark.parametrize("name", HOOKED)
def test_a_hook_counts_each_case_by_itself_and_once_per_partition(name: str) -> None:
    """Each table is the sum of the one-case tables (a case's cell does not depend on the others);
    a partition table puts each case in exactly one cell of its domain, and no drawn case lands
    in a cell the spec excludes."""
    params = _parameters(name)
    hook = get_family(name).coverage
    whole = hook(params)
    alone = [hook([p]) for p in params]
    assert whole, f"{name}: the hook returned no table"
    for i, t in enumerate(whole):
        assert sum((_cells(a[i]) for a in alone), Counter()) == _cells(t), t.title
        assert set(_cells(t)) <= {(r, c) for r in t.rows for c in t.cols}, t.title
        assert t.excluded_but_held() == [], f"{t.title}: drawn cases in excluded cells"
        if t.partition:
            assert all(sum(a[i].counts.values()) == 1 for a in alone), t.title
            assert sum(t.counts.values()) == len(params), t.title


@pytest.mark.parametrize("name", HOOKED)
def test_a_cell_whose_cases_are_dropped_is_listed_empty(name: str) -> None:
    """Dropping every case of one held cell of a grid empties that cell (listed, in the text too)
    and leaves every other cell's count as it was."""
    params = _parameters(name)
    hook = get_family(name).coverage
    whole = hook(params)
    i, t = next((i, t) for i, t in enumerate(whole) if len(t.cols) > 1 and t.partition)
    cell = max(_cells(t), key=lambda c: t.counts[c])
    kept = [p for p in params if cell not in _cells(hook([p])[i])]
    after = hook(kept)[i]
    assert cell in after.empty_cells()
    assert _cells(after) == _cells(t) - Counter({cell: t.counts[cell]})
    assert f"{cell[0]} x {cell[1]}" in format_tables([after]).split("empty cells:")[1]


def test_domains_list_cells_no_case_reaches_and_excluded_ones_apart() -> None:
    """A hand-made grid: the domains are the given ones, a value outside them is appended,
    an excluded cell is neither empty nor shown as a count, and a held excluded cell is flagged."""
    t = grid("t", "r", "c", ["a", "b"], [1, 2], [("a", 1), ("a", 1), ("c", 2)], excluded={("b", 2): "rule"})
    assert t.rows == ["a", "b", "c"] and t.cols == [1, 2]
    assert t.empty_cells() == [("a", 2), ("b", 1), ("c", 1)]
    text = format_tables([t])
    assert "-: rule" in text and "EXCLUDED" not in text
    held = grid("t", "r", "c", ["a"], [1], [("a", 1)], excluded={("a", 1): "rule"})
    assert held.excluded_but_held() == [("a", 1)] and "EXCLUDED BY THE SPEC BUT HELD: a x 1" in format_tables([held])


# -- mixed packs and the generic fallback ---------------------------------------

@pytest.fixture(scope="module")
def mixed_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six cm2-reduce cases, then four tensor-layout cases, in one pack."""
    opts = StrategyOptions(profile=default_profile())
    cases = draw_examples(get_family("cm2-reduce").cases(opts), 6, 2) + \
        draw_examples(get_family("tensor-layout").cases(opts), 4, 2)
    out = tmp_path_factory.mktemp("coverage-mixed") / "pack"
    write_pack(cases, out, header={"seed": 2, "families": ["cm2-reduce", "tensor-layout"]})
    return out


def test_a_mixed_pack_has_one_section_per_family(mixed_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tables = coverage_tables(load_pack(mixed_pack))
    sections = list(dict.fromkeys(t.family for t in tables))
    assert sections == ["cm2-reduce", "tensor-layout"]
    for family, n in (("cm2-reduce", 6), ("tensor-layout", 4)):
        own = [t for t in tables if t.family == family]
        assert own and all(sum(t.counts.values()) == n for t in own if t.partition)
    assert tables[0].title == "reduce mode x combine function"
    assert main(["coverage", str(mixed_pack)]) == 0
    out = capsys.readouterr().out
    assert out.index("== cm2-reduce: 6 cases") < out.index("== tensor-layout: 4 cases")
    assert out.count("\n== ") == 2


def test_a_family_without_a_hook_gets_the_signature_field_tables(mixed_pack: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A throwaway family with no coverage hook: one table per signature field, each counting every case."""
    monkeypatch.setitem(families(), "no-hook", dataclasses.replace(get_family("cm2-reduce"), name="no-hook",
                                                                  coverage=None))
    pack = load_pack(mixed_pack)
    for c in pack.cases:
        if c.record["family"] == "cm2-reduce":
            c.record = {**c.record, "family": "no-hook"}
    tables = coverage_tables(pack)
    generic = [t for t in tables if t.family == "no-hook"]
    assert {t.title for t in generic} >= {"signature field mode", "signature field combine",
                                          "signature field source.componentType"}
    assert all(sum(t.counts.values()) == 6 for t in generic)
    modes = next(t for t in generic if t.title == "signature field mode")
    reduce_modes = Counter(p.record["parameters"]["variant"]["mode"] for p in pack.cases
                           if p.record["family"] == "no-hook")
    assert {r: modes.counts[(r, "cases")] for r in modes.rows} == reduce_modes
    assert [t.family for t in tables if t.family != "no-hook"] and \
        all(t.family == "tensor-layout" for t in tables if t.family != "no-hook")
