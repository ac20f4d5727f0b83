"""Coverage tables of coopmat-kernel packs: which constructs each kernel holds, how many at once, how
many matrices it keeps (every variable is defined at the start; every Accumulator and array element
is stored at the end, so they are all live across the whole kernel), its MulAdd entry by its subgroups."""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid, one_way
from ctsgen.device.profile import default_profile
from ctsgen.families.coopmat_kernel.case import KernelCase
from ctsgen.families.coopmat_kernel.strategy import constructs_of
from ctsgen.kernel.ir import Kernel
from ctsgen.ops.cm2 import MAX_SUBGROUPS
from ctsgen.ops.khr_addressing import Layout
from ctsgen.strategies.kernel import entries

CONSTRUCTS = ("loop", "nested loop", "break/continue", "unroll", "dont unroll", "branch", "subgroup branch",
              "call", "array", "shared", "exchange", "element", "readback", "struct", "size not 16x16")


def entry_label(k: Kernel) -> str:
    return f"{k.a.component.name} + {k.c.component.name} {k.a.rows}x{k.b.cols}x{k.a.cols}"


#: The embedded H100 profile's entries a kernel draws (a pack for another device adds its own as rows).
ENTRIES = [entry_label(Kernel(e.a, e.b, e.c, 1, (1, 1, 1), 0, (Layout.RowMajor,) * 3, (None, None), (), ()))
           for e in entries(default_profile())]


def _bin(n: int, at_least: int) -> str:
    return f">= {at_least}" if n >= at_least else str(n)


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    parsed = [KernelCase.from_json(p) for p in cases]
    kernels = [c.shader.kernel for c in parsed]
    held = [constructs_of(k) for k in kernels]
    counts = [sum(k.counts) + k.array for k in kernels]
    return [
        one_way("coopmat-kernel: kernels holding each construct (a kernel counts in every row it holds)",
                "construct", [c for h in held for c in h if c in CONSTRUCTS], CONSTRUCTS, partition=False),
        one_way("coopmat-kernel: distinct constructs in one kernel", "constructs",
                [_bin(len(h & set(CONSTRUCTS)), 4) for h in held], ["0", "1", "2", "3", ">= 4"]),
        one_way("coopmat-kernel: matrices live at once (variables and array elements)", "matrices",
                [_bin(n, 8) for n in counts], ["3", "4", "5", "6", "7", ">= 8"]),
        grid("coopmat-kernel: MulAdd entry (A x B + Accumulator MxNxK; rows: the H100 profile's, then others seen) "
             "by subgroups per workgroup", "entry", "subgroups", ENTRIES, list(range(1, MAX_SUBGROUPS + 1)),
             [(entry_label(k), k.subgroups) for k in kernels]),
    ]
