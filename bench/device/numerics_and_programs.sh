#!/usr/bin/env bash
# One device call (H100): the device numeric-model fit (issue 15) and the cm2-program family
# (issue 16) on fresh seeds. Packs are generated on the device with the carried glslang library
# and spirv-val (.carry/), 16 jobs. Everything it reports goes to $OUT (8 files at most).
#   carry: .gl .whl .carry          usage: bash bench/device/numerics_and_programs.sh [numerics|programs]
set -uo pipefail
. bench/device/setup.sh
P=/tmp/packs; mkdir -p $P
gen() { timeout 240 python3 -m ctsgen generate --family "$1" --count "$2" --seed "$3" --out "$P/$1" --jobs 16 2>&1 | grep -E "^wrote|error"; }
case "${1:-numerics}" in
numerics)
    for spec in "cm2-gemm 2000 1501" "coopvec 2000 1502" "cm2-convert 2000 1503"; do
        set -- $spec; f=$1
        gen $spec
        timeout 150 python3 bench/dump_device_outputs.py "$P/$f" "$P/$f.npz" --backend vulkan
        timeout 100 python3 bench/fit_numeric_model.py "$P/$f" "$P/$f.npz" > "$OUT/fit-$f.md"; head -5 "$OUT/fit-$f.md"
        timeout 150 python3 -m ctsgen run "$P/$f" --backend vulkan --numerics h100 --results "$OUT/run-$f.jsonl" 2>&1 \
            | grep -vE "^running|^  [a-z+-]+ +[0-9.]+ s"
    done ;;
programs)
    gen cm2-program 5000 1504
    timeout 200 python3 -m ctsgen run "$P/cm2-program" --backend vulkan --results "$OUT/run-cm2-program.jsonl" 2>&1 \
        | grep -vE "^running"
    timeout 200 python3 -m ctsgen fuzz --backend vulkan --family cm2-program --time 150 --seed 1505 --database none \
        --keep-going 2>&1 | tail -25 ;;
esac
