"""Which subgroup grid of a workgroup-scope accumulator reproduces the H100's cm2-reduce sums.

    python bench/dump_device_outputs.py PACK OUT.npz --keep result --float-only   # on the device
    python bench/fit_warp_grids.py PACK OUT.npz                                     # anywhere

A workgroup's accumulator is split into one contiguous block per subgroup, a grid of wr x wc
subgroups (ctsgen.oracle.models.h100.reduce_fragment); which grid the driver picks for a shape
is measured, not derived (h100.warp_grid states the fitted rule). For every dumped float-sum
case of a multi-subgroup shape, every grid the shape allows (wr * wc subgroups, 16 wr rows and
8 wc columns dividing the matrix) predicts the result (h100.reduce_fragment with that grid);
one line per shape and mode gives the elements each grid reproduces bit for bit, the grid the
rule picks, and whether it is the only one that reproduces them all. Exit 1 if it is not.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from ctsgen.families import get_family
from ctsgen.families.cm2_reduce.case import H100_SUBGROUP
from ctsgen.model.types import Scope
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
        s, mode = model_case.shader.source, model_case.shader.mode.snake
        if s.scope is not Scope.Workgroup or s.workgroup_size == H100_SUBGROUP or mode == "2x2" \
                or family.numeric_model(model_case, h100.H100) is None:  # not a float sum
            continue
        shape = (s.rows, s.cols, s.workgroup_size // H100_SUBGROUP)
        src = model_case.source().reshape(s.rows, s.cols)
        r = model_case.shader.result
        got = np.asarray(dumped[stored]).view(s.component.dtype).reshape(r.rows, r.cols)
        for grid in grids(*shape):
            red = h100.reduce_fragment(src, mode, s.component, shape[2], h100.H100, grid=grid)
            want = np.broadcast_to(red.astype(s.component.dtype), got.shape)
            counted = to_bits(want, s.component) != sentinel_bits(s.component)
            tally = out[(shape, mode)][grid]
            tally[0] += int((bit_exact(got, want) & counted).sum())
            tally[1] += int(counted.sum())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack", type=Path)
    ap.add_argument("outputs", type=Path, help="npz written by bench/dump_device_outputs.py")
    args = ap.parse_args()
    table = fit(load_pack(args.pack), np.load(args.outputs))
    print("| rows x cols | subgroups | mode | elements | share per grid (wr x wc) | rule | only grid at 100% |\n"
          "|---|---:|---|---:|---|---|---|")
    disagree = 0
    for (shape, mode), per_grid in sorted(table.items()):
        total = next(iter(per_grid.values()))[1]
        shares = ", ".join(f"{wr}x{wc}: {100 * hit / max(tot, 1):.2f}%" for (wr, wc), (hit, tot) in per_grid.items())
        full = [g for g, (hit, tot) in per_grid.items() if tot and hit == tot]
        rule = h100.warp_grid(*shape, mode)
        agrees = full == [rule]
        disagree += not agrees
        print(f"| {shape[0]} x {shape[1]} | {shape[2]} | {mode} | {total} | {shares} | "
              f"{rule and '%dx%d' % rule} | {'yes' if agrees else 'NO'} |")
    print(f"\n{len(table)} shape-mode pairs, {len({k[0] for k in table})} shapes; the rule disagrees on {disagree}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
