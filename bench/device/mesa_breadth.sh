#!/usr/bin/env bash
# One device call (one GPU): the GPU checks of Mesa breadth (docs/validation.md "Mesa breadth on the
# H100"), each an existing device script run with a share of the call's time, outputs gathered:
#   1. ci_expectations.sh: every family drawn from a fresh SEED, run with the shipped NVIDIA expectations
#      (exit 0 each), and the planted mutant (exit 1);
#   2. coopmat_khr.sh: the coopmat-khr family on the live KHR property list, a pack and a fuzz;
#   3. khr_routes.sh: the tensor and khr routes of cm2-gemm and cm2-program agree, then both routes fuzzed;
#   4. subgroup_tiles.sh: Subgroup-scope cases in workgroups of several subgroups, packs and fuzz.
# $OUT: summary.txt (each script's summary, in order), all.tgz (every script's own $OUT files).
#   carry: .gl .whl .carry   usage: bash bench/device/mesa_breadth.sh [SEED]
set -uo pipefail
SEED=${1:-$(( $(date +%s) % 1000000 ))}
root=/tmp/mesa-breadth; rm -rf "$root"; mkdir -p "$root"
step() {  # step NAME SCRIPT ARGS...: the script with its own OUT folder, its summary appended
    local name=$1; shift
    mkdir -p "$root/$name"
    echo "== $name: bash $* (seed $SEED)" >> "$OUT/summary.txt"
    OUT="$root/$name" bash "$@" > "$root/$name/stdout.log" 2>&1
    echo "exit $?" >> "$root/$name/stdout.log"
    if [ -f "$root/$name/summary.txt" ]; then
        cat "$root/$name/summary.txt" >> "$OUT/summary.txt"; tail -1 "$root/$name/stdout.log" >> "$OUT/summary.txt"
    else
        grep -v "^Processing\|^Collecting" "$root/$name/stdout.log" | tail -40 >> "$OUT/summary.txt"
    fi
    tar czf "$OUT/all.tgz" -C "$root" .  # after each step: a call cut at its limit still brings the steps done
}
: > "$OUT/summary.txt"
step expectations bench/device/ci_expectations.sh "$SEED" 120 190
step coopmat-khr bench/device/coopmat_khr.sh 300 40 "$SEED"
step khr-routes bench/device/khr_routes.sh 100 40 "$SEED"
step subgroup-tiles bench/device/subgroup_tiles.sh 100 20 "$SEED"
cat "$OUT/summary.txt"
