#!/usr/bin/env bash
# One device call (H100), issue 15 part 2: fit and confirm the device numeric models on fresh
# seeds. Per modelled family (cm2-gemm, coopvec, cm2-convert, cm2-reduce): a 2,000-case pack
# generated on the device (--jobs 16), the output buffer of every float case dumped
# (bench/dump_device_outputs.py --keep --float-only), the pack run with `ctsgen run --numerics h100`, and the
# dumps replayed against the model and its candidates (bench/fit_numeric_model.py, the four fits
# in parallel). $OUT gets 6 files: summary.md (device, steps, verdict counts), generate.log,
# dump.log, run.log, fit.md (one table per family: bit-exact share per type combination and
# candidate), results.tgz (packs, dumps, results files: the analysis replays them offline,
# bench/results/numeric-models/README.md).
#   carry: .gl .whl .carry    usage: bash bench/device/models.sh [SEED]   (seeds SEED..SEED+3; default 1601)
#   without a GPU: MODELS_BACKEND=reference MODELS_COUNT=40 OUT=/tmp/out bash bench/device/models.sh
set -uo pipefail
BACKEND=${MODELS_BACKEND:-vulkan}; COUNT=${MODELS_COUNT:-2000}; SEED=${1:-1601}
if [ "$BACKEND" = vulkan ]; then
    . bench/device/setup.sh
fi
export CTSGEN_CACHE_DIR=/tmp/ctsgen-cache PYTHONUNBUFFERED=1
P=/tmp/models-packs; rm -rf "$P"; mkdir -p "$P/packs" "$P/dumps" "$P/results"
S=$OUT/summary.md; T0=$SECONDS; DEADLINE=${MODELS_DEADLINE:-480}  # seconds: the results are packed by then
step() { echo "- $(printf '%4d' $((SECONDS - T0))) s: $*" | tee -a "$S"; }
# a step's time limit: at most $1 seconds, and never past the deadline (at least 5)
budget() { local left=$((DEADLINE - (SECONDS - T0))); echo $((left < $1 ? (left > 5 ? left : 5) : $1)); }
{
    echo "# bench/device/models.sh: backend $BACKEND, $COUNT cases per family, seeds $SEED..$((SEED + 3)), started $(date -u +%FT%TZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')"
    if [ "$BACKEND" = vulkan ]; then nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; fi
    python3 -c "import hypothesis, numpy; print('hypothesis', hypothesis.__version__, 'numpy', numpy.__version__)"
    echo
} > "$S"
COUNT_STATUSES='import collections, json, sys
print(dict(collections.Counter(json.loads(line)["status"] for line in open(sys.argv[1]))))'
# family  seed  the buffers its model predicts
FAMILIES="cm2-gemm:$SEED:D coopvec:$((SEED + 1)):output cm2-convert:$((SEED + 2)):result cm2-reduce:$((SEED + 3)):result"
for spec in $FAMILIES; do
    IFS=: read -r f seed keep <<< "$spec"
    echo "== ctsgen generate --family $f --count $COUNT --seed $seed --jobs 16" >> "$OUT/generate.log"
    timeout $(budget 150) python3 -m ctsgen generate --family "$f" --count "$COUNT" --seed "$seed" --out "$P/packs/$f" \
        --jobs 16 >> "$OUT/generate.log" 2>&1
    step "generate $f (exit $?): $(grep -E '^wrote' "$OUT/generate.log" | tail -1)"
    echo "== dump_device_outputs $f --keep $keep" >> "$OUT/dump.log"
    timeout $(budget 150) python3 bench/dump_device_outputs.py "$P/packs/$f" "$P/dumps/$f.npz" --backend "$BACKEND" \
        --keep "$keep" --float-only >> "$OUT/dump.log" 2>&1
    step "dump $f (exit $?): $(tail -1 "$OUT/dump.log")"
    echo "== ctsgen run $f --numerics h100" >> "$OUT/run.log"
    timeout $(budget 120) python3 -m ctsgen run "$P/packs/$f" --backend "$BACKEND" --numerics h100 \
        --results "$P/results/run-$f.jsonl" >> "$OUT/run.log" 2>&1
    step "run $f --numerics h100 (exit $?; 1: a spec failure): $(python3 -c "$COUNT_STATUSES" "$P/results/run-$f.jsonl")"
    # the fit needs only the CPU: it runs beside the next family's device steps
    (timeout $(budget 300) python3 bench/fit_numeric_model.py "$P/packs/$f" "$P/dumps/$f.npz" --show-misses 20 \
        > "$P/fit-$f.md" 2>&1; echo "exit $?" >> "$P/fit-$f.md") &
done
wait
for spec in $FAMILIES; do f=${spec%%:*}; echo "## $f"; cat "$P/fit-$f.md"; echo; done > "$OUT/fit.md"
step "fits done ($(grep -c '^exit 0' "$OUT/fit.md") of 4 exit 0)"
tar czf "$OUT/results.tgz" -C "$P" --exclude="*.npy" packs dumps results  # packs without their arrays: the fit rebuilds cases from case.json
step "results.tgz: $(du -h "$OUT/results.tgz" | cut -f1); ended $(date -u +%FT%TZ)"
exit 0
