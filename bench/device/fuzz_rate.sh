#!/usr/bin/env bash
# One device call (H100): the fuzzer's end-to-end rate over every family the
# device runs, against the naive loop in the same call; one process, then a 5-minute session of
# --workers 16 (one per core) with resident memory and GPU utilisation sampled every 30 s / 5 s.
# The documented SetDimension deviation is expected; --keep-going so a failure does not stop a worker.
#   carry: .gl .whl .carry   usage: bash bench/device/fuzz_rate.sh [SESSION_SECONDS [WORKERS [SEED]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
T=${1:-300}; W=${2:-16}; SEED=${3:-3100}
fams=$(python3 -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in families()))")
common="--backend vulkan $fams --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; git log -1 --format=%H 2>/dev/null; } \
    > "$OUT/device.txt"
echo "== python3 bench/naive_loop.py --backend vulkan --time 20" > "$OUT/one-process.log"
timeout 60 python3 bench/naive_loop.py --backend vulkan --time 20 >> "$OUT/one-process.log" 2>&1
echo "== ctsgen fuzz $common --time 60 --seed $SEED" >> "$OUT/one-process.log"
timeout 150 python3 -m ctsgen fuzz $common --time 60 --seed "$SEED" --repro-dir /tmp/repros/one \
    >> "$OUT/one-process.log" 2>&1
echo "exit $?" >> "$OUT/one-process.log"
echo "== ctsgen fuzz $common --time $T --workers $W --seed $((SEED + 1))" > "$OUT/workers.log"
timeout $((T + 120)) python3 -m ctsgen fuzz $common --time "$T" --workers "$W" --seed $((SEED + 1)) \
    --repro-dir /tmp/repros/workers >> "$OUT/workers.log" 2>&1 &
pid=$!
( while kill -0 $pid 2>/dev/null; do
    echo "t=$SECONDS $(ps -eo rss,args | awk '/-m ctsgen fuzz/ && !/awk/ {n++; s+=$1; if ($1>m) m=$1} END {printf "procs=%d rss_sum_mb=%.0f rss_max_mb=%.0f", n, s/1024, m/1024}')"
    sleep 30; done ) > "$OUT/rss.log" 2>&1 &
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 5 > "$OUT/gpu.log" 2>&1 &
smi=$!
wait $pid; echo "exit $?" >> "$OUT/workers.log"
kill $smi 2>/dev/null
[ -d /tmp/repros ] && tar czf "$OUT/repros.tgz" -C /tmp repros
grep -vE "^fuzzing \[|^\[worker [0-9]+\]   " "$OUT/one-process.log" | tail -25
grep -E "together|found|^  |exit" "$OUT/workers.log" | grep -v "^\[worker" | tail -20
grep -c "found:" "$OUT/workers.log"; tail -3 "$OUT/rss.log"
exit 0
