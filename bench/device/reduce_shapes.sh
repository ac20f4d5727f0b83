#!/usr/bin/env bash
# One device step (H100), issue 15: the subgroup grid of every workgroup-scope cm2-reduce shape.
# h100.WARP_GRIDS knows 7 multi-subgroup shapes (call-1601); the profile has 27. A large cm2-reduce
# pack (COUNT cases, seed SEED) draws nearly all of them; the result buffer of every float case is
# dumped (bench/dump_device_outputs.py --float-only) and bench/fit_warp_grids.py replays each
# multi-subgroup case under every grid the shape allows. $OUT gets reduce-shapes.log and
# reduce-shapes.tgz (the pack's case.json files and the dump: the fit replays them offline).
#   carry: .gl .whl .carry    usage: bash bench/device/reduce_shapes.sh [COUNT [SEED]]   (default 30000 1705)
#   without a GPU: RS_BACKEND=reference OUT=/tmp/out bash bench/device/reduce_shapes.sh 400
set -uo pipefail
BACKEND=${RS_BACKEND:-vulkan}; N=${1:-30000}; SEED=${2:-1705}
if [ "$BACKEND" = vulkan ]; then . bench/device/setup.sh; fi
export PYTHONUNBUFFERED=1
P=/tmp/reduce-shapes; rm -rf "$P"; mkdir -p "$P"; L=$OUT/reduce-shapes.log; T0=$SECONDS
echo "# bench/device/reduce_shapes.sh $N $SEED, backend $BACKEND, commit $(git rev-parse --short HEAD 2>/dev/null)" > "$L"
timeout 120 python3 -m ctsgen generate --family cm2-reduce --count "$N" --seed "$SEED" --jobs "$(nproc)" \
    --out "$P/pack" 2>&1 | grep -v "^drawing\|^writing" >> "$L"
echo "- $((SECONDS - T0)) s: generated" >> "$L"
timeout 200 python3 bench/dump_device_outputs.py "$P/pack" "$P/dump.npz" --backend "$BACKEND" --keep result \
    --float-only >> "$L" 2>&1
echo "- $((SECONDS - T0)) s: dumped (exit $?)" >> "$L"
timeout 120 python3 bench/fit_warp_grids.py "$P/pack" "$P/dump.npz" >> "$L" 2>&1
echo "- $((SECONDS - T0)) s: fitted (exit $?)" >> "$L"
tar czf "$OUT/reduce-shapes.tgz" -C "$P" --exclude="*.npy" pack dump.npz
exit 0
