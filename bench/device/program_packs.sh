#!/usr/bin/env bash
# One device call (H100), issue 16: COUNT fresh-seed programs of each program family, as a pack of one
# case per program (generate --cases-per-variant 1: every case its own shader) run on the GPU, then
# fuzzed by 16 worker processes for FUZZ_S seconds each (every example a new program). The documented
# SetDimension deviation is expected; anything else fails. Each step stops at a deadline.
# $OUT: device.txt, generate.log, run.log, coverage.md (ctsgen coverage of both packs: operation
# pairs, lengths, tensor objects per shader, data domains), fuzz.log, repros.tgz (if any).
# COUNT 0 skips the packs (their generation is slow at one case per program: 11 programs/s, run3).
#   carry: .gl .whl .carry   usage: bash bench/device/program_packs.sh [COUNT [SEED [FUZZ_S [DEADLINE_S]]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
N=${1:-5000}; SEED=${2:-3800}; FUZZ=${3:-90}; T0=$SECONDS; DEADLINE=${4:-560}
left() { echo $((DEADLINE - (SECONDS - T0))); }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc --all
  echo "$N programs per family, seed $SEED (cm2-program) and $((SEED + 1)) (coopvec-program), fuzz $FUZZ s each"; } \
    > "$OUT/device.txt"
i=0
for f in cm2-program coopvec-program; do
    s=$((SEED + i)); i=$((i + 1))
    [ "$N" -gt 0 ] || break  # COUNT 0: fuzz only
    echo "== ctsgen generate --family $f --count $N --seed $s --cases-per-variant 1 --jobs 16" >> "$OUT/generate.log"
    timeout $(left) python3 -m ctsgen generate --family "$f" --count "$N" --seed "$s" --cases-per-variant 1 --jobs 16 \
        --out "/tmp/pp/$f" 2>&1 | grep -v "^drawing\|^writing" >> "$OUT/generate.log"
    echo "== ctsgen run /tmp/pp/$f --backend vulkan --expect-deviation setdimension-floor" >> "$OUT/run.log"
    timeout $(left) python3 -m ctsgen run "/tmp/pp/$f" --backend vulkan --expect-deviation setdimension-floor --quiet \
        --results "/tmp/pp/$f.jsonl" >> "$OUT/run.log" 2>&1
    echo "exit $?" >> "$OUT/run.log"
    python3 -m ctsgen coverage "/tmp/pp/$f" >> "$OUT/coverage.md" 2>&1
done
i=0
for f in cm2-program coopvec-program; do
    s=$((SEED + 10 + i)); i=$((i + 1))
    [ "$(left)" -gt 40 ] || { echo "fuzz $f skipped: deadline" >> "$OUT/fuzz.log"; continue; }
    t=$(( $(left) - 30 < FUZZ ? $(left) - 30 : FUZZ ))
    echo "== ctsgen fuzz --backend vulkan --family $f --time $t --seed $s --workers 16 --database none --keep-going" \
        "--shrink-time 20 --expect-deviation setdimension-floor" >> "$OUT/fuzz.log"
    timeout $((t + 25)) python3 -m ctsgen fuzz --backend vulkan --family "$f" --time "$t" --seed "$s" --workers 16 \
        --database none --keep-going --shrink-time 20 --expect-deviation setdimension-floor \
        --repro-dir "/tmp/repros/$f" 2>&1 | grep -v "^\[worker [0-9]*\]   \|fuzzing \[" >> "$OUT/fuzz.log"
done
[ -d /tmp/repros ] && tar czf "$OUT/repros.tgz" -C /tmp repros
grep -E "wrote" "$OUT/generate.log"; grep -E "cases in|^  [A-Z]|exit" "$OUT/run.log"
grep -E "together|found:" "$OUT/fuzz.log" | head -20
exit 0
