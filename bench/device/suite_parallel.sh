#!/usr/bin/env bash
# One device call (H100): a CTS-scale suite run with every core busy. One pack per
# family the H100 runs (COUNT cases each of the nine single-operation families, PROGRAMS of each
# program family; --cases-per-variant CPV), generated on the device, then every pack's `ctsgen run`
# started at once (one process each, each with its own device worker), twice: cold (an empty
# ctsgen pipeline cache, the driver's shader disk cache off) and warm (the cache the cold pass
# published). pack_scale.sh ran the same packs one after another: its per-run breakdown showed
# each run bound by its own single-threaded CPU work, with 15 of 16 cores idle.
# $OUT: device.txt (GPU, the naive-loop baseline), generate.log, cold.log, warm.log, top.log, profile.txt
# (one warm run alone under cProfile, if time is left).
#   carry: .gl .whl .carry   usage: bash bench/device/suite_parallel.sh [COUNT [SEED [PROGRAMS [CPV [DEADLINE_S]]]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
export __GL_SHADER_DISK_CACHE=0 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
N=${1:-10890}; SEED=${2:-3600}; NP=${3:-1000}; CPV=${4:-64}; T0=$SECONDS; DEADLINE=${5:-560}
left() { echo $((DEADLINE - (SECONDS - T0))); }
fams="tensor-layout tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec coopvec-elementwise"
fams="$fams cm2-program coopvec-program"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  echo "$N cases x 9 families + $NP x 2 programs = $((9 * N + 2 * NP)) cases, seed $SEED, $CPV cases per variant"
  echo "== python3 bench/naive_loop.py --backend vulkan --time 20 (the same call's baseline)"
  timeout 60 python3 bench/naive_loop.py --backend vulkan --time 20 2>&1 | tail -1; } > "$OUT/device.txt"
t=$SECONDS
for f in $fams; do
    n=$N; case $f in *-program) n=$NP;; esac
    echo "== ctsgen generate --family $f --count $n --seed $SEED --cases-per-variant $CPV --jobs 16" >> "$OUT/generate.log"
    timeout $(left) python3 -m ctsgen generate --family "$f" --count "$n" --seed "$SEED" --cases-per-variant "$CPV" \
        --jobs 16 --out "/tmp/s/$f" --force 2>&1 | grep -v "^drawing\|^writing" >> "$OUT/generate.log"
done
echo "generate total: $((SECONDS - t)) s" >> "$OUT/generate.log"
rm -rf "$(python3 -c 'from ctsgen.backends.pipeline_cache import default_cache_dir; print(default_cache_dir())')" \
    "$HOME/.cache/nvidia" 2>/dev/null
(while sleep 5; do echo "== $((SECONDS - T0)) s"; top -bn1 | head -4 | tail -2; nvidia-smi \
    --query-gpu=utilization.gpu --format=csv,noheader; done) > "$OUT/top.log" 2>&1 &
TOP=$!
for pass in cold warm; do
    [ "$(left)" -gt 20 ] || { echo "$pass skipped: deadline" >> "$OUT/$pass.log"; continue; }
    t=$SECONDS; pids=""
    for f in $fams; do
        [ -d "/tmp/s/$f" ] || continue
        ( /usr/bin/time -f "wall %e s, max RSS %M KB" timeout $(left) python3 -m ctsgen run "/tmp/s/$f" --backend vulkan \
            --results "/tmp/r-$pass-$f.jsonl" --expect-deviation setdimension-floor --quiet > "/tmp/$pass-$f.log" 2>&1 ) &
        pids="$pids $!"
    done
    wait $pids
    echo "$pass: all $(echo $fams | wc -w) packs at once: $((SECONDS - t)) s wall" >> "$OUT/$pass.log"
    for f in $fams; do echo "== [$pass] ctsgen run /tmp/s/$f"; cat "/tmp/$pass-$f.log"; done >> "$OUT/$pass.log"
done
kill $TOP 2>/dev/null
if [ "$(left)" -gt 40 ]; then  # where a run's time outside its stages goes: one warm run alone, profiled
    timeout $(left) python3 -m cProfile -o /tmp/run.prof -m ctsgen run /tmp/s/cm2-elementwise --backend vulkan \
        --results /tmp/r-prof.jsonl --quiet > "$OUT/profile.txt" 2>&1
    python3 -c "import pstats; pstats.Stats('/tmp/run.prof').sort_stats('cumulative').print_stats(45)" >> "$OUT/profile.txt" 2>&1
fi
grep -E "generate total" "$OUT/generate.log"; grep -hE "at once|^  [A-Z][a-zA-Z]+ +[0-9]+$" "$OUT/cold.log" "$OUT/warm.log"
exit 0
