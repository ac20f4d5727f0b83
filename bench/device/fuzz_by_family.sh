#!/usr/bin/env bash
# One device call (H100), issue 14: where the fuzzer's time goes per family (bench/throughput.py:
# naive loop then fuzz, in-process Vulkan backend, --time each), then --workers 16 over the
# single-operation families only (the program families left out), to separate their rate from
# the programs' pipeline-bound one. The documented SetDimension deviation is expected.
#   carry: .gl .whl .carry   usage: bash bench/device/fuzz_by_family.sh [SECONDS_PER_FAMILY [SESSION_SECONDS]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
T=${1:-10}; S=${2:-120}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > "$OUT/device.txt"
echo "== python3 bench/throughput.py --backend vulkan --family all --time $T --out \$OUT/by-family" > "$OUT/by-family.log"
timeout 400 python3 bench/throughput.py --backend vulkan --family all --time "$T" --out "$OUT/by-family" \
    >> "$OUT/by-family.log" 2>&1
fams=""; for f in tensor-layout tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec \
    coopvec-elementwise; do fams="$fams --family $f"; done
echo "== ctsgen fuzz --backend vulkan $fams --time $S --workers 16 --seed 3200 --database none --keep-going" \
     "--shrink-time 20 --expect-deviation setdimension-floor" > "$OUT/workers-single-op.log"
timeout $((S + 90)) python3 -m ctsgen fuzz --backend vulkan $fams --time "$S" --workers 16 --seed 3200 \
    --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor \
    --repro-dir /tmp/repros >> "$OUT/workers-single-op.log" 2>&1
echo "exit $?" >> "$OUT/workers-single-op.log"
[ -d /tmp/repros ] && tar czf "$OUT/repros.tgz" -C /tmp repros
cat "$OUT/by-family/throughput.md" 2>/dev/null || tail -30 "$OUT/by-family.log"
grep -E "together|found:|^  |exit" "$OUT/workers-single-op.log" | grep -v "^\[worker" | tail -16
exit 0
