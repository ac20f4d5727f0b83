#!/usr/bin/env bash
# One device call (H100): the naive loop and the fuzzer in the same call, one process
# and one per core, and generate --jobs 1 against --jobs 16. Each step logs to its own file in $OUT.
#   carry: .gl .whl .carry
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
fams=""; for f in tensor-layout tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec \
    coopvec-elementwise cm2-program; do fams="$fams --family $f"; done
timeout 40 python3 bench/naive_loop.py --backend vulkan --time 20 > "$OUT/naive.log" 2>&1
timeout 60 python3 -m ctsgen fuzz --backend vulkan --time 30 --seed 1700 --database none \
    --expect-deviation setdimension-floor > "$OUT/fuzz1-tensor-layout.log" 2>&1
timeout 100 python3 -m ctsgen fuzz --backend vulkan $fams --time 60 --seed 1701 --database none \
    --expect-deviation setdimension-floor > "$OUT/fuzz1-all.log" 2>&1
timeout 160 python3 -m ctsgen fuzz --backend vulkan $fams --time 60 --workers 16 --seed 1702 --database none \
    --expect-deviation setdimension-floor > "$OUT/fuzz16-all.log" 2>&1
for j in 16 1; do
    /usr/bin/time -f "jobs $j: %e s wall, %M KB max RSS" timeout 150 python3 -m ctsgen generate --family tensor-layout \
        --count 2000 --seed 1703 --jobs $j --out /tmp/gen-$j >> "$OUT/generate.log" 2>&1
done
cmp -s /tmp/gen-1/manifest.json /tmp/gen-16/manifest.json && echo "manifests identical" >> "$OUT/generate.log"
for f in naive fuzz1-tensor-layout fuzz1-all fuzz16-all generate; do echo "== $f"; grep -vE "^fuzzing \[|^drawing|^writing|^\[w[0-9]" "$OUT/$f.log" | tail -22; done
