"""How long the driver takes to build the pipelines the fuzzer draws, per family (issue 14).

    python3 bench/pipeline_build_times.py --family all --variants 150 --time 150 --out OUT

One process per family, all at once (each builds on its own, one pipeline at a
time, as a fuzz worker's device process does). Each draws ``--variants``
shader variants the way the fuzzer does (Hypothesis's generation, the live
device's profile), compiles them in-process and times
``vkCreateComputePipelines`` for each, until ``--time`` seconds have passed.
A build still running when a family's time is up is recorded with the
seconds it had taken so far (``unfinished``). Writes ``OUT/builds.jsonl``
(one record per build: family, variant, seconds) and prints per family the
count, median, 90th percentile, maximum, total, and the slowest variants.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctsgen.families import families, get_family  # noqa: E402


def build_family(family: str, variants: int, seed: int, path: str) -> None:
    """Draw, compile and build ``variants`` variants of ``family``, appending a record per build to ``path``."""
    from ctsgen.backends.vulkan import VulkanBackend
    from ctsgen.device.profile import drawing_profile
    from ctsgen.families.base import StrategyOptions
    from ctsgen.strategies.sampling import draw_examples
    from ctsgen.toolchain.variants import compile_variant

    backend = VulkanBackend()
    fam = get_family(family)
    profile = drawing_profile(backend.profile())
    if profile.unsupported_reason(fam.needs):
        return
    drawn = draw_examples(fam.variants(StrategyOptions(profile=profile)), variants, seed)
    with open(path, "a") as out:
        for v in drawn:
            sv = compile_variant(v, family, validation="if-installed")
            if profile.unsupported_reason(sv.requirements):
                continue
            out.write(json.dumps({"family": family, "variant": v.id, "started": time.time()}) + "\n")
            out.flush()
            t0 = time.perf_counter()
            backend.prepare([sv], threads=1)
            out.write(json.dumps({"family": family, "variant": v.id, "seconds": time.perf_counter() - t0}) + "\n")
            out.flush()
    backend.close()


def summarise(records: list[dict], ended: float) -> str:
    """Per family: builds, median, p90, max, total seconds and the three slowest variants."""
    done = {(r["family"], r["variant"]) for r in records if "seconds" in r}
    builds: dict[str, list[tuple[float, str]]] = {}
    for r in records:
        if "seconds" in r:
            builds.setdefault(r["family"], []).append((r["seconds"], r["variant"]))
        elif (r["family"], r["variant"]) not in done:  # still building when time was up
            builds.setdefault(r["family"], []).append((ended - r["started"], r["variant"] + " (unfinished)"))
    lines = ["| family | builds | median s | p90 s | max s | total s | slowest |", "|---|---:|---:|---:|---:|---:|---|"]
    for fam, b in sorted(builds.items()):
        s = sorted(x for x, _ in b)
        slow = ", ".join(f"{v} {x:.1f}" for x, v in sorted(b, reverse=True)[:3])
        lines.append(f"| {fam} | {len(s)} | {s[len(s) // 2]:.3f} | {s[int(0.9 * (len(s) - 1))]:.3f} | {s[-1]:.2f} | "
                     f"{sum(s):.1f} | {slow} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", action="append", help="family (repeatable; 'all': every family)")
    p.add_argument("--variants", type=int, default=150)
    p.add_argument("--time", type=float, default=150.0, help="seconds for every family together")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("bench/results/pipeline-builds"))
    args = p.parse_args()
    names = families() if not args.family or "all" in args.family else args.family
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "builds.jsonl"
    path.write_text("")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=build_family, args=(f, args.variants, args.seed, str(path))) for f in names]
    for proc in procs:
        proc.start()
    deadline = time.monotonic() + args.time
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
    ended = time.time()
    for proc in procs:
        if proc.is_alive():
            proc.kill()
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    table = summarise(records, ended)
    (args.out / "builds.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
