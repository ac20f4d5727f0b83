"""Which bits of clampValue does a Constant-clamped load return? (docs/spec-decisions.md, clamp-value-bits)

Writes a pack of loads whose slice lies wholly outside a 2-D layout, one
per (component type, clampValue) with the high bits of clampValue set
differently from the low ones, so a conversion, a use of the high half or
a sign extension shows as a Fail. Run it with ``ctsgen run OUT``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ctsgen.device.profile import default_profile
from ctsgen.families.tensor_layout.case import LayoutVariant, TensorLayoutCase
from ctsgen.ops.tensor_layout import Operation
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import Scope
from ctsgen.pack.write import write_pack

CLAMP_VALUES = (0xA5C3B2E1, 0x0001_3C00, 0xFFFF_0080, 0x1234_00FF, 0x8000_0001, 0x7F)


def cases() -> list[TensorLayoutCase]:
    out = []
    seen = set()
    for m in default_profile().matrix_types():
        if m.scope is not Scope.Subgroup or m.component in seen:
            continue
        seen.add(m.component)
        v = LayoutVariant(Operation.load, 2, ClampMode.Constant, m)
        for cv in CLAMP_VALUES:
            out.append(TensorLayoutCase(v, (4, 4), offset=(100, -100), span=(m.rows, m.cols), clampValue=cv))
    return out


if __name__ == "__main__":
    out = Path(sys.argv[1])
    cs = cases()
    write_pack(cs, out, header={"seed": None, "count": len(cs), "families": ["tensor-layout"]}, overwrite=True)
    print(f"wrote {out}: {len(cs)} cases over {len({c.shader.id for c in cs})} component types")
