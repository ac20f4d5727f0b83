"""How long does the driver take to build each pipeline of a pack? (one at a time)

    python3 bench/pipeline_compile_probe.py PACK [SUBSTRING]

Builds the pipelines of the pack's variants whose id contains SUBSTRING,
one after another in this process, printing the seconds each took. Run it
under `timeout`: a compile that never returns is itself the finding.
"""

from __future__ import annotations

import sys
import time

from ctsgen.backends.vulkan import VulkanBackend
from ctsgen.pack.read import load_pack


def main(pack_dir: str, needle: str = "") -> None:
    pack = load_pack(pack_dir)
    backend = VulkanBackend()
    for vid, variant in pack.variants.items():
        if needle not in vid:
            continue
        print(f"building {vid} ...", flush=True)
        t0 = time.perf_counter()
        backend.prepare([variant], threads=1)
        print(f"  {time.perf_counter() - t0:.2f} s", flush=True)
    backend.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
