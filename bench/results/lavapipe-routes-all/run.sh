#!/usr/bin/env bash
# Issue 42 "lavapipe, a fresh seed, fuzz --routes all per family that lavapipe runs": one family at a time,
# from the worktree root. fuzz takes no --profile: on vulkan it reads the live device (lavapipe);
# PROFILE only lists the families lavapipe runs, as bench/device/kernels_routes.sh does. usage: bash bench/results/lavapipe-routes-all/run.sh SEED [FAMILY ...]
set -u
SEED=$1; shift
OUT=bench/results/lavapipe-routes-all
PROFILE=ctsgen/device/profiles/mesa-lavapipe-26.2.6.txt
FAMS=${*:-$(/work/venv/bin/python -c "
from ctsgen.device.profile import load_profile
from ctsgen.families.gating import families_it_runs
print(' '.join(families_it_runs(load_profile('$PROFILE'))))")}
for F in $FAMS; do
    echo "== $(date -u +%FT%TZ) timeout 400 /work/lavapipe/run /work/venv/bin/python -m ctsgen fuzz --backend vulkan --family $F --routes all --time 180 --seed $SEED --database none --keep-going --baseline expectations/lavapipe-26.csv --repro-dir /tmp/measure-repros/$F" > "$OUT/$F.log"
    timeout 400 /work/lavapipe/run /work/venv/bin/python -m ctsgen fuzz --backend vulkan \
        --family "$F" --routes all --time 180 --seed "$SEED" --database none --keep-going \
        --baseline expectations/lavapipe-26.csv --repro-dir "/tmp/measure-repros/$F" 2>&1 \
        | grep -v "^fuzzing \[" >> "$OUT/$F.log"
    echo "exit ${PIPESTATUS[0]} at $(date -u +%FT%TZ)" >> "$OUT/$F.log"
done
