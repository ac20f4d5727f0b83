#!/usr/bin/env bash
# Device step (H100), issue 14 goal 6: a fresh-seed tensor-layout fuzz session *without*
# --expect-deviation must find the documented SetDimension deviation by itself and shrink it to the
# size of docs/repros/h100-setdimension-stride (an 8x8 B matrix, Dim 2, blockSize (1, 2),
# layoutDimension (2, 1), default strides). $OUT: setdimension.log, setdimension-repro.md (the
# shrunk repro's REPORT.md head, and its case.json's run-time parameters).
#   carry: .gl .whl .carry   usage: bash bench/device/setdimension_rediscovery.sh [SEED [SECONDS [SHRINK_S]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
SEED=${1:-3900}; T=${2:-60}; S=${3:-120}
echo "== ctsgen fuzz --backend vulkan --family tensor-layout --time $T --seed $SEED --database none --shrink-time $S" \
    > "$OUT/setdimension.log"
timeout $((T + S + 45)) python3 -m ctsgen fuzz --backend vulkan --family tensor-layout --time "$T" --seed "$SEED" \
    --database none --shrink-time "$S" --repro-dir /tmp/sd-repros 2>&1 | grep -v "^fuzzing \[" >> "$OUT/setdimension.log"
echo "exit ${PIPESTATUS[0]}" >> "$OUT/setdimension.log"
for r in /tmp/sd-repros/*/; do
    [ -f "$r/REPORT.md" ] || continue
    echo "## $r"; head -40 "$r/REPORT.md"
done > "$OUT/setdimension-repro.md" 2>&1
grep -E "found|shrunk|fuzzed|exit|repro" "$OUT/setdimension.log" | tail -8
grep -E "^# |blockSize|layoutDimension|stride|matrix" "$OUT/setdimension-repro.md" | head -12
exit 0
