#!/usr/bin/env bash
# One device call (one GPU; issue 44, calls 1 and 2): kernels and compiler routes on NVIDIA's driver.
#  1. `fuzz --family coopmat-kernel --workers 16` from a fresh seed, the shipped NVIDIA expectations as
#     --baseline, --keep-going (kernels: loops carrying matrices, branches, calls, arrays, Workgroup memory
#     handed between subgroups with barriers, element access; docs/architecture.md "Kernels");
#  2. a pack of 600 kernel cases drawn for the live device's profile (`ctsgen profile`), run with `ctsgen run`;
#  3. `fuzz --routes all` over every family the card runs (one process: --routes takes no --workers),
#     each batch along glslang, glslang-O1, slang (where the family has a Slang source), opt-O, opt-Os,
#     opt-loops: a disagreement is a route finding, an invalid module a toolchain finding.
# $OUT: device.txt, profile.txt, fuzz-kernels.log, run-kernels.log, fuzz-routes.log (each ends "exit N"),
# summary.txt, repros.tgz.
#   carry: .gl .whl .carry   usage: bash bench/device/kernels_routes.sh [KERNEL_S [ROUTES_S [SEED]]]
#   BACKEND=reference W=2 OUT=/tmp/kr bash bench/device/kernels_routes.sh 20 20 1   checks the script here, on the CPU.
set -uo pipefail
BACKEND=${BACKEND:-vulkan}; W=${W:-16}; OUT=${OUT:-/tmp/kernels-routes}; mkdir -p "$OUT"
if [ "$BACKEND" = vulkan ]; then
    . bench/device/setup.sh >/dev/null 2>&1
    export CTSGEN_SLANG_LIBRARY=$(ls "$PWD"/.carry/slang/libslang-compiler.so*)
fi
KT=${1:-120}; RT=${2:-120}; SEED=${3:-$RANDOM}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee "$OUT/device.txt" || echo "no GPU: backend $BACKEND" | tee "$OUT/device.txt"
python3 -m ctsgen profile --out "$OUT/profile.txt" > /dev/null 2>&1 || cp ctsgen/device/profiles/nvidia-h100-driver580.txt "$OUT/profile.txt"
python3 -m ctsgen doctor 2>&1 | grep -i -A12 "route" | head -14 | tee -a "$OUT/summary.txt"
BASELINE=expectations/nvidia-h100-580.csv
# the shipped NVIDIA expectations judge NVIDIA's documented deviations; the reference has none
base=(--baseline "$BASELINE"); [ "$BACKEND" = vulkan ] || base=()

echo "== ctsgen fuzz --backend $BACKEND --family coopmat-kernel --time $KT --seed $SEED --workers $W --database none" \
     "--keep-going --baseline $BASELINE" | tee -a "$OUT/summary.txt"
timeout $((KT + 120)) python3 -m ctsgen fuzz --backend "$BACKEND" --family coopmat-kernel --time "$KT" --seed "$SEED" \
    --workers "$W" --database none --keep-going ${base[@]+"${base[@]}"} --repro-dir /tmp/repros/kernels \
    > "$OUT/fuzz-kernels.log" 2>&1
echo "exit $?" >> "$OUT/fuzz-kernels.log"
grep -v "^fuzzing \[" "$OUT/fuzz-kernels.log" | tail -30 | tee -a "$OUT/summary.txt"

echo "== ctsgen generate --family coopmat-kernel --count 600 --seed $SEED --profile PROFILE; ctsgen run --backend $BACKEND" \
     "--baseline $BASELINE" | tee -a "$OUT/summary.txt"
timeout 200 python3 -m ctsgen generate --family coopmat-kernel --count 600 --seed "$SEED" --profile "$OUT/profile.txt" \
    --out "$OUT/kernel-pack" --jobs "$W" --force > "$OUT/run-kernels.log" 2>&1
timeout 200 python3 -m ctsgen run "$OUT/kernel-pack" --backend "$BACKEND" ${base[@]+"${base[@]}"} >> "$OUT/run-kernels.log" 2>&1
echo "exit $?" >> "$OUT/run-kernels.log"
tail -22 "$OUT/run-kernels.log" | tee -a "$OUT/summary.txt"

FAMILIES=$(python3 -c "
from ctsgen.device.profile import load_profile
from ctsgen.families.gating import families_it_runs
print(' '.join('--family ' + f for f in families_it_runs(load_profile('$OUT/profile.txt'))))")
echo "== ctsgen fuzz --backend $BACKEND --routes all $FAMILIES --time $RT --seed $SEED --database none --keep-going" \
     "--baseline $BASELINE" | tee -a "$OUT/summary.txt"
timeout $((RT + 150)) python3 -m ctsgen fuzz --backend "$BACKEND" --routes all $FAMILIES --time "$RT" --seed "$SEED" \
    --database none --keep-going ${base[@]+"${base[@]}"} --repro-dir /tmp/repros/routes > "$OUT/fuzz-routes.log" 2>&1
echo "exit $?" >> "$OUT/fuzz-routes.log"
grep -v "^fuzzing \[" "$OUT/fuzz-routes.log" | tail -40 | tee -a "$OUT/summary.txt"
[ -d /tmp/repros ] && tar czf "$OUT/repros.tgz" -C /tmp repros
rm -rf "$OUT/kernel-pack"  # the device tool returns few files
exit 0
