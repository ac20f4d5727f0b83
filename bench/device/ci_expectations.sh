#!/usr/bin/env bash
# One device call (H100), the driver-CI check of docs/ci.md: every family drawn with a fresh SEED and run with the
# shipped NVIDIA expectations (docs/ci.md) must exit 0; a planted extra failure (a mutant backend on the
# tensor-layout pack, judged against the same expectations) must exit 1.
# $OUT: device.txt, run.log (each run's ci: lines and exit status), summary.txt, FAMILY/ (results.csv,
# failures.csv, the JSON-lines results).
#   carry: .gl .whl .carry   usage: bash bench/device/ci_expectations.sh [SEED [COUNT [DEADLINE_S]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
SEED=${1:-$RANDOM}; N=${2:-300}; DEADLINE=${3:-560}; T0=$SECONDS
left() { echo $((DEADLINE - (SECONDS - T0))); }
EXP=expectations/nvidia-h100-580.csv
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "seed $SEED, $N cases a family"; } \
    > "$OUT/device.txt"
for f in $(python3 -c "from ctsgen.families import families; print(' '.join(sorted(families())))"); do
    [ "$(left)" -gt 30 ] || { echo "$f: skipped, deadline" >> "$OUT/summary.txt"; continue; }
    timeout $(left) python3 -m ctsgen generate --family "$f" --count "$N" --seed "$SEED" --jobs 16 \
        --out "/tmp/ci/$f" > /dev/null 2>&1 || { echo "$f: generate failed" >> "$OUT/summary.txt"; continue; }
    mkdir -p "$OUT/$f"
    echo "== $f: ctsgen run /tmp/ci/$f --backend vulkan --baseline $EXP" >> "$OUT/run.log"
    timeout $(left) python3 -m ctsgen run "/tmp/ci/$f" --backend vulkan --baseline "$EXP" --quiet \
        --results "$OUT/$f/results-vulkan.jsonl" --csv-dir "$OUT/$f" 2>&1 | grep -E "^(ci:|  [A-Za-z]+: )" >> "$OUT/run.log"
    echo "$f: exit ${PIPESTATUS[0]} (want 0)" | tee -a "$OUT/run.log" >> "$OUT/summary.txt"
done
echo "== planted: mutant:mirror-as-repeat on /tmp/ci/tensor-layout --baseline $EXP" >> "$OUT/run.log"
python3 -m ctsgen run /tmp/ci/tensor-layout --backend mutant:mirror-as-repeat --baseline "$EXP" --quiet \
    --results "$OUT/planted.jsonl" --csv-dir "$OUT/planted" > "$OUT/planted.log" 2>&1
code=$?
grep -E "^ci:" "$OUT/planted.log" >> "$OUT/run.log"
echo "planted mutant:mirror-as-repeat: exit $code (want 1), $(grep -c ',Fail$' "$OUT/planted/failures.csv" 2>/dev/null)" \
    "unexpected Fail lines in failures.csv (want > 0)" | tee -a "$OUT/run.log" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
