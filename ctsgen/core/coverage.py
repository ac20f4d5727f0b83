"""Coverage count tables: their cells, their empty cells, text and a plot.

This module holds what the families' coverage hooks share: :class:`Table`,
the :func:`grid` and :func:`one_way` builders, :func:`format_table` and
:func:`plot_coverage`. A hook builds grids over the axes of its spec, with
the spec's full domains as rows and columns, so that combinations a pack
never runs show up as empty cells. Turning a pack into tables, one section
per family, is :mod:`ctsgen.pack.coverage`. This module imports nothing of
ctsgen, so a family's coverage module can use it without a cycle.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
import textwrap

import numpy as np

Cell = tuple[Any, Any]


@dataclass
class Table:
    """Counts of cases per (row, column) cell.

    ``rows`` / ``cols`` are the full domains, so a cell no case reaches is
    listed as empty. ``excluded`` maps the cells the spec rules out (or gives
    no meaning to) to that rule; they are shown as ``-`` and never listed as
    empty. ``partition``:
    every case of the section is counted in exactly one cell; when False the
    title says which cases (or what) the table counts. ``family`` names the
    section the table belongs to.
    """

    title: str
    row_label: str
    col_label: str
    rows: list[Any]
    cols: list[Any]
    counts: Counter = field(default_factory=Counter)
    excluded: dict[Cell, str] = field(default_factory=dict)
    partition: bool = True
    family: str = ""

    def empty_cells(self) -> list[Cell]:
        """Cells of the domain that no case reaches, excluded cells left out."""
        return [(r, c) for r in self.rows for c in self.cols
                if not self.counts[(r, c)] and (r, c) not in self.excluded]

    def excluded_but_held(self) -> list[Cell]:
        """Excluded cells the pack nevertheless holds cases in (a strategy that breaks the spec's rule)."""
        return [cell for cell in self.excluded if self.counts[cell]]


def _natural(value: Any) -> tuple:
    """Sort key: numbers by value, strings with their digit runs compared as numbers ('8x8' < '16x16')."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, ())
    return (1, 0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", str(value))))


def _extend(domain: list[Any], seen: Iterable[Any]) -> list[Any]:
    """The domain, then any value seen outside it (naturally sorted), so every count has a cell."""
    extra = sorted(set(seen) - set(domain), key=_natural)
    return list(domain) + extra


def grid(title: str, row_label: str, col_label: str, rows: Iterable[Any], cols: Iterable[Any],
         cells: Iterable[Cell], *, excluded: dict[Cell, str] | None = None, partition: bool = True) -> Table:
    """A table counting ``cells`` (one (row, column) per case when ``partition``) over the
    domains ``rows`` x ``cols``; a value outside a domain is appended to it."""
    counts = Counter(cells)
    return Table(title, row_label, col_label, _extend(list(rows), (r for r, _ in counts)),
                 _extend(list(cols), (c for _, c in counts)), counts, dict(excluded or {}), partition)


def one_way(title: str, label: str, values: Iterable[Any], domain: Iterable[Any] | None = None, *,
            partition: bool = True) -> Table:
    """Cases per value; ``domain`` (the full one, when the spec has one) lists values no case takes as empty."""
    values = list(values)
    return grid(title, label, "cases", domain if domain is not None else sorted(set(values), key=_natural),
                ["cases"], ((v, "cases") for v in values), partition=partition)


def format_table(t: Table) -> list[str]:
    """Plain-text lines of one table: a title line, the grid (``-``: excluded), the rules of its
    excluded cells, its empty cells, and any excluded cell the pack holds cases in."""
    head = [t.row_label] + [str(c) for c in t.cols]
    body = [[str(r)] + ["-" if (r, c) in t.excluded and not t.counts[(r, c)] else str(t.counts[(r, c)])
                        for c in t.cols] for r in t.rows]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    out = [f"\n{t.title}"]
    for row in [head, *body]:
        out.append("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))))
    for rule in dict.fromkeys(t.excluded.values()):
        out.append(f"-: {rule}")
    empty = t.empty_cells()
    if len(t.cols) > 1:
        out.append(f"empty cells: {', '.join(f'{r} x {c}' for r, c in empty)}" if empty else "empty cells: none")
    elif empty:
        out.append(f"empty cells: {', '.join(str(r) for r, _ in empty)}")
    held = t.excluded_but_held()
    if held:
        out.append(f"EXCLUDED BY THE SPEC BUT HELD: {', '.join(f'{r} x {c}' for r, c in held)}")
    return out


def coverage_figure(tables: list[Table], title: str = ""):
    """The figure of :func:`plot_coverage`: titles wrapped to the figure's width, each heat map
    with a colour bar (cases per cell) and a legend for its empty (red) and excluded (grey) cells."""
    import matplotlib  # local: optional
    import matplotlib.pyplot as plt  # local: optional
    from matplotlib.patches import Patch  # local: optional

    heights = [max(2.0, min(0.35, 14.0 / len(t.rows)) * len(t.rows)) for t in tables]
    fig, axes = plt.subplots(len(tables), 1, figsize=(11, sum(heights) + 1.5 * len(tables)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, t in zip(axes[:, 0], tables):
        grid_ = np.array([[t.counts[(r, c)] for c in t.cols] for r in t.rows], dtype=float)
        font = 8 if len(t.rows) <= 40 else 5
        name = f"{t.family}: {t.title}" if t.family else t.title
        if len(t.cols) == 1:
            ax.barh([str(r) for r in t.rows], grid_[:, 0], color="tab:blue")
            ax.invert_yaxis()
            ax.set_xlabel("cases")
            ax.tick_params(axis="y", labelsize=font)
            for i, v in enumerate(grid_[:, 0]):
                ax.text(v, i, f" {int(v)}", va="center", fontsize=font)
        else:
            excluded = np.array([[(r, c) in t.excluded for c in t.cols] for r in t.rows])
            masked = np.ma.masked_where((grid_ == 0) & ~excluded, grid_)
            cmap = plt.get_cmap("viridis").with_extremes(bad="tab:red")  # an empty cell stands out
            image = ax.imshow(masked, aspect="auto", cmap=cmap, vmin=0)
            ax.imshow(np.ma.masked_where(~excluded | (grid_ > 0), excluded), aspect="auto",
                      cmap=matplotlib.colors.ListedColormap(["lightgrey"]))
            fig.colorbar(image, ax=ax, label="cases", pad=0.01)
            ax.set_xticks(range(len(t.cols)), [str(c) for c in t.cols], rotation=30, ha="right", fontsize=8)
            ax.set_yticks(range(len(t.rows)), [str(r) for r in t.rows], fontsize=font)
            for i in range(len(t.rows)):
                for j in range(len(t.cols)):
                    label = "-" if excluded[i, j] and not grid_[i, j] else int(grid_[i, j])
                    dark = grid_[i, j] < grid_.max() / 2 and not excluded[i, j]
                    ax.text(j, i, label, ha="center", va="center", fontsize=7, color="white" if dark else "black")
            ax.set_xlabel(t.col_label)
            handles = [Patch(color="tab:red", label="empty")]
            if t.excluded:
                handles.append(Patch(color="lightgrey", label="excluded by the spec"))
            ax.legend(handles=handles, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, fontsize=7,
                      frameon=False, borderaxespad=0.2)
        ax.set_title("\n".join(textwrap.wrap(name, 80)), fontsize=10, loc="left")
        ax.set_ylabel(t.row_label)
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 100)))
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    return fig


def plot_coverage(tables: list[Table], path: Path, title: str = "") -> bool:
    """Heat maps of the grids and bars of the one-way tables (empty cells red, excluded
    ones grey); False when matplotlib is not installed."""
    try:
        import matplotlib  # local: optional
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # local: optional
    except ImportError:
        return False
    fig = coverage_figure(tables, title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
