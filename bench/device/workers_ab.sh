#!/usr/bin/env bash
# One device call (H100): fuzz sessions that differ in worker count or pipeline cache, one after
# another with the same seed, each sampled every 10 s for CPU use (top) and resident memory (the
# fuzz processes, the device workers). Answers: are 16 workers CPU-bound on 16 cores, and do the
# device workers' memory grow with their VkPipelineCache (CTSGEN_PIPELINE_CACHE=0 turns it off).
# $OUT: runs.log (naive loop, each session's summary), samples.log.
#   carry: .gl .whl .carry   usage: bash bench/device/workers_ab.sh SECONDS SEED LABEL:WORKERS:CACHE ...
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
T=$1; SEED=$2; shift 2
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
fams=$(python3 -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in families()))")
common="--backend vulkan $fams --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc --all
  echo "== python3 bench/naive_loop.py --backend vulkan --time 20"
  timeout 60 python3 bench/naive_loop.py --backend vulkan --time 20 2>&1 | tail -1; } > "$OUT/runs.log"
busy() {  # percent of all cores busy over one second (/proc/stat)
    read -r _ a1 b1 c1 d1 e1 f1 g1 h1 _ < /proc/stat; sleep 1; read -r _ a2 b2 c2 d2 e2 f2 g2 h2 _ < /proc/stat
    idle=$(( (d2 + e2) - (d1 + e1) )); total=$(( (a2+b2+c2+d2+e2+f2+g2+h2) - (a1+b1+c1+d1+e1+f1+g1+h1) ))
    echo $(( 100 * (total - idle) / total ))
}
sample() {  # kind, awk pattern over "rss pid args": count, sum, median of the processes' RSS
    ps -eo rss=,pid=,args= | awk -v k="$1" -v pat="$2" '$0 ~ pat && !/awk/ {print $1}' | sort -n |
        awk -v k="$1" '{a[NR]=$1; s+=$1} END {printf " %s n=%d sum_mb=%.0f median_mb=%.0f max_mb=%.0f", k, NR, s/1024, a[int((NR+1)/2)]/1024, a[NR]/1024}'
}
for spec in "$@"; do
    IFS=: read -r label w cache <<< "$spec"
    echo "== [$label] CTSGEN_PIPELINE_CACHE=$cache ctsgen fuzz $common --time $T --workers $w --seed $SEED" >> "$OUT/runs.log"
    CTSGEN_PIPELINE_CACHE=$cache timeout $((T + 120)) python3 -m ctsgen fuzz $common --time "$T" --workers "$w" \
        --seed "$SEED" --repro-dir "/tmp/repros-$label" > "/tmp/$label.log" 2>&1 &
    pid=$!; t0=$SECONDS
    while kill -0 $pid 2>/dev/null; do
        sleep 10
        cpu=$(busy)
        echo "[$label] t=$((SECONDS - t0)) s cpu_busy=${cpu}%$(sample fuzz '-m ctsgen fuzz')$(sample device 'spawn_main')" >> "$OUT/samples.log"
    done
    grep -v "^\[worker\|^fuzzing" "/tmp/$label.log" >> "$OUT/runs.log"
done
grep -E "^==|together|^  (draw|data|pipeline)" "$OUT/runs.log"
awk '{split($4, a, "="); c[$1] += a[2] + 0; n[$1]++} END {for (k in c) printf "%s mean cpu_busy %.0f%% over %d samples\n", k, c[k] / n[k], n[k]}' "$OUT/samples.log"
