"""Variations around the first case the H100 fuzz session stored as failing.

The stored case: a Dim-5 Repeat load, layoutDimension (3, 2, 5, 3, 5), no
slice, through a 48x48 sint32 subgroup Accumulator (a flexible size).
Each variation changes one thing (clamp mode, Dim, matrix size or type,
data) so the device run says which part matters. Writes a pack:

    python bench/probe_fuzz_find.py OUT
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from ctsgen.families.tensor_layout.case import LayoutVariant, TensorLayoutCase
from ctsgen.ops.tensor_layout import Operation
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.pack.write import write_pack


def variations() -> list[TensorLayoutCase]:
    m = MatrixType(ComponentType.sint32, Scope.Subgroup, 48, 48, MatrixUse.Accumulator)
    stored = TensorLayoutCase(LayoutVariant(Operation.load, 5, ClampMode.Repeat, m), (3, 2, 5, 3, 5))
    out = [stored, replace(stored, data_pattern="random", seed=7)]
    for mode in (ClampMode.Undefined, ClampMode.Constant, ClampMode.ClampToEdge, ClampMode.RepeatMirrored):
        out.append(replace(stored, shader=replace(stored.shader, clampMode=mode)))
    for rows, cols in ((16, 16), (32, 32), (48, 16), (16, 48), (64, 64)):
        out.append(replace(stored, shader=replace(stored.shader, matrix=replace(m, rows=rows, cols=cols))))
    out.append(replace(stored, shader=replace(stored.shader, matrix=replace(m, component=ComponentType.uint32))))
    out.append(replace(stored, shader=replace(stored.shader, matrix=replace(m, component=ComponentType.float32))))
    flat = replace(stored, shader=replace(stored.shader, Dim=1), layoutDimension=(450,))
    out += [flat, replace(stored, shader=replace(stored.shader, Dim=2), layoutDimension=(15, 30)),
            replace(stored, layoutDimension=(3, 2, 5, 3, 6)), replace(stored, layoutDimension=(48, 1, 1, 1, 48))]
    return out


if __name__ == "__main__":
    cases = variations()
    write_pack(cases, Path(sys.argv[1]), header={"seed": None, "count": len(cases)}, overwrite=True)
    print(f"wrote {sys.argv[1]}: {len(cases)} cases")
