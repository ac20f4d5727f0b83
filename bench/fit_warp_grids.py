"""Which subgroup grid of a workgroup-scope accumulator reproduces the H100's cm2-reduce sums.

    python bench/dump_device_outputs.py PACK OUT.npz --keep result --float-only   # on the device
    python bench/fit_warp_grids.py PACK OUT.npz                                     # anywhere

A workgroup's accumulator is split into one contiguous block per subgroup, a grid of wr x wc
subgroups (ctsgen.oracle.models.h100.reduce_fragment); which grid the driver picks for a shape
is measured, not derived (h100.WARP_GRIDS). For every dumped float-sum case of a multi-subgroup
shape, every grid the shape allows (wr * wc subgroups, 16 wr rows and 8 wc columns dividing
the matrix) predicts the result through the family's model; one line per shape and mode gives
the elements each grid reproduces bit for bit. A Row sum sees only how the columns are split,
a Column sum only the rows, a RowColumn sum both, so a shape's grid is the one grid every mode
it was drawn with reproduces in full. The last table compares that with WARP_GRIDS.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from ctsgen.families import get_family
from ctsgen.families.cm2_reduce.case import H100_SUBGROUP
from ctsgen.model.types import ComponentType, Scope
from ctsgen.oracle.models import h100
from ctsgen.oracle.values import sentinel_bits, to_bits
from ctsgen.pack.read import load_pack

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_numeric_model import bit_exact  # noqa: E402


Shape = tuple[int, int, int]  # rows, cols, subgroups
Grid = tuple[int, int]


def grids(rows: int, cols: int, subgroups: int) -> list[Grid]:
    """The grids wr x wc = subgroups whose blocks are whole 16 x 8 tiles."""
    return [(wr, subgroups // wr) for wr in range(1, subgroups + 1)
            if subgroups % wr == 0 and rows % (16 * wr) == 0 and cols % (8 * (subgroups // wr)) == 0]


def fit(pack, dumped) -> dict[tuple[Shape, str], dict[Grid, list[int]]]:
    """(shape, mode) -> grid -> [elements reproduced, elements counted]."""
    family = get_family("cm2-reduce")
    out: dict[tuple[Shape, str], dict[Grid, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for case in pack.cases:
        stored = f"{case.name}::result"
        if case.record["family"] != "cm2-reduce" or stored not in dumped:
            continue
        model_case = family.case_from_json(case.record["parameters"])
        s, mode = model_case.shader.source, model_case.shader.mode
        if s.scope is not Scope.Workgroup or s.workgroup_size == H100_SUBGROUP or mode.name == "Block2x2":
            continue
        shape = (s.rows, s.cols, s.workgroup_size // H100_SUBGROUP)
        saved = h100.WARP_GRIDS.get(shape)
        try:
            for grid in grids(*shape):
                h100.WARP_GRIDS[shape] = grid
                predicted = family.numeric_model(model_case, h100.H100)
                if predicted is None:
                    break
                want = predicted[1].ravel()
                got = np.asarray(dumped[stored]).view(want.dtype).ravel()
                comp = next(c for c in ComponentType if c.dtype == want.dtype)
                counted = to_bits(want, comp) != sentinel_bits(comp)
                tally = out[(shape, mode.name)][grid]
                tally[0] += int((bit_exact(got, want) & counted).sum())
                tally[1] += int(counted.sum())
        finally:
            if saved is None:
                h100.WARP_GRIDS.pop(shape, None)
            else:
                h100.WARP_GRIDS[shape] = saved
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack", type=Path)
    ap.add_argument("outputs", type=Path, help="npz written by bench/dump_device_outputs.py")
    args = ap.parse_args()
    table = fit(load_pack(args.pack), np.load(args.outputs))
    print("| rows x cols | subgroups | mode | elements | share per grid (wr x wc) |\n|---|---:|---|---:|---|")
    fitted: dict[Shape, set[Grid]] = {}
    for (shape, mode), per_grid in sorted(table.items()):
        total = next(iter(per_grid.values()))[1]
        shares = ", ".join(f"{wr}x{wc}: {100 * hit / max(tot, 1):.2f}%" for (wr, wc), (hit, tot) in per_grid.items())
        print(f"| {shape[0]} x {shape[1]} | {shape[2]} | {mode} | {total} | {shares} |")
        full = {g for g, (hit, tot) in per_grid.items() if tot and hit == tot}
        fitted[shape] = fitted.get(shape, full) & full
    print("\n| rows x cols | subgroups | grids every mode reproduces | WARP_GRIDS | agrees |\n|---|---:|---|---|---|")
    for shape, full in sorted(fitted.items()):
        known = h100.WARP_GRIDS.get(shape)
        names = ", ".join(f"{wr}x{wc}" for wr, wc in sorted(full)) or "none"
        agrees = "-" if known is None else ("yes" if known in full else "NO")
        print(f"| {shape[0]} x {shape[1]} | {shape[2]} | {names} | {known and '%dx%d' % known or '-'} | {agrees} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
