"""Write a pack of the decode variant an H100 fuzz worker reported as Timeout (issue 14 triage).

`ctsgen fuzz --workers 8 --seed 503` (worker 1, 2026-11-23) reported
``decode.q8_0.dim5.block2x2x2x2x2.clamp_repeat_mirrored.float16.a_96x48.workgroup128``:
12 cases, no answer within 30.1 s, worker killed. Slow pipeline build or hang?
This pack holds that variant and, to shrink it, its neighbours: the same
decode with a smaller matrix, a subgroup-scope matrix, ClampToEdge instead
of RepeatMirrored, and Dim 2. On the device, `ctsgen run PACK --backend
vulkan --timeout 300` times the pipeline builds (``prepare_s``) apart from
the dispatches:

    python bench/decode_timeout_probe.py OUT_DIR [CASES_PER_VARIANT]
"""

from __future__ import annotations

import sys
from pathlib import Path

from ctsgen.families.decode import FAMILY
from ctsgen.families.decode.case import DecodeVariant
from ctsgen.families.base import StrategyOptions
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.pack.write import write_pack
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import compile_glsl, toolchain_versions, validate_spirv


def probe_variants() -> list[DecodeVariant]:
    f16, wg, sg = ComponentType.float16, Scope.Workgroup, Scope.Subgroup
    mirrored, edge = ClampMode.RepeatMirrored, ClampMode.ClampToEdge
    block5 = (2, 2, 2, 2, 2)
    return [
        DecodeVariant(5, mirrored, MatrixType(f16, wg, 96, 48, MatrixUse.A, 128), "q8_0", block5),  # as reported
        DecodeVariant(5, mirrored, MatrixType(f16, wg, 32, 32, MatrixUse.A, 128), "q8_0", block5),
        DecodeVariant(5, mirrored, MatrixType(f16, sg, 16, 16, MatrixUse.A), "q8_0", block5),
        DecodeVariant(5, edge, MatrixType(f16, wg, 96, 48, MatrixUse.A, 128), "q8_0", block5),
        DecodeVariant(2, mirrored, MatrixType(f16, wg, 96, 48, MatrixUse.A, 128), "q8_0", (4, 8)),
    ]


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    per = int(sys.argv[2]) if len(sys.argv) == 3 else 12
    cases = [c for i, v in enumerate(probe_variants())
             for c in draw_examples(FAMILY.cases_for(v, StrategyOptions()), per, 503 + i)]
    header = {"seed": 503, "count": len(cases), "families": ["decode"], "probe": "decode q8_0 dim5 timeout",
              "toolchain": {k: v for k, v in toolchain_versions().items() if not k.endswith("_path")}}
    print(write_pack(cases, Path(sys.argv[1]), header=header, compile_fn=compile_glsl, validate_fn=validate_spirv,
                     overwrite=True))
