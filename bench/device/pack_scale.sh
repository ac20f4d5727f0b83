#!/usr/bin/env bash
# One device call (H100): CTS scale. One pack per family the H100 runs, COUNT cases
# each of the nine single-operation families and PROGRAMS of each program family (the first call,
# 9,091 of each, spent the call's 600 s generating cm2-program: call1/), generated on the device, then
# run one pack after another twice: cold (an empty ctsgen pipeline cache and the driver's shader disk
# cache off) and warm (the same process-per-pack runs, reading the cache the cold runs published).
# Each step's time limit stops at a deadline so the logs come back inside the call. A 20 s naive loop
# (compile, new pipeline and dispatch per case) first gives the same call's baseline.
# CPV (generate --cases-per-variant, default 8) trades variants, and so cold builds, for cases per variant.
#   carry: .gl .whl .carry   usage: bash bench/device/pack_scale.sh [COUNT [SEED [PROGRAMS [CPV [DEADLINE_S]]]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
export __GL_SHADER_DISK_CACHE=0
N=${1:-9091}; SEED=${2:-3500}; NP=${3:-1000}; CPV=${4:-8}; T0=$SECONDS; DEADLINE=${5:-560}
left() { echo $((DEADLINE - (SECONDS - T0))); }  # a step starts only while this is > 5 (see `go`)
go() { [ "$(left)" -gt 5 ] || { echo "skipped: deadline" >> "$1"; return 1; }; }
fams="tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec coopvec-elementwise"
fams="$fams cm2-program coopvec-program tensor-layout"  # tensor-layout's slowest builds take minutes: last
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; echo "$N cases x 9 families, $NP x 2 programs, seed $SEED, $CPV cases per variant"; } \
    > "$OUT/device.txt"
echo "== python3 bench/naive_loop.py --backend vulkan --time 20 (the same call's baseline)" >> "$OUT/device.txt"
timeout 60 python3 bench/naive_loop.py --backend vulkan --time 20 2>&1 | tail -3 >> "$OUT/device.txt"
t=$SECONDS
for f in $fams; do
    n=$N; case $f in *-program) n=$NP;; esac
    go "$OUT/generate.log" || break
    echo "== ctsgen generate --family $f --count $n --seed $SEED --cases-per-variant $CPV --jobs 16 --out /tmp/p/$f" \
        >> "$OUT/generate.log"
    timeout $(left) python3 -m ctsgen generate --family "$f" --count "$n" --seed "$SEED" --cases-per-variant "$CPV" \
        --jobs 16 --out "/tmp/p/$f" --force \
        2>&1 | grep -v "^drawing\|^writing" >> "$OUT/generate.log"
done
echo "generate total: $((SECONDS - t)) s" >> "$OUT/generate.log"
rm -rf "$(python3 -c 'from ctsgen.backends.pipeline_cache import default_cache_dir; print(default_cache_dir())')" \
    "$HOME/.cache/nvidia" 2>/dev/null  # earlier calls on this machine may have filled both
for pass in cold warm; do
    t=$SECONDS
    for f in $fams; do
        [ -d "/tmp/p/$f" ] || continue
        go "$OUT/$pass.log" || break
        echo "== [$pass] ctsgen run /tmp/p/$f --backend vulkan --expect-deviation setdimension-floor --quiet" >> "$OUT/$pass.log"
        /usr/bin/time -f "wall %e s, max RSS %M KB" timeout $(left) python3 -m ctsgen run "/tmp/p/$f" --backend vulkan \
            --results "/tmp/r-$pass-$f.jsonl" --expect-deviation setdimension-floor --quiet >> "$OUT/$pass.log" 2>&1
    done
    echo "$pass total: $((SECONDS - t)) s" >> "$OUT/$pass.log"
done
grep -E "wrote|total" "$OUT/generate.log" | tail -13
for pass in cold warm; do grep -E "^==|wall|total|Pass|pipelines" "$OUT/$pass.log" | tail -40; done
exit 0
