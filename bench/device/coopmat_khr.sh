#!/usr/bin/env bash
# One device call (nvidia-h200): the coopmat-khr family on the GPU's own KHR property list.
# 1. `ctsgen profile` reads the live device (its VkCooperativeMatrixPropertiesKHR list: sizes, types,
#    saturatingAccumulation; bfloat16 / float8 entries if the driver lists them);
# 2. a pack drawn from that profile (every operation x result type and every KHR entry is a stratum)
#    runs on the GPU: every case must Pass (a saturating int8 entry, if listed, is one MulAdd stratum);
# 3. a fuzz of the family from a fresh seed, no expected deviation.
# What to read: summary.txt (exit codes, verdict counts, the KHR entries the driver lists and the
#   pack's MulAdd coverage), run.log, fuzz.log, profile.txt, repros.tgz on a failure.
#   carry: .gl .whl .carry (device)
# usage: bash bench/device/coopmat_khr.sh [COUNT [FUZZ_S [SEED]]]
#   BACKEND=reference (env) runs it here, on the embedded H100 profile, to check the script itself.
set -uo pipefail
COUNT=${1:-600}; FUZZ_S=${2:-120}; SEED=${3:-424242}
BACKEND=${BACKEND:-vulkan}; OUT=${OUT:-/tmp/coopmat-khr-out}; mkdir -p "$OUT"
PY=${PYTHON:-python3}
pack=/tmp/coopmat-khr-pack; rm -rf "$pack" /tmp/repros-khr
if [ "$BACKEND" = vulkan ]; then
    . bench/device/setup.sh >/dev/null 2>&1
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
    $PY -m ctsgen profile --out "$OUT/profile.txt" > /dev/null 2>&1; echo "profile exit $?" > "$OUT/summary.txt"
    prof=(--profile "$OUT/profile.txt")
else
    : > "$OUT/summary.txt"; prof=()
fi
timeout 900 $PY -m ctsgen generate --family coopmat-khr --count "$COUNT" --seed "$SEED" "${prof[@]}" \
    --out "$pack" > "$OUT/generate.log" 2>&1
echo "generate exit $?" >> "$OUT/summary.txt"
timeout 900 $PY -m ctsgen run "$pack" --backend "$BACKEND" > "$OUT/run.log" 2>&1
echo "run exit $?" >> "$OUT/summary.txt"
timeout $((FUZZ_S + 120)) $PY -m ctsgen fuzz --backend "$BACKEND" --family coopmat-khr --time "$FUZZ_S" --seed "$SEED" \
    --database none --keep-going --shrink-time 20 --repro-dir /tmp/repros-khr > "$OUT/fuzz.log" 2>&1
echo "fuzz exit $?" >> "$OUT/summary.txt"
{
    grep -E "^  (Pass|Fail|QualityWarning|NotSupported|Crash|Timeout)|^ci:" "$OUT/run.log"
    grep -E "fuzzed|failure|found" "$OUT/fuzz.log" | tail -5
    [ -f "$OUT/profile.txt" ] && sed -n '/^coopmat khr [0-9]/,$p' "$OUT/profile.txt"
    $PY -m ctsgen coverage "$pack" 2>/dev/null | sed -n '/MulAdd/,$p'
} >> "$OUT/summary.txt"
[ -d /tmp/repros-khr ] && tar czf "$OUT/repros.tgz" -C /tmp repros-khr
cat "$OUT/summary.txt"
exit 0
