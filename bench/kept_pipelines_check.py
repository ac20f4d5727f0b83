"""On a GPU: the Vulkan backend's bound on kept pipelines and its cache publishing (issue 14, goal 5).

    python bench/kept_pipelines_check.py PACK [--kept 2]

Runs PACK twice on one ``VulkanBackend(kept_pipelines=KEPT)`` (the second run dispatches
every variant again, so pipelines evicted after the first are built again, from the
VkPipelineCache), then once more on a fresh backend with the default bound. Prints each
run's verdict counts and the backend's pipeline statistics; exits 1 if the verdicts differ
between runs, a case fails, nothing was evicted, or the fresh backend (which built nothing
new) published its cache again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ctsgen.backends.vulkan import VulkanBackend
from ctsgen.pack.read import load_pack
from ctsgen.runner.options import RunOptions
from ctsgen.runner.run import run_pack

STATS = ("pipelines", "pipelines_evicted", "pipeline_cache_loaded_bytes", "pipeline_cache_saved_bytes")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack", type=Path)
    ap.add_argument("--kept", type=int, default=2)
    args = ap.parse_args()
    pack = load_pack(args.pack)
    opts = RunOptions(expect_deviations=("setdimension-floor",))
    counts, problems = [], []
    backend = VulkanBackend(kept_pipelines=args.kept)
    try:
        for i in (1, 2):
            summary = run_pack(pack, backend, options=opts)
            counts.append(dict(summary.counts))
            print(f"run {i}, kept {args.kept}: {dict(summary.counts)} in {summary.wall_s:.1f} s")
    finally:
        backend.close()
    bounded = {k: backend.stats.get(k) for k in STATS}
    print(f"bounded backend: {bounded}")
    with VulkanBackend() as fresh:
        summary = run_pack(pack, fresh, options=opts)
        counts.append(dict(summary.counts))
        print(f"run 3, fresh backend: {dict(summary.counts)} in {summary.wall_s:.1f} s")
    again = {k: fresh.stats.get(k) for k in STATS}
    print(f"fresh backend: {again}")
    if len({tuple(sorted(c.items())) for c in counts}) != 1:
        problems.append("verdicts differ between runs")
    if any(k not in ("Pass", "QualityWarning", "NotSupported") for c in counts for k in c):
        problems.append("a case did not pass")
    if not bounded["pipelines_evicted"]:
        problems.append("nothing was evicted")
    if again["pipeline_cache_saved_bytes"]:
        problems.append("the fresh backend built nothing new and still published its cache")
    print("OK" if not problems else "PROBLEMS: " + "; ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
