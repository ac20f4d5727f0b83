#!/usr/bin/env bash
# One device call (one GPU; issue 37): the sustained fuzz rate of THIS tree and of a BASELINE tree, one
# after the other on the same machine, from the same seed: `bench/device/sustained.sh T W SEED` in each
# (every family the device runs, the shipped NVIDIA expectations as --baseline, --keep-going).
# The baseline tree is .carry/base, made here before the call (BASE: the baseline commit):
#   mkdir -p .carry/base && git archive BASE ctsgen expectations pyproject.toml | tar -x -C .carry/base &&
#   cp -r bench .carry/base/   # this tree's scripts (the naive loop runs only in this tree)
# Each run has its own empty SPIR-V and pipeline cache and the driver's shader disk cache is off, so neither
# inherits the other's builds. This tree runs first, so its figure arrives even if the call is cut short.
# $OUT/this.tgz, $OUT/base.tgz: sustained.sh's files (summary.txt, minutes.txt, fuzz.log, naive.log, device.txt).
#   carry: .gl .whl .carry (device)
# usage: bash bench/device/sustained_ab.sh [T [W [SEED]]]
set -uo pipefail
T=${1:-120}; W=${2:-16}; SEED=${3:-$(( $(date +%s) % 1000000 ))}
OUT=${OUT:-/tmp/sustained-ab}; ROOT=$PWD; BASE=$ROOT/.carry/base
[ -d "$BASE/ctsgen" ] || { echo "no baseline tree at $BASE (see the header)" >&2; exit 2; }
for d in .gl .whl .carry; do [ -e "$BASE/$d" ] || ln -s "$ROOT/$d" "$BASE/$d"; done
export __GL_SHADER_DISK_CACHE=0
run() {  # NAME DIR NAIVE_S
    mkdir -p "$OUT/$1"
    # the pipeline cache lives beside the SPIR-V cache (ctsgen/backends/pipeline_cache.py): a folder of the run's own
    (cd "$2" && OUT="$OUT/$1" SUSTAINED_CACHE_DIR="/tmp/ctsgen-cache-$1/spirv" bash bench/device/sustained.sh "$T" "$W" "$SEED" "$3")
    echo "== $1"; head -8 "$OUT/$1/summary.txt" 2>/dev/null
    tar -czf "$OUT/$1.tgz" -C "$OUT" "$1" && rm -rf "${OUT:?}/$1"  # one file a run: the device tool returns few
}
run this "$ROOT" 10
run base "$BASE" 1
