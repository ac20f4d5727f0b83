#!/usr/bin/env bash
# One device call (H100), issue 14 goal 5: does a fuzz process's device memory grow with its
# VkPipelineCache? bench/pipeline_cache_growth.py (one fuzz loop, one case an example, at most
# KEPT pipelines kept) with the cache off, then on; RSS and the cache's size every 100 pipelines.
# $OUT: off.txt (after the GPU's name and driver), on.txt.
#   carry: .gl .whl .carry   usage: bash bench/device/pipeline_cache_growth.sh [SECONDS [KEPT]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
T=${1:-120}; KEPT=${2:-256}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 __GL_SHADER_DISK_CACHE=0
rm -rf "$(python3 -c "from ctsgen.backends.pipeline_cache import default_cache_dir; print(default_cache_dir())")" "$HOME/.cache/nvidia" 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/off.txt"
CTSGEN_PIPELINE_CACHE=0 timeout $((T + 60)) python3 bench/pipeline_cache_growth.py --time "$T" --kept "$KEPT" >> "$OUT/off.txt" 2>&1
timeout $((T + 60)) python3 bench/pipeline_cache_growth.py --time "$T" --kept "$KEPT" > "$OUT/on.txt" 2>&1
for f in off on; do tail -n 4 "$OUT/$f.txt"; done
