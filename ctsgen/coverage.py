"""What a pack samples: count tables, their empty cells, and a plot.

For the tensor-layout family the tables follow the axes of the spec
(SPV_NV_tensor_addressing; GLSL_NV_cooperative_matrix2 tensorLayoutNV):
the grid Dim (1..5) x clampMode (the five gl_CooperativeMatrixClampMode*
values) x operation (coopMatLoadTensorNV / coopMatStoreTensorNV), the
matrix component types, uses x scopes, and which of the optional layout
calls a case makes (setTensorLayoutBlockSizeNV with its largest block
edge, setTensorLayoutStrideNV, sliceTensorLayoutNV, a Constant clampValue).
Other families get the generic tables: cases per value of each field of
the shader variant's signature. Empty cells of a grid are listed: they are
combinations the pack never runs (the default pack's stratification puts
at least one case in every Dim x clampMode x operation cell).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctsgen.pack.read import Pack

CLAMP_MODES = ("Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored")
OPERATIONS = ("load", "store")
DIMS = (1, 2, 3, 4, 5)


@dataclass
class Table:
    """Counts of cases per (row, column); ``rows``/``cols`` are the full domains (empty cells included)."""

    title: str
    row_label: str
    col_label: str
    rows: list[Any]
    cols: list[Any]
    counts: Counter = field(default_factory=Counter)

    def empty_cells(self) -> list[tuple[Any, Any]]:
        return [(r, c) for r in self.rows for c in self.cols if not self.counts[(r, c)]]


def _flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out


def _one_way(title: str, label: str, values: list[Any], domain: list[Any] | None = None) -> Table:
    t = Table(title, label, "cases", domain or sorted(set(values), key=str), ["cases"])
    for v in values:
        t.counts[(v, "cases")] += 1
    return t


def _tensor_layout_tables(cases: list[dict[str, Any]]) -> list[Table]:
    grid = Table("Dim x clampMode x operation", "Dim", "clampMode/operation", list(DIMS),
                 [f"{m}/{op}" for m in CLAMP_MODES for op in OPERATIONS])
    for p in cases:
        v = p["variant"]
        grid.counts[(v["Dim"], f"{v['clampMode']}/{v['operation']}")] += 1
    uses = Table("matrix use x scope", "use", "scope", ["A", "B", "Accumulator"], ["Subgroup", "Workgroup"])
    for p in cases:
        uses.counts[(p["variant"]["matrix"]["use"], p["variant"]["matrix"]["scope"])] += 1

    def block(p: dict[str, Any]) -> str:
        return "not set" if not p.get("blockSize") else f"largest edge {max(p['blockSize'])}"

    calls = Table("optional layout calls x Dim", "call", "Dim",
                  ["setTensorLayoutBlockSizeNV", "setTensorLayoutStrideNV", "sliceTensorLayoutNV",
                   "clampValue (Constant)"], list(DIMS))
    for p in cases:
        d = p["variant"]["Dim"]
        for call, key in (("setTensorLayoutBlockSizeNV", "blockSize"), ("setTensorLayoutStrideNV", "stride"),
                          ("sliceTensorLayoutNV", "offset"), ("clampValue (Constant)", "clampValue")):
            if p.get(key) is not None and (key != "clampValue" or p["variant"]["clampMode"] == "Constant"):
                calls.counts[(call, d)] += 1
    return [
        grid,
        _one_way("component types", "componentType", [p["variant"]["matrix"]["componentType"] for p in cases]),
        uses,
        _one_way("block sizes", "blockSize", [block(p) for p in cases]),
        calls,
        _one_way("matrix shapes", "rows x cols",
                 [f"{p['variant']['matrix']['rows']}x{p['variant']['matrix']['cols']}" for p in cases]),
    ]


def _generic_tables(pack: Pack) -> list[Table]:
    sigs = [_flatten(pack.variants[c.variant_id].signature) for c in pack.cases]
    keys = sorted({k for s in sigs for k in s})
    return [_one_way(f"signature field {k}", k, [s.get(k, "-") for s in sigs]) for k in keys]


def coverage_tables(pack: Pack) -> list[Table]:
    """The tables for ``pack`` (tensor-layout: the spec's axes; other families: signature fields)."""
    families = {c.record.get("family") for c in pack.cases}
    if families == {"tensor-layout"}:
        return _tensor_layout_tables([c.record["parameters"] for c in pack.cases])
    return _generic_tables(pack)


def format_tables(tables: list[Table], pack: Pack | None = None) -> str:
    """Plain-text tables, each followed by its empty cells."""
    out = [f"{pack.root}: {len(pack.cases)} cases, {len(pack.variants)} shader variants"] if pack else []
    for t in tables:
        head = [f"{t.row_label}"] + [str(c) for c in t.cols]
        body = [[str(r)] + [str(t.counts[(r, c)]) for c in t.cols] for r in t.rows]
        widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
        out.append(f"\n{t.title}")
        for row in [head, *body]:
            out.append("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in
                                 enumerate(zip(row, widths))))
        empty = t.empty_cells()
        if len(t.cols) > 1:
            out.append(f"empty cells: {', '.join(f'{r} x {c}' for r, c in empty)}" if empty else "empty cells: none")
    return "\n".join(out)


def plot_coverage(tables: list[Table], path: Path, title: str = "") -> bool:
    """Heat maps of the grids and bars of the one-way tables; False when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    import numpy as np

    heights = [max(2.0, 0.35 * len(t.rows)) for t in tables]
    fig, axes = plt.subplots(len(tables), 1, figsize=(11, sum(heights) + 1.2 * len(tables)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, t in zip(axes[:, 0], tables):
        grid = np.array([[t.counts[(r, c)] for c in t.cols] for r in t.rows], dtype=float)
        if len(t.cols) == 1:
            ax.barh([str(r) for r in t.rows], grid[:, 0], color="tab:blue")
            ax.invert_yaxis()
            ax.set_xlabel("cases")
            for i, v in enumerate(grid[:, 0]):
                ax.text(v, i, f" {int(v)}", va="center", fontsize=8)
        else:
            masked = np.ma.masked_equal(grid, 0)
            cmap = plt.get_cmap("viridis").with_extremes(bad="tab:red")  # an empty cell stands out
            ax.imshow(masked, aspect="auto", cmap=cmap, vmin=0)
            ax.set_xticks(range(len(t.cols)), [str(c) for c in t.cols], rotation=30, ha="right", fontsize=8)
            ax.set_yticks(range(len(t.rows)), [str(r) for r in t.rows], fontsize=8)
            for i in range(len(t.rows)):
                for j in range(len(t.cols)):
                    ax.text(j, i, int(grid[i, j]), ha="center", va="center", fontsize=7,
                            color="white" if grid[i, j] < grid.max() / 2 else "black")
            ax.set_xlabel(t.col_label)
        ax.set_ylabel(t.row_label)
        ax.set_title(t.title + ("  (red: empty)" if len(t.cols) > 1 else ""), fontsize=10)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
