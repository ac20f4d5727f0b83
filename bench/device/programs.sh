#!/usr/bin/env bash
# One device call (H100): fresh-seed programs of both program families, fuzzed on the
# GPU by 12 worker processes each (every example is a new program run with ~10 cases of its
# run-time parameters). The documented SetDimension deviation is expected; anything else fails.
# Shaders are compiled on the device with the carried glslang library (.carry/).
#   carry: .gl .whl .carry   usage: bash bench/device/programs.sh [SECONDS_PER_FAMILY [SEED_CM2 SEED_COOPVEC]]
set -uo pipefail
. bench/device/setup.sh
T=${1:-70}; SEED_CM2=${2:-2101}; SEED_CVP=${3:-2102}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
for spec in "cm2-program $SEED_CM2" "coopvec-program $SEED_CVP"; do
    set -- $spec
    echo "== ctsgen fuzz --backend vulkan --family $1 --time $T --seed $2 --workers 12 --database none" \
         "--keep-going --shrink-time 20 --expect-deviation setdimension-floor --repro-dir /tmp/repros/$1"
    timeout $((T + 90)) python3 -m ctsgen fuzz --backend vulkan --family "$1" --time "$T" --seed "$2" --workers 12 \
        --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor \
        --repro-dir "/tmp/repros/$1" > "$OUT/fuzz-$1.log" 2>&1
    echo "exit $?" >> "$OUT/fuzz-$1.log"
    grep -E "fuzzed|failure|found|exit" "$OUT/fuzz-$1.log" | tail -30
done
[ -d /tmp/repros ] && tar czf "$OUT/repros.tgz" -C /tmp repros
exit 0
