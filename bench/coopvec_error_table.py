"""Largest float error relative to the tolerance, per coopvec type combination (issue 4).

Reads a coopvec pack and a results file of ``ctsgen run`` on it (JSONL, plain or
.gz) and prints a markdown table: one row per (op, inputType, inputInterpretation,
matrixInterpretation, biasInterpretation, resultType), with the verdicts, the
layouts and value kinds seen, and the largest ``max_error_ratio`` (error / bound;
0 for bit-exact paths and grid data, whose bound is zero).

    python bench/coopvec_error_table.py PACK RESULTS.jsonl[.gz] > table.md
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from ctsgen.ops.coopvec_matrix import LAYOUTS
from ctsgen.pack.read import load_pack
from ctsgen.runner.results_file import is_header

TYPE_KEYS = ("inputType", "inputInterpretation", "matrixInterpretation", "biasInterpretation", "resultType")


def read_results(path: Path) -> dict[str, dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return {r["name"]: r for r in map(json.loads, filter(str.strip, f)) if not is_header(r)}


def table(pack_dir: str, results_path: str) -> str:
    pack = load_pack(pack_dir)
    results = read_results(Path(results_path))
    rows: dict[tuple, dict] = defaultdict(lambda: {"verdicts": Counter(), "layouts": set(), "values": set(),
                                                   "max_ratio": 0.0, "worst": ""})
    for c in pack.cases:
        p = c.record["parameters"]
        v = p["variant"]
        r = results.get(c.name)
        if r is None:
            continue
        row = rows[(v["op"], *(v[k] for k in TYPE_KEYS))]
        row["verdicts"][r["status"]] += 1
        row["layouts"].add(LAYOUTS[v["layout"]] + ("+T" if v["transpose"] else ""))
        row["values"].add(p.get("values", "edges" if p.get("edges") else "random"))
        ratio = r.get("max_error_ratio") or 0.0
        if ratio != float("inf") and ratio > row["max_ratio"]:
            row["max_ratio"], row["worst"] = ratio, f"M {v['M']} K {v['K']}"
    out = ["| op | input | as | matrix | bias | result | cases | verdicts | layouts | values | max error / bound |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(rows):
        row = rows[key]
        verdicts = ", ".join(f"{n} {s}" for s, n in sorted(row["verdicts"].items()))
        worst = f"{row['max_ratio']:.3f} ({row['worst']})" if row["max_ratio"] else "0 (exact)"
        out.append(f"| {' | '.join(key)} | {sum(row['verdicts'].values())} | {verdicts} | "
                   f"{', '.join(sorted(row['layouts']))} | {', '.join(sorted(row['values']))} | {worst} |")
    missing = len(pack.cases) - sum(sum(r["verdicts"].values()) for r in rows.values())
    if missing:
        out.append(f"\n{missing} cases of the pack have no result in {results_path}.")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(table(sys.argv[1], sys.argv[2]))
