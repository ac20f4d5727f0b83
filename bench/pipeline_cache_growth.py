"""On a GPU: where a fuzz process's device memory grows (issue 14, goal 5).

    python bench/pipeline_cache_growth.py [--time 120] [--kept 256] [--family cm2-elementwise] [--every 250]

One ``ctsgen fuzz`` loop in this process on an unsupervised ``VulkanBackend(kept_pipelines=KEPT)``,
one case an example (``--max-batch 1``: a new pipeline nearly every example; cm2-elementwise's
build in milliseconds, tensor-layout's in about a second). Every EVERY pipelines it prints this process's resident memory, the pipelines built and evicted, and the size of the
VkPipelineCache's data. Run it with ``CTSGEN_PIPELINE_CACHE=0`` and without: 16 H100 fuzz workers'
device processes grew by about 4 MB a minute with at most 256 pipelines kept
(bench/results/fuzz-rate-h100/call6-memory-28min), and whether the cache is that growth was an
inference. Ends with the growth per 1,000 pipelines over the second half of the run.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

from ctsgen.backends.pipeline_cache import PIPELINE_CACHE_ENV
from ctsgen.backends.vulkan import VulkanBackend
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions, FuzzReport


def rss_mb() -> float:
    """Resident memory now (/proc/self/statm), in MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time", type=float, default=120.0)
    ap.add_argument("--kept", type=int, default=256)
    ap.add_argument("--family", default="cm2-elementwise")
    ap.add_argument("--every", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cache = os.environ.get(PIPELINE_CACHE_ENV, "1") != "0"
    print(f"pipeline cache {'on' if cache else 'off'}, kept {args.kept}, {args.family}, {args.time:g} s")
    print(f"{'pipelines':>9} {'evicted':>8} {'rss_mb':>8} {'cache_mb':>9}")
    rows: list[tuple[int, float, float]] = []
    with VulkanBackend(kept_pipelines=args.kept) as backend:
        def sample(_: FuzzReport) -> None:
            built = backend.stats.get("pipelines", 0)
            if built >= args.every * (len(rows) + 1):
                row = (built, rss_mb(), backend.pipeline_cache_bytes() / 2**20)
                rows.append(row)
                print(f"{built:>9} {backend.stats.get('pipelines_evicted', 0):>8} {row[1]:>8.1f} {row[2]:>9.1f}",
                      flush=True)

        options = FuzzOptions(families=(args.family,), time_s=args.time, max_examples=10**9, seed=args.seed,
                              max_batch=1, database=None, keep_going=True, shrink_time_s=1.0,
                              expect_deviations=("setdimension-floor",))
        report = Fuzzer(backend, options, progress=sample).run()
        print(f"{report.examples} examples, {report.cases} cases in {report.wall_s:.0f} s; backend stats "
              f"{ {k: round(v, 1) for k, v in backend.stats.items()} }; rss {rss_mb():.1f} MB, "
              f"cache {backend.pipeline_cache_bytes() / 2**20:.1f} MB; failures: {len(report.failures)}")
    if len(rows) >= 4:
        (b0, r0, c0), (b1, r1, c1) = rows[len(rows) // 2], rows[-1]
        per = 1000 / (b1 - b0)
        print(f"second half: rss +{(r1 - r0) * per:.2f} MB, cache +{(c1 - c0) * per:.2f} MB per 1,000 pipelines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
