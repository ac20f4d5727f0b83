"""CPU milliseconds per case of drawing and of data+oracle, per family, for a fixed amount of work,
against a baseline tree in the same run.

Each family is fuzzed for one round of ``--examples`` examples from ``--seed`` on the reference
backend, in a process of its own, with ctsgen's own stage breakdown timed in CPU seconds of that
process (``time.process_time``) instead of wall seconds, so that other work on a shared machine
does not show up as a slower stage. With ``--baseline PATH`` (a checkout of another commit, e.g.
``git worktree add /tmp/base main``) the same rounds run on that tree too, interleaved with this
one's, ``--repeat`` times; each figure is the smallest over the repeats. The two trees draw the
same examples where the change left the strategies alone (the table's cases columns say so).

    python bench/stage_costs.py --baseline /tmp/base --examples 40 --repeat 2 --out bench/results/stage-costs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Run in the measured tree's process: one round per family, stages in CPU seconds.
CHILD = r"""
import json, sys, time
time.perf_counter = time.process_time  # ctsgen's breakdown in CPU seconds of this process
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
family, examples, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t0 = time.process_time()
r = Fuzzer(ReferenceBackend(), FuzzOptions(families=(family,), max_examples=examples, database=None,
                                           seed=seed)).run()
print(json.dumps({"cases": r.cases, "examples": r.examples, "cpu_s": time.process_time() - t0,
                  "stages_s": r.times.to_json()}))
"""


def measure(tree: Path, family: str, examples: int, seed: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, family, str(examples), str(seed)], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=900)
    if done.returncode:
        raise SystemExit(f"{family} on {tree}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def per_case(r: dict) -> dict[str, float]:
    n = max(r["cases"], 1)
    return {"cpu": 1000 * r["cpu_s"] / n, "draw": 1000 * r["stages_s"].get("draw", 0.0) / n,
            "data+oracle": 1000 * r["stages_s"].get("data+oracle", 0.0) / n}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", action="append", help="family (repeatable; default: every family the reference runs)")
    p.add_argument("--examples", type=int, default=40)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--baseline", type=Path, help="another checkout, measured the same way in the same run")
    p.add_argument("--out", type=Path, help="where stage_costs.md and stage_costs.json go (default: printed only)")
    a = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from ctsgen.families import families
    names = a.family or [f for f in sorted(families()) if f != "decode-vector"]  # the reference lacks it
    trees = {"this": ROOT} | ({"baseline": a.baseline.resolve()} if a.baseline else {})
    best: dict[str, dict[str, dict]] = {t: {} for t in trees}
    for _ in range(a.repeat):
        for name in names:
            for label, tree in trees.items():  # interleaved: the machine's load falls on both alike
                r = measure(tree, name, a.examples, a.seed)
                prev = best[label].get(name)
                if prev is None or r["cpu_s"] < prev["cpu_s"]:
                    best[label][name] = r
                print(f"{label} {name}: {r['cases']} cases, {per_case(r)}", file=sys.stderr, flush=True)
    cols = ["cpu", "draw", "data+oracle"]
    if a.baseline:
        head = "| family | cases (baseline, this) | " + " | ".join(f"{c} ms/case (baseline -> this)" for c in cols)
        lines = [head + " |", "|---|---|" + "---:|" * len(cols)]
        for n in names:
            b, t = per_case(best["baseline"][n]), per_case(best["this"][n])
            lines.append(f"| {n} | {best['baseline'][n]['cases']}, {best['this'][n]['cases']} | "
                         + " | ".join(f"{b[c]:.3f} -> {t[c]:.3f}" for c in cols) + " |")
    else:
        lines = ["| family | cases | " + " | ".join(f"{c} ms/case" for c in cols) + " |",
                 "|---|---:|" + "---:|" * len(cols)]
        for n in names:
            t = per_case(best["this"][n])
            lines.append(f"| {n} | {best['this'][n]['cases']} | " + " | ".join(f"{t[c]:.3f}" for c in cols) + " |")
    text = (f"# CPU ms per case, reference backend, {a.examples} examples from seed {a.seed}, "
            f"smallest of {a.repeat}\n\n" + "\n".join(lines) + "\n")
    print(text)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "stage_costs.md").write_text(text)
        (a.out / "stage_costs.json").write_text(json.dumps(best, indent=1) + "\n")


if __name__ == "__main__":
    main()
