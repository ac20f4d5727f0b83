"""Write a pack of the decode variant an H100 fuzz worker reported as Timeout (issue 14 triage).

`ctsgen fuzz --workers 8 --seed 503` (worker 1, 2026-11-23) reported
``decode.q8_0.dim5.block2x2x2x2x2.clamp_repeat_mirrored.float16.a_96x48.workgroup128``:
12 cases, no answer within 30.1 s, worker killed. Slow pipeline build or hang?
This pack holds that variant and, to shrink it, its neighbours: the same
decode with a smaller matrix, a subgroup-scope matrix, ClampToEdge instead
of RepeatMirrored, and Dim 2. ``--time`` then times, on the device, each
variant's pipeline build apart from its dispatch, each in a child process
with a bound, so a hang or an endless build cannot stop the others:

    python bench/decode_timeout_probe.py OUT_DIR [CASES_PER_VARIANT]
    python bench/decode_timeout_probe.py --time PACK [BOUND_S]      # on the device
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from ctsgen.families.decode import FAMILY
from ctsgen.families.decode.case import DecodeVariant
from ctsgen.families.base import StrategyOptions
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.pack.write import write_pack
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import toolchain_versions


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


def time_variant(pack_dir: str, variant_id: str) -> None:
    """Child: build one variant's pipeline, then run all its cases in one dispatch; print both times."""
    from ctsgen.backends.vulkan import VulkanBackend
    from ctsgen.pack.read import load_pack
    from ctsgen.execute.batch import build_batch

    pack = load_pack(pack_dir)
    variant = pack.variants[variant_id]
    cases = [c for c in pack.cases if c.variant_id == variant_id]
    backend = VulkanBackend()
    t0 = time.perf_counter()
    backend.prepare([variant], threads=1)
    built = time.perf_counter() - t0
    print(f"  build {built:.2f} s", flush=True)
    batch = build_batch(variant, [c.params for c in cases], [c.arrays()[0] for c in cases])
    t0 = time.perf_counter()
    backend.run(batch.dispatch, 600.0)
    print(f"  dispatch of {len(cases)} cases {time.perf_counter() - t0:.3f} s", flush=True)
    backend.close()


def time_pack(pack_dir: str, bound_s: float) -> None:
    from ctsgen.pack.read import load_pack

    for vid in sorted(load_pack(pack_dir).variants):
        print(vid, flush=True)
        try:
            subprocess.run([sys.executable, __file__, "--time-variant", pack_dir, vid], timeout=bound_s, check=False)
        except subprocess.TimeoutExpired:
            print(f"  no answer within {bound_s:.0f} s (child killed)", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--time-variant"]:
        sys.exit(time_variant(sys.argv[2], sys.argv[3]))
    if sys.argv[1:2] == ["--time"]:
        sys.exit(time_pack(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 240.0))
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    per = int(sys.argv[2]) if len(sys.argv) == 3 else 12
    drawn = [c for i, v in enumerate(probe_variants())
             for c in draw_examples(FAMILY.cases_for(v, StrategyOptions()), per, 503 + i)]
    cases = list({c.name(): c for c in drawn}.values())  # a draw may repeat a case
    header = {"seed": 503, "count": len(cases), "families": ["decode"], "probe": "decode q8_0 dim5 timeout",
              "toolchain": {k: v for k, v in toolchain_versions().items() if not k.endswith("_path")}}
    print(write_pack(cases, Path(sys.argv[1]), header=header,
                     overwrite=True))
