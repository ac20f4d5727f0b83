"""What a pack samples: count tables, their empty cells, and a plot.

A pack's cases are grouped by family, one section per family. A family whose
``FAMILY`` has a ``coverage`` hook (``FamilySpec.coverage``, conventionally
``tables`` from the family's own ``coverage.py``) gets its tables from it:
grids over the axes of its spec, with the spec's full domains as rows and
columns so that combinations the pack never runs show up as empty cells.
A family without a hook gets the generic tables: cases per value of each
field of its shader variants' signatures.

This module holds what the hooks share: :class:`Table`, the :func:`grid` and
:func:`one_way` builders, plain-text formatting and the plot.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctsgen.families import get_family

if TYPE_CHECKING:
    from ctsgen.pack.read import Pack, PackCase

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


def _flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out


def generic_tables(cases: list[PackCase], pack: Pack) -> list[Table]:
    """Cases per value of each field of the cases' shader-variant signatures (families without a hook)."""
    sigs = [_flatten(pack.variants[c.variant_id].signature) for c in cases]
    keys = sorted({k for s in sigs for k in s})
    return [one_way(f"signature field {k}", k, [s.get(k, "-") for s in sigs]) for k in keys]


def _by_family(pack: Pack) -> dict[str, list[PackCase]]:
    out: dict[str, list[PackCase]] = {}
    for c in pack.cases:
        out.setdefault(c.record["family"], []).append(c)
    return out


def coverage_tables(pack: Pack) -> list[Table]:
    """The tables of ``pack``, section by section (one per family, in the order the pack first
    names them): the family's ``coverage`` hook on its cases' parameters, or :func:`generic_tables`."""
    out: list[Table] = []
    for name, cases in _by_family(pack).items():
        hook = getattr(get_family(name), "coverage", None)
        tables = hook([c.record["parameters"] for c in cases]) if hook else generic_tables(cases, pack)
        for t in tables:
            t.family = name
        out += tables
    return out


def _format_one(t: Table) -> list[str]:
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


def format_tables(tables: list[Table], pack: Pack | None = None) -> str:
    """Plain-text tables, one section per family, each table followed by its empty cells."""
    out = [f"{pack.root}: {len(pack.cases)} cases, {len(pack.variants)} shader variants"] if pack else []
    sections = _by_family(pack) if pack else {}
    family = None
    for t in tables:
        if t.family != family:
            family = t.family
            cases = sections.get(family, [])
            size = f": {len(cases)} cases, {len({c.variant_id for c in cases})} shader variants" if cases else ""
            out.append(f"\n== {family or 'cases'}{size} ==")
        out += _format_one(t)
    return "\n".join(out)


def coverage_figure(tables: list[Table], title: str = ""):
    """The figure of :func:`plot_coverage`: titles wrapped to the figure's width, each heat map
    with a colour bar (cases per cell) and a legend for its empty (red) and excluded (grey) cells."""
    import textwrap

    import matplotlib
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch

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
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig = coverage_figure(tables, title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
