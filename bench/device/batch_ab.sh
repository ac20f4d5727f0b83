#!/usr/bin/env bash
# One device call (H100): an A/B of two ctsgen trees in the same call, each a 16-worker fuzz session
# over every family the H100 runs with the same seed and options. OLD is a directory holding the
# other tree's ctsgen/ package (e.g. `mkdir ab-old && git archive REV ctsgen | tar -x -C ab-old`);
# the new tree is the repository root. $OUT: ab.log (the naive loop, then each session's summary).
#   carry: .gl .whl .carry   usage: bash bench/device/batch_ab.sh OLD [SECONDS [WORKERS [SEED]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
OLD=$(cd "$1" && pwd); T=${2:-150}; W=${3:-16}; SEED=${4:-4700}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
fams=$(python3 -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in families()))")
common="--backend vulkan $fams --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== python3 bench/naive_loop.py --backend vulkan --time 20"
  timeout 60 python3 bench/naive_loop.py --backend vulkan --time 20 2>&1 | tail -1; } > "$OUT/ab.log"
for side in old new; do
    root=$PWD; [ $side = old ] && root=$OLD
    echo "== [$side: $root] ctsgen fuzz $common --time $T --workers $W --seed $SEED" >> "$OUT/ab.log"
    ( cd "$root" && PYTHONPATH=/tmp/site:$root timeout $((T + 120)) python3 -m ctsgen fuzz $common --time "$T" \
        --workers "$W" --seed "$SEED" --repro-dir "/tmp/repros-$side" 2>&1 ) | grep -v "^\[worker\|^fuzzing" >> "$OUT/ab.log"
done
grep -E "^==|together|^  [a-z]" "$OUT/ab.log"
