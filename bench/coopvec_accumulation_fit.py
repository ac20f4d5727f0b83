"""Which accumulation model explains a device's float coopvec results? (issue 4 triage)

For every failing float case of a results file, replays the case's inputs under
candidate models and counts the recorded wrong elements each model reproduces
bit for bit. A model: an fp16 accumulator that starts at 0 or at the bias and
adds the binary32 sum of each block of B products (B = 8, 16, 32, ...), the bias
added last when it does not start there.

    python bench/coopvec_accumulation_fit.py PACK RESULTS.jsonl[.gz]

Run on the pack `ctsgen generate --family coopvec --count 2000 --seed 4` as it was
before "values" existed (commit cdafd4d) and bench/results/coopvec/run2-local32.jsonl.gz,
it finds B = 16 with the bias as the initial value: 151 of 151 recorded elements
of the 27 failures (docs/validation.md, "coopvec accumulation model").
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np

from coopvec_error_table import read_results  # bench/ is on sys.path when run as a script
from ctsgen.oracle.numeric import accumulate_blocks_f16
from ctsgen.families.coopvec.case import CoopVecCase
from ctsgen.pack.read import load_pack

BLOCKS = (1, 8, 16, 32, 64)


def fit(pack_dir: str, results_path: str) -> Counter:
    pack = load_pack(pack_dir)
    results = read_results(Path(results_path))
    hits: Counter = Counter()
    for c in pack.cases:
        r = results.get(c.name)
        if r is None or r["status"] != "Fail":
            continue
        case = CoopVecCase.from_json(c.record["parameters"])
        v = case.shader
        initial, _ = c.arrays()
        x = v.input_vectors(initial[0], 0)
        w = v.read_matrix(initial[1], case.matrixOffset, case.matrixStride)
        b = v.read_bias(initial[2], case.biasOffset)
        step = v.out_stride // 2
        for block in BLOCKS:
            for bias_first in (False, True):
                pred = accumulate_blocks_f16(x, w, b, block, bias_first=bias_first).astype(np.float16)
                for m in r["mismatches"]:
                    inv, row = divmod(m["element"], step)
                    if int(pred[inv, row].view(np.uint16)) == int(m["actual"]["bits"], 16):
                        hits[(block, bias_first)] += 1
        hits["recorded"] += len(r["mismatches"])
    return hits


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    h = fit(sys.argv[1], sys.argv[2])
    total = h.pop("recorded", 0)
    for (block, bias_first), n in sorted(h.items(), key=lambda kv: -kv[1]):
        print(f"block {block:3d}, accumulator starts at {'the bias' if bias_first else '0':8s}: "
              f"{n}/{total} recorded elements reproduced")
