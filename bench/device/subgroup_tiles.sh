#!/usr/bin/env bash
# One device call (H100): Subgroup-scope cases in workgroups of 1-4 subgroups, each subgroup loading,
# computing and storing its own tile (docs/spec-decisions.md "subgroup-scope-workgroups"), for every
# family that draws them: a fresh-seed pack per family run on the GPU, then a short fuzz. Prints how
# many variants have several subgroups and the verdicts; nothing is expected to fail.
#   carry: .gl .whl .carry   usage: bash bench/device/subgroup_tiles.sh [CASES [SECONDS [SEED]]]
set -uo pipefail
. bench/device/setup.sh
N=${1:-200}; T=${2:-60}; SEED=${3:-3607}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
status=0
for fam in cm2-reduce cm2-convert cm2-elementwise; do
    python3 -m ctsgen generate --family "$fam" --count "$N" --seed "$SEED" --out "/tmp/p-$fam" > /dev/null 2>&1 \
        || { echo "$fam: generate failed"; status=1; continue; }
    python3 - "$fam" <<'PY'
import collections, json, sys
m = json.load(open(f"/tmp/p-{sys.argv[1]}/manifest.json"))
n = collections.Counter(v["signature"].get("subgroups", 1) for v in m["variants"].values())
print(f"{sys.argv[1]}: {m['count']} cases, variants by subgroups per workgroup: {dict(sorted(n.items()))}")
PY
    timeout 400 python3 -m ctsgen run "/tmp/p-$fam" --backend vulkan --results "$OUT/run-$fam.jsonl" \
        > "$OUT/run-$fam.log" 2>&1; rc=$?
    echo "$fam run exit $rc"; grep -E "^ci:|^  (Pass|Fail|Error|Skip|Timeout|Crash) " "$OUT/run-$fam.log"
    [ $rc -eq 0 ] || status=1
    timeout $((T + 90)) python3 -m ctsgen fuzz --backend vulkan --family "$fam" --time "$T" --seed "$SEED" \
        --workers 8 --database none --keep-going --shrink-time 15 > "$OUT/fuzz-$fam.log" 2>&1; rc=$?
    echo "$fam fuzz exit $rc"; grep -E "fuzzed|failure|found" "$OUT/fuzz-$fam.log" | tail -5
    [ $rc -eq 0 ] || status=1
done
exit $status
