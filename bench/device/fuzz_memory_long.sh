#!/usr/bin/env bash
# Issue 14 goal 5 over a whole 30-minute fuzz session, across several device calls (a command is
# capped at 10 minutes; a process started in its own session runs on while the machine is held).
#   bash bench/device/fuzz_memory_long.sh start [SESSION_S [WORKERS [SEED]]]   first call: starts it
#   bash bench/device/fuzz_memory_long.sh watch [SECONDS]                       later calls: waits, copies
# `start` copies the repo to /tmp/mem-repo (later calls replace the working tree) and runs from
# there `ctsgen fuzz --workers W` over every family the H100 runs, as fuzz_memory.sh does, plus a
# sampler writing every 30 s the RSS of the fuzz processes and of the device workers (the
# supervised Vulkan backends, which keep at most KEPT_PIPELINES dispatched pipelines).
# Each call copies the logs so far to $OUT: device.txt, workers.log, rss.log, gpu.log.
#   carry: .gl .whl .carry
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
M=/tmp/mem
copy() { cp "$M"/*.log "$M"/device.txt "$OUT/" 2>/dev/null; }
summary() {
    awk '/^t=/ {t=$0} /fuzz:|device-worker:/ {print t, $0}' "$M/rss.log" | awk 'NR<=2 || NR%10==0' | tail -14
    grep -E "together|^exit" "$M/workers.log" | tail -3
}
case "${1:-}" in
start)
    T=${2:-1800}; W=${3:-16}; SEED=${4:-4100}
    rm -rf /tmp/mem-repo "$M" && mkdir -p "$M" && cp -r . /tmp/mem-repo
    fams=$(python3 -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in families()))")
    common="--backend vulkan $fams --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor"
    { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc --all; git -C /tmp/mem-repo log -1 --format=%h 2>/dev/null
      echo "started $(date -u +%FT%TZ): ctsgen fuzz $common --time $T --workers $W --seed $SEED"; } > "$M/device.txt"
    cat > "$M/session.sh" <<EOF
cd /tmp/mem-repo
export PYTHONPATH=/tmp/site:/tmp/mem-repo
timeout $((T + 120)) python3 -m ctsgen fuzz $common --time $T --workers $W --seed $SEED --repro-dir /tmp/repros \
    > $M/workers.log 2>&1 &
pid=\$!
sample() { ps -eo rss=,pid=,args= | awk -v k="\$1" -v pat="\$2" '\$0 ~ pat && !/awk/ {n++; s+=\$1; if (\$1>m) {m=\$1; p=\$2}}
    END {printf "  %s: procs=%d rss_sum_mb=%.0f rss_max_mb=%.0f (pid %s)\n", k, n, s/1024, m/1024, p}'; }
( t0=\$SECONDS; while kill -0 \$pid 2>/dev/null; do
    echo "t=\$((SECONDS - t0)) s"; sample fuzz "-m ctsgen fuzz"; sample device-worker "multiprocessing"
    sleep 30; done ) > $M/rss.log 2>&1 &
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 30 > $M/gpu.log 2>&1 &
smi=\$!
wait \$pid; echo "exit \$? at \$(date -u +%FT%TZ)" >> $M/workers.log
kill \$smi
EOF
    setsid nohup bash "$M/session.sh" > /dev/null 2>&1 < /dev/null &
    sleep 75; copy; summary ;;
watch)
    S=${2:-560}; t=$SECONDS
    while [ $((SECONDS - t)) -lt "$S" ] && ! grep -q "^exit" "$M/workers.log" 2>/dev/null; do sleep 10; done
    copy; summary ;;
*) echo "usage: $0 start [SESSION_S [WORKERS [SEED]]] | watch [SECONDS]" >&2; exit 2 ;;
esac
exit 0
