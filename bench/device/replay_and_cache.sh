#!/usr/bin/env bash
# One short device call (H100) after the campaign's fixes:
#   1. every bucket repro of bench/results/campaign-h100 replayed with today's code (the cm2-program
#      sign-of-zero buckets must pass now; SetDimension and Log must still fail, SetDimension passing
#      under --expect-deviation)
#   2. the persistent pipeline cache: one cm2-gemm pack run three times with the driver's own disk
#      cache off (__GL_SHADER_DISK_CACHE=0): our cache off, on and cold, on and warm (the warm run
#      also under --numerics h100: the refitted fp16 MMA model on a fresh seed)
#   3. a fresh-seed coopvec-program pack (issue 16) on the device
#   carry: .gl .whl .carry                usage: bash bench/device/replay_and_cache.sh
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
export __GL_SHADER_DISK_CACHE=0
summary() { grep -E "^  [A-Za-z]+ +[0-9]+$|pipeline_s|prepare_s" | tr -s ' ' | tr '\n' ' '; echo; }
echo "== 1. bucket repros"
for d in bench/results/campaign-h100/buckets/*/repro; do
    b=$(basename "$(dirname "$d")")
    printf '%-48s %s' "$b" "$(timeout 60 python3 -m ctsgen run "$d" --backend vulkan --results /tmp/r-$b.jsonl 2>&1 | summary)"
    echo
done
d=bench/results/campaign-h100/buckets/mutant-setdimension-floor/repro
printf '%-48s %s\n' "  same, --expect-deviation setdimension-floor" "$(timeout 60 python3 -m ctsgen run $d --backend vulkan \
    --expect-deviation setdimension-floor --results /tmp/r-sd.jsonl 2>&1 | summary)"
echo "== 2. pipeline cache (cm2-gemm, 600 cases)"
timeout 60 python3 -m ctsgen generate --family cm2-gemm --count 600 --seed 1801 --out /tmp/gemm --jobs 16 2>&1 | grep -E "^wrote"
for step in "off 0" "cold 1" "warm 1 --numerics h100"; do
    set -- $step
    /usr/bin/time -f "  $1: %e s wall" env CTSGEN_PIPELINE_CACHE=$2 timeout 90 python3 -m ctsgen run /tmp/gemm --backend vulkan \
        --results /tmp/gemm-$1.jsonl ${3:-} ${4:-} 2>&1 | grep -E "wall|backend:|^  [A-Za-z]+ +[0-9]+$"
done
grep -h ModelMismatch /tmp/gemm-warm.jsonl | head -3 | cut -c1-300
ls -la /tmp/pipelines
echo "== 3. coopvec-program"
if python3 -m ctsgen generate --family coopvec-program --count 400 --seed 1802 --out /tmp/cvp --jobs 16 2>&1 | grep -E "^wrote|rror"; then
    timeout 90 python3 -m ctsgen run /tmp/cvp --backend vulkan --results "$OUT/cvp.jsonl" 2>&1 | grep -vE "^running"
fi
