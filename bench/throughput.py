"""Throughput by stage and family, against the naive loop in the same run.

For each family: the naive loop (bench/naive_loop.py: compile, new pipeline
and dispatch per case) for ``--time`` seconds, then ``ctsgen fuzz`` for
``--time`` seconds on the same backend. Writes ``OUT/throughput.md`` (cases/s,
the ratio, and where the fuzzer's time went, stage x family, in ms per
case), ``OUT/throughput.json`` and, with matplotlib, ``OUT/throughput.png``.
With ``--generate N`` it also times ``ctsgen generate`` of tensor-layout, N
cases, with ``--jobs 1`` and ``--jobs`` all cores, and checks both packs are
byte-identical.

    python bench/throughput.py --backend reference --time 20 --out bench/results/throughput
    python bench/throughput.py --backend vulkan --family all --time 30 --generate 2000 --out $OUT
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from naive_loop import naive_loop  # noqa: E402

from ctsgen.device.profile import drawing_profile  # noqa: E402
from ctsgen.families import families, get_family  # noqa: E402
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions, default_min_batch, runnable_families  # noqa: E402
from ctsgen.timing import STAGES  # noqa: E402


def open_backend(name: str):  # noqa: ANN201 - a Backend
    if name == "vulkan":
        from ctsgen.backends.vulkan import VulkanBackend
        return VulkanBackend()
    from ctsgen.backends.reference import ReferenceBackend
    return ReferenceBackend()


def measure_family(backend_name: str, family: str, seconds: float, seed: int, max_batch: int) -> dict:
    """Naive loop and fuzzer on one family, one after the other, in this process."""
    backend = open_backend(backend_name)
    try:
        n_naive, wall_naive, _ = naive_loop(backend, family, seconds, seed)
        report = Fuzzer(backend, FuzzOptions(families=(family,), max_examples=10**9, time_s=seconds,
                                             seed=seed, max_batch=max_batch, database=None,
                                             min_batch=default_min_batch(backend_name),
                                             shrink_time_s=5.0)).run()
    finally:
        backend.close()
    naive = n_naive / wall_naive if wall_naive else 0.0
    return {"family": family, "naive_cases": n_naive, "naive_s": wall_naive, "naive_cases_per_s": naive,
            "fuzz_cases": report.cases, "fuzz_examples": report.examples, "fuzz_s": report.wall_s,
            "fuzz_cases_per_s": report.cases_per_s, "ratio": report.cases_per_s / naive if naive else 0.0,
            "failure": None if report.result is None else f"{report.result.status.value}: {report.case.name()}",
            "stages_s": report.times.to_json()}


def measure_generate(count: int, jobs: int) -> dict:
    """``ctsgen generate`` of tensor-layout with --jobs 1 and --jobs ``jobs``; the packs must match."""
    out: dict = {"count": count}
    with tempfile.TemporaryDirectory() as tmp:
        for j in (1, jobs):
            t0 = time.monotonic()
            subprocess.run([sys.executable, "-m", "ctsgen", "generate", "--family", "tensor-layout", "--count",
                            str(count), "--seed", "1", "--out", f"{tmp}/jobs{j}", "--jobs", str(j)],
                           check=True, stdout=subprocess.DEVNULL)
            wall = time.monotonic() - t0
            out[f"jobs{j}_s"], out[f"jobs{j}_cases_per_s"] = wall, count / wall
        cmp = filecmp.dircmp(f"{tmp}/jobs1", f"{tmp}/jobs{jobs}")
        out["identical"] = _identical(cmp)
    out["jobs"] = jobs
    return out


def _identical(cmp: filecmp.dircmp) -> bool:
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_identical(sub) for sub in cmp.subdirs.values())


def table(rows: list[dict]) -> str:
    """Markdown: cases/s and ratio per family, then ms per case per stage."""
    lines = ["| family | naive cases/s | fuzz cases/s | ratio | cases/example | "
             + " | ".join(f"{s} ms/case" for s in STAGES) + " |",
             "|---|---:|---:|---:|---:|" + "---:|" * len(STAGES)]
    for r in rows:
        per_case = [1000.0 * r["stages_s"].get(s, 0.0) / max(r["fuzz_cases"], 1) for s in STAGES]
        lines.append(f"| {r['family']} | {r['naive_cases_per_s']:.1f} | {r['fuzz_cases_per_s']:.1f} | "
                     f"{r['ratio']:.1f}x | {r['fuzz_cases'] / max(r['fuzz_examples'], 1):.0f} | "
                     + " | ".join(f"{v:.3f}" for v in per_case) + " |")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(rows) + 2))
    left = [0.0] * len(rows)
    for s in STAGES:
        widths = [1000.0 * r["stages_s"].get(s, 0.0) / max(r["fuzz_cases"], 1) for r in rows]
        if any(widths):
            ax.barh([r["family"] for r in rows], widths, left=left, label=s)
            left = [a + b for a, b in zip(left, widths)]
    ax.set_xlabel("ms per case (fuzz)")
    ax.set_title("where the fuzzer's time goes, by stage and family")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="reference", choices=["reference", "vulkan"])
    p.add_argument("--family", action="append", help="family to measure (repeatable; 'all': every family; "
                                                     "default: tensor-layout)")
    p.add_argument("--time", type=float, default=20.0, help="seconds for the naive loop and for the fuzzer, each")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-batch", type=int, default=FuzzOptions.max_batch)
    p.add_argument("--generate", type=int, default=0, help="also time generate of this many tensor-layout cases")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--out", type=Path, default=Path("bench/results/throughput"))
    a = p.parse_args()
    names = a.family or ["tensor-layout"]
    if "all" in names:  # every family this backend's device runs (Family.needs)
        backend = open_backend(a.backend)
        try:
            kept, skipped = runnable_families([get_family(n) for n in sorted(families())],
                                              drawing_profile(backend.profile()), a.backend)
        finally:
            backend.close()
        names = [f.name for f in kept]
        for name, why in skipped.items():
            print(f"skipping {name}: {why}", flush=True)
    rows = []
    for name in names:
        r = measure_family(a.backend, name, a.time, a.seed, a.max_batch)
        rows.append(r)
        print(f"{name}: naive {r['naive_cases_per_s']:.1f} cases/s, fuzz {r['fuzz_cases_per_s']:.1f} cases/s "
              f"= {r['ratio']:.1f}x ({r['fuzz_cases']} cases in {r['fuzz_examples']} examples)"
              + (f"; FAILURE {r['failure']}" if r["failure"] else ""), flush=True)
    result = {"backend": a.backend, "time_s": a.time, "seed": a.seed, "max_batch": a.max_batch,
              "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]), "families": rows}
    text = f"# throughput ({a.backend}, {a.time:.0f} s each, `{result['command']}`)\n\n{table(rows)}\n"
    if a.generate:
        g = measure_generate(a.generate, a.jobs)
        result["generate"] = g
        jobs_rate = g[f"jobs{g['jobs']}_cases_per_s"]
        text += (f"\ngenerate tensor-layout --count {g['count']}: --jobs 1 {g['jobs1_cases_per_s']:.0f} cases/s, "
                 f"--jobs {g['jobs']} {jobs_rate:.0f} cases/s; "
                 f"packs byte-identical: {g['identical']}\n")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "throughput.json").write_text(json.dumps(result, indent=1) + "\n")
    (a.out / "throughput.md").write_text(text)
    plotted = plot(rows, a.out / "throughput.png")
    print(text)
    print(f"wrote {a.out}/throughput.md, throughput.json" + (", throughput.png" if plotted else ""))


if __name__ == "__main__":
    main()
