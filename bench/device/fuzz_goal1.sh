#!/usr/bin/env bash
# One device call (H100), issue 14 goal 1 with its baseline in the same call: the naive loop
# (bench/naive_loop.py: compile, new pipeline and dispatch per case), then one fuzz process over
# every family the H100 runs (no shrinking to do: --expect-deviation, the documented Log finding
# kept out with --keep-going), then the 16-worker session of fuzz_memory.sh (RSS sampled too).
# $OUT: device.txt (GPU, naive loop), single.log, then fuzz_memory.sh's workers.log, rss.log, gpu.log.
#   carry: .gl .whl .carry   usage: bash bench/device/fuzz_goal1.sh [SINGLE_S [SESSION_S [WORKERS [SEED]]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
S1=${1:-90}; T=${2:-300}; W=${3:-16}; SEED=${4:-4500}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
fams=$(python3 -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in families()))")
{ echo "== python3 bench/naive_loop.py --backend vulkan --time 20 (the same call's baseline)"
  timeout 60 python3 bench/naive_loop.py --backend vulkan --time 20 2>&1 | tail -1; } > "$OUT/naive.txt"
echo "== ctsgen fuzz --backend vulkan $fams --time $S1 --seed $SEED --database none --keep-going --shrink-time 20 \
--expect-deviation setdimension-floor (one process)" > "$OUT/single.log"
timeout $((S1 + 60)) python3 -m ctsgen fuzz --backend vulkan $fams --time "$S1" --seed "$SEED" --database none \
    --keep-going --shrink-time 20 --expect-deviation setdimension-floor --repro-dir /tmp/repros1 >> "$OUT/single.log" 2>&1
cat "$OUT/naive.txt"; grep -E "^fuzzed|cases/s" "$OUT/single.log" | tail -3
bash bench/device/fuzz_memory.sh "$T" "$W" "$((SEED + 1))"
