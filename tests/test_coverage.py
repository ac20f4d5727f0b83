"""`ctsgen coverage`: the tables count what the pack holds; empty cells are listed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ctsgen.cli import main
from ctsgen.coverage import CLAMP_MODES, coverage_tables, format_tables
from ctsgen.pack.read import load_pack


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("coverage") / "pack"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(tmp_path_factory.mktemp("spirv-cache")))
        assert main(["generate", "--count", "30", "--seed", "0", "--out", str(out)]) == 0
    return out


def test_grid_counts_match_the_case_names_and_list_the_empty_cells(pack: Path) -> None:
    """30 cases cannot fill the 50 Dim x clampMode x operation cells: 20 or more are listed empty."""
    grid = coverage_tables(load_pack(pack))[0]
    names = [c["name"] for c in json.loads((pack / "manifest.json").read_text())["cases"]]
    # tensor_layout.<op>.dim<D>.clamp_<mode>...: count the names independently of the tables
    snake = {m: "".join("_" + ch.lower() if ch.isupper() else ch for ch in m).lstrip("_") for m in CLAMP_MODES}
    by_name = Counter((int(n.split(".")[2][3:]), n.split(".")[1], n.split(".")[3][len("clamp_"):]) for n in names)
    for (dim, cell), count in grid.counts.items():
        mode, op = cell.split("/")
        assert by_name[(dim, op, snake[mode])] == count
    assert sum(grid.counts.values()) == 30
    assert len(grid.empty_cells()) == 50 - len(by_name) >= 20
    text = format_tables(coverage_tables(load_pack(pack)))
    first_empty = grid.empty_cells()[0]
    assert f"{first_empty[0]} x {first_empty[1]}" in text


def test_coverage_command_prints_and_plots(pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # matplotlib is an optional extra for users; the README's install (and CI) includes it
    png = tmp_path / "c.png"
    assert main(["coverage", str(pack), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Dim x clampMode x operation" in out and "component types" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
