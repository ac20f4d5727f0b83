#!/usr/bin/env bash
# One device call (H100): the tensor and khr routes of cm2-gemm and cm2-program agree on the device (the same
# matrices through tensor layouts and through OpCooperativeMatrixLoadKHR / StoreKHR, bench/khr_route_agreement.py),
# then each family, both routes drawn, fuzzed from a fresh seed by 12 workers. The documented SetDimension
# deviation is expected of programs (their tensor loads); anything else fails.
# $OUT: device.txt, agreement.log, fuzz-<family>.log (each ends "exit N"), summary.txt.
#   carry: .gl .whl .carry   usage: bash bench/device/khr_routes.sh [PAIRS [SECONDS_PER_FAMILY [SEED]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
PAIRS=${1:-150}; T=${2:-90}; SEED=${3:-$RANDOM}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
echo "== python3 bench/khr_route_agreement.py --backend vulkan --count $PAIRS --seed $SEED" | tee "$OUT/agreement.log"
timeout 300 python3 bench/khr_route_agreement.py --backend vulkan --count "$PAIRS" --seed "$SEED" >> "$OUT/agreement.log" 2>&1
echo "exit $?" >> "$OUT/agreement.log"
tail -4 "$OUT/agreement.log" | tee "$OUT/summary.txt"
for f in cm2-gemm cm2-program; do
    dev=(); [ "$f" = cm2-program ] && dev=(--expect-deviation setdimension-floor)
    echo "== ctsgen fuzz --backend vulkan --family $f --time $T --seed $SEED --workers 12 --database none" \
         "--keep-going --shrink-time 20 ${dev[*]}" | tee -a "$OUT/summary.txt"
    timeout $((T + 90)) python3 -m ctsgen fuzz --backend vulkan --family "$f" --time "$T" --seed "$SEED" --workers 12 \
        --database none --keep-going --shrink-time 20 ${dev[@]+"${dev[@]}"} \
        --repro-dir "/tmp/repros/$f" > "$OUT/fuzz-$f.log" 2>&1
    echo "exit $?" >> "$OUT/fuzz-$f.log"
    grep -E "fuzzed|failure|found|exit" "$OUT/fuzz-$f.log" | tail -8 | tee -a "$OUT/summary.txt"
done
[ -d /tmp/repros ] && tar czf "$OUT/repros.tgz" -C /tmp repros
exit 0
