"""Write a pack of large OuterProductAccumulate cases, to time them on a device (issue 4 triage).

An H100 fuzz session saw one dispatch of 21 OuterProductAccumulate cases (M 512,
K 128, 32 invocations, TrainingOptimal) time out after 30 s, and the same
dispatch finish when Hypothesis replayed it. This pack repeats that shape so
`ctsgen run` can be timed several times in one device call:

    python bench/outer_product_probe.py OUT_DIR [CASES]
    ctsgen run OUT_DIR --backend vulkan --timeout 60     # on the device, a few times
"""

from __future__ import annotations

import sys
from pathlib import Path

from ctsgen.families.coopvec.case import CoopVecCase
from ctsgen.families.coopvec.variant import CoopVecVariant
from ctsgen.model.types import CoopVecType
from ctsgen.pack.write import write_pack
from ctsgen.toolchain import toolchain_versions


def probe_cases(n: int) -> list[CoopVecCase]:
    f16 = CoopVecType.float16
    v = CoopVecVariant("outer_product", f16, f16, f16, f16, f16, 3, False, 512, 128)
    return [CoopVecCase(v, 64 * (i % 4), 0, 0, seed=i, values="grid" if i % 2 else "random") for i in range(n)]


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cases = probe_cases(int(sys.argv[2]) if len(sys.argv) == 3 else 21)
    header = {"seed": None, "count": len(cases), "families": ["coopvec"], "probe": "outer_product m512 k128",
              "toolchain": {k: v for k, v in toolchain_versions().items() if not k.endswith("_path")}}
    print(write_pack(cases, Path(sys.argv[1]), header=header,
                     overwrite=True))
