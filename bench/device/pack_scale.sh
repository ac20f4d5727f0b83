#!/usr/bin/env bash
# One device call (H100), issue 14 goal 4: CTS scale. One pack per family the H100 runs, COUNT cases
# each (default 9,091: 100,001 cases over 11 families), generated on the device with --jobs 16, then
# run one pack after another twice: cold (an empty ctsgen pipeline cache and the driver's shader disk
# cache off) and warm (the same process-per-pack runs, reading the cache the cold runs published).
# Each step's time limit stops at a deadline so the logs come back inside the call.
#   carry: .gl .whl .carry   usage: bash bench/device/pack_scale.sh [COUNT [SEED]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
export PATH=$PWD/.carry/bin:$PATH CTSGEN_GLSLANG_LIBRARY=$(ls $PWD/.carry/glslang/libslang-glslang-*.so)
export CTSGEN_CACHE_DIR=/tmp/ctsgen-cache __GL_SHADER_DISK_CACHE=0
N=${1:-9091}; SEED=${2:-3500}; T0=$SECONDS; DEADLINE=560
left() { local l=$((DEADLINE - (SECONDS - T0))); echo $((l > 5 ? l : 5)); }
fams="tensor-layout tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec coopvec-elementwise"
fams="$fams cm2-program coopvec-program"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; echo "$N cases x 11 families, seed $SEED"; } \
    > "$OUT/device.txt"
t=$SECONDS
for f in $fams; do
    echo "== ctsgen generate --family $f --count $N --seed $SEED --jobs 16 --out /tmp/p/$f" >> "$OUT/generate.log"
    timeout $(left) python3 -m ctsgen generate --family "$f" --count "$N" --seed "$SEED" --jobs 16 --out "/tmp/p/$f" \
        2>&1 | grep -v "^drawing\|^writing" >> "$OUT/generate.log"
done
echo "generate total: $((SECONDS - t)) s" >> "$OUT/generate.log"
rm -rf "$(python3 -c 'from ctsgen.backends.pipeline_cache import default_cache_dir; print(default_cache_dir())')" \
    "$HOME/.cache/nvidia" 2>/dev/null  # earlier calls on this machine may have filled both
for pass in cold warm; do
    t=$SECONDS
    for f in $fams; do
        echo "== [$pass] ctsgen run /tmp/p/$f --backend vulkan --expect-deviation setdimension-floor --quiet" >> "$OUT/$pass.log"
        /usr/bin/time -f "wall %e s, max RSS %M KB" timeout $(left) python3 -m ctsgen run "/tmp/p/$f" --backend vulkan \
            --results "/tmp/r-$pass-$f.jsonl" --expect-deviation setdimension-floor --quiet >> "$OUT/$pass.log" 2>&1
    done
    echo "$pass total: $((SECONDS - t)) s" >> "$OUT/$pass.log"
done
grep -E "wrote|total" "$OUT/generate.log" | tail -13
for pass in cold warm; do grep -E "^==|wall|total|Pass|pipelines" "$OUT/$pass.log" | tail -40; done
exit 0
