#!/usr/bin/env bash
# One device call (H100): cm2-program failure repros (issue 16 triage), then the throughput
# benchmark (issue 14): every family's fuzz against the naive loop in the same run, generate
# --jobs 1 against --jobs 16, and fuzz with one worker process per core. Output in $OUT.
#   carry: .gl .whl .carry
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
echo "== cm2-program fuzz, seed 1505 (the seed that failed in numerics_and_programs.sh programs)"
timeout 120 python3 -m ctsgen fuzz --backend vulkan --family cm2-program --time 60 --seed 1505 --database none \
    --keep-going 2>&1 | grep -vE "^fuzzing \[" | tail -20
tar czf "$OUT/cm2-program-repros.tgz" .ctsgen/repros 2>/dev/null
echo "== throughput"
timeout 330 python3 bench/throughput.py --backend vulkan --family all --time 12 --generate 2000 --jobs 16 \
    --out "$OUT/throughput" 2>&1 | grep -vE "^fuzzing \[|^drawing|^writing"
echo "== fuzz, 16 worker processes, every family the H100 runs (decode-vector: no extension), 60 s"
fams=""; for f in tensor-layout tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec \
    coopvec-elementwise cm2-program; do fams="$fams --family $f"; done
timeout 120 python3 -m ctsgen fuzz --backend vulkan $fams --time 60 --workers 16 --seed 1600 \
    --database none --expect-deviation setdimension-floor 2>&1 | grep -vE "^fuzzing \[|^\[w" | tail -30
