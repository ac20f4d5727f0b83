#!/usr/bin/env bash
# One device call (H100): resident memory over the longest fuzz session one call
# allows (the device tool caps a command at 10 minutes). `ctsgen fuzz --workers W` over every family
# the H100 runs; every 20 s the RSS of each fuzz process and of each device worker process (the
# supervised Vulkan backend, which keeps every pipeline it builds) is written to rss.log, one line
# per process kind (count, sum, max, and the largest process's pid so its trend can be followed).
# $OUT: device.txt, workers.log, rss.log, gpu.log.
#   carry: .gl .whl .carry   usage: bash bench/device/fuzz_memory.sh [SESSION_SECONDS [WORKERS [SEED]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
T=${1:-480}; W=${2:-16}; SEED=${3:-3700}
fams=$(python3 -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in families()))")
common="--backend vulkan $fams --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc --all; } > "$OUT/device.txt"
echo "== ctsgen fuzz $common --time $T --workers $W --seed $SEED" > "$OUT/workers.log"
timeout $((T + 90)) python3 -m ctsgen fuzz $common --time "$T" --workers "$W" --seed "$SEED" \
    --repro-dir /tmp/repros >> "$OUT/workers.log" 2>&1 &
pid=$!
sample() {  # kind, awk pattern over "rss pid args"
    ps -eo rss=,pid=,args= | awk -v k="$1" -v pat="$2" '$0 ~ pat && !/awk/ {n++; s+=$1; if ($1>m) {m=$1; p=$2}}
        END {printf "  %s: procs=%d rss_sum_mb=%.0f rss_max_mb=%.0f (pid %s)\n", k, n, s/1024, m/1024, p}'
}
( t0=$SECONDS; while kill -0 $pid 2>/dev/null; do
    echo "t=$((SECONDS - t0)) s"; sample fuzz "-m ctsgen fuzz"; sample device-worker "multiprocessing"
    sleep 20; done ) > "$OUT/rss.log" 2>&1 &
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 10 > "$OUT/gpu.log" 2>&1 &
smi=$!
wait $pid; echo "exit $?" >> "$OUT/workers.log"
kill $smi 2>/dev/null
grep -E "together|found:|^  [a-z]|exit" "$OUT/workers.log" | grep -v "^\[worker" | tail -16
awk '/^t=/ {t=$0} /fuzz:|device-worker:/ {print t, $0}' "$OUT/rss.log" | awk 'NR<=2 || NR%6==0' | tail -20
exit 0
