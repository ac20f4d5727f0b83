#!/usr/bin/env bash
# One device call (H100), issue 14: what the fuzz workers' pipeline time is made of. First the
# driver's build time per drawn variant, per family (bench/pipeline_build_times.py, one process per
# family at once); then --workers 16 over the single-operation families for 60 s twice, with the
# driver's shader disk cache on (default) and off (__GL_SHADER_DISK_CACHE=0), a `top` snapshot in each.
#   carry: .gl .whl .carry   usage: bash bench/device/build_times.sh [BUILD_SECONDS [SESSION_SECONDS]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
B=${1:-150}; S=${2:-60}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > "$OUT/device.txt"
echo "== python3 bench/pipeline_build_times.py --family all --variants 150 --time $B --out \$OUT/builds" > "$OUT/builds.log"
timeout $((B + 60)) python3 bench/pipeline_build_times.py --family all --variants 150 --time "$B" --out "$OUT/builds" \
    >> "$OUT/builds.log" 2>&1
fams=""; for f in tensor-layout tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec \
    coopvec-elementwise; do fams="$fams --family $f"; done
for cache in 1 0; do
    log="$OUT/workers-disk-cache-$cache.log"
    echo "== __GL_SHADER_DISK_CACHE=$cache ctsgen fuzz --backend vulkan $fams --time $S --workers 16 --seed 3300" \
         "--database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor" > "$log"
    __GL_SHADER_DISK_CACHE=$cache timeout $((S + 90)) python3 -m ctsgen fuzz --backend vulkan $fams --time "$S" \
        --workers 16 --seed 3300 --database none --keep-going --shrink-time 20 \
        --expect-deviation setdimension-floor --repro-dir /tmp/repros >> "$log" 2>&1 &
    pid=$!
    sleep $((S / 2)); { echo "== top at $((S / 2)) s"; top -b -n 1 -w 200 | head -45; } >> "$OUT/top.log"
    wait $pid; echo "exit $?" >> "$log"
done
cat "$OUT/builds/builds.md" 2>/dev/null || tail -20 "$OUT/builds.log"
for cache in 1 0; do grep -E "together|exit" "$OUT/workers-disk-cache-$cache.log" | grep -v "^\[worker"; done
exit 0
