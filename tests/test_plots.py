"""Plots a person can read: coverage panel titles inside the figure and a
colour legend; surviving mutants look different from mutants that were not run."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from ctsgen.cli import main  # noqa: E402
from ctsgen.core.coverage import coverage_figure  # noqa: E402
from ctsgen.pack.coverage import coverage_tables  # noqa: E402
from ctsgen.fuzz.mutation import MutantRow, mutation_figure  # noqa: E402
from ctsgen.pack.read import load_pack  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("family", ["tensor-layout", "coopvec"])
def test_coverage_titles_fit_and_heat_maps_have_a_legend(tmp_path: Path, session_spirv_cache, family):
    out = tmp_path / "p"
    assert main(["generate", "--family", family, "--count", "30", "--out", str(out)]) == 0
    pack = load_pack(out)
    tables = coverage_tables(pack)
    fig = coverage_figure(tables, f"{out}: {len(pack.cases)} cases")
    renderer = fig.canvas.get_renderer()
    width = fig.bbox.width
    panels = fig.axes[:len(tables)]
    for ax, t in zip(panels, tables):
        box = ax.title.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= width + 1, (t.title, box, width)
        if len(t.cols) > 1:
            legend = ax.get_legend()
            assert legend is not None and "empty" in [x.get_text() for x in legend.get_texts()]
            assert legend.get_window_extent(renderer).x1 <= width + 1
    heat_maps = sum(1 for t in tables if len(t.cols) > 1)
    assert len(fig.axes) == len(tables) + heat_maps, "one colour bar per heat map"
    plt.close(fig)


def _row(name: str, killed: int, median: float | None) -> MutantRow:
    return MutantRow(name, "tensor-layout", "", killed, 3, median, None, None)


def test_surviving_mutants_differ_from_mutants_not_run():
    rows = [_row("killed-one", 3, 12.0), _row("survivor", 0, None), _row("partial", 1, 40.0)]
    fig = mutation_figure(rows, 300, not_run=["never-run"])
    ax = fig.axes[0]
    bars = {round(p.get_y() + p.get_height() / 2): p for p in ax.patches}
    assert bars[1].get_width() == 300 and bars[1].get_hatch() == "//", "a survivor spans its whole budget"
    assert bars[0].get_width() == 12.0
    assert 3 not in bars, "a mutant not run has no bar"
    texts = [t.get_text() for t in ax.texts]
    assert any("not run" in t for t in texts) and any("survived" in t for t in texts)
    assert bars[1].get_facecolor() != bars[2].get_facecolor() != bars[0].get_facecolor()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["killed", "partly killed", "survived", "not run"]
    plt.close(fig)
