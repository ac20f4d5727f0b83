#!/usr/bin/env bash
# One device call (H100), the driver-CI check of docs/ci.md: every family drawn with a fresh SEED and run with the
# shipped NVIDIA expectations (docs/ci.md) must exit 0; a planted extra failure (a mutant backend on the
# tensor-layout pack, judged against the same expectations) must exit 1. EXTRA ("SEED:FAMILY,FAMILY ...") runs more
# packs the same way, e.g. the seeds a numeric re-check named.
# $OUT: device.txt, run.log (each run's ci: lines and exit status), summary.txt, results.tgz (each run's
# results.csv, failures.csv and JSON-lines results; the device tool brings back few files, so they travel as one).
#   carry: .gl .whl .carry   usage: bash bench/device/ci_expectations.sh [SEED [COUNT [DEADLINE_S [EXTRA]]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
SEED=${1:-$RANDOM}; N=${2:-300}; DEADLINE=${3:-560}; EXTRA=${4:-}; T0=$SECONDS
left() { echo $((DEADLINE - (SECONDS - T0))); }
EXP=expectations/nvidia-h100-580.csv
RES=/tmp/ci-results
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "seed $SEED, $N cases a family"; } \
    > "$OUT/device.txt"
one() {  # one() SEED FAMILY: generate, then run with the shipped expectations
    local seed=$1 f=$2 pack=/tmp/ci/$1/$2 out=$RES/$1-$2
    [ "$(left)" -gt 30 ] || { echo "$seed $f: not run, deadline" >> "$OUT/summary.txt"; return; }
    if ! timeout "$(left)" python3 -m ctsgen generate --family "$f" --count "$N" --seed "$seed" --jobs 16 \
            --out "$pack" > /tmp/gen.log 2>&1; then
        echo "$seed $f: generate: $(grep -m1 'ctsgen:' /tmp/gen.log)" >> "$OUT/summary.txt"; return
    fi
    mkdir -p "$out"
    echo "== $seed $f: ctsgen run $pack --backend vulkan --baseline $EXP" >> "$OUT/run.log"
    timeout "$(left)" python3 -m ctsgen run "$pack" --backend vulkan --baseline "$EXP" --quiet \
        --results "$out/results-vulkan.jsonl" --csv-dir "$out" 2>&1 | grep -E "^(ci:|  [A-Za-z]+ +[0-9]+$)" >> "$OUT/run.log"
    echo "$seed $f: exit ${PIPESTATUS[0]} (want 0)" | tee -a "$OUT/run.log" >> "$OUT/summary.txt"
}
for f in $(python3 -c "from ctsgen.families import families; print(' '.join(sorted(families())))"); do
    one "$SEED" "$f"
done
echo "== planted: mutant:mirror-as-repeat on /tmp/ci/$SEED/tensor-layout --baseline $EXP" >> "$OUT/run.log"
python3 -m ctsgen run "/tmp/ci/$SEED/tensor-layout" --backend mutant:mirror-as-repeat --baseline "$EXP" --quiet \
    --results "$RES/planted.jsonl" --csv-dir "$RES/planted" > "$OUT/planted.log" 2>&1
code=$?
grep -E "^ci:" "$OUT/planted.log" >> "$OUT/run.log"
echo "planted mutant:mirror-as-repeat: exit $code (want 1), $(grep -c ',Fail' "$RES/planted/failures.csv" 2>/dev/null)" \
    "unexpected Fail lines in failures.csv (want > 0)" | tee -a "$OUT/run.log" >> "$OUT/summary.txt"
for spec in $EXTRA; do
    for f in $(echo "${spec#*:}" | tr , " "); do one "${spec%%:*}" "${f}"; done
done
tar czf "$OUT/results.tgz" -C "$RES" .
cat "$OUT/summary.txt"
