#!/usr/bin/env bash
# One device call (nvidia-h100-x2): `ctsgen fuzz --workers W --devices D` for FUZZ_S seconds as the
# baseline (--expect-deviation setdimension-floor: fuzz at its fastest, no shrinking of the known
# deviation), then a campaign of CAMP_S seconds on the same workers and devices, every family the H100
# runs (decode-vector left out), WITHOUT --expect-deviation: the SetDimension deviation must be one
# bucket across every family, the Log finding one bucket. Then `campaign status` and `campaign report`.
# $OUT: summary.txt (the figures and pass/fail), fuzz.log, campaign.log, status.txt, report.md,
#   report.png (where chromium is installed), buckets.tgz (each bucket's bucket.json and REPORT.md),
#   campaign.tgz (the campaign directory without its example database: `ctsgen campaign report` and
#   bench/campaign_report_screenshot.py render it on a machine with chromium).
#   carry: .gl .whl .carry (device)
# usage: bash bench/device/campaign_8min.sh [CAMP_S [FUZZ_S [WORKERS [SEED [DEVICES]]]]]
#   BACKEND=reference (env) runs it here with tiny times, to check the script itself.
set -uo pipefail
CAMP_S=${1:-480}; FUZZ_S=${2:-40}; W=${3:-32}; SEED=${4:-4807}; DEVICES=${5-0,1}
BACKEND=${BACKEND:-vulkan}; OUT=${OUT:-/tmp/campaign-8min-out}; mkdir -p "$OUT"
if [ "$BACKEND" = vulkan ]; then . bench/device/setup.sh >/dev/null 2>&1; nvidia-smi -L; fi
PY=${PYTHON:-python3}
fams=$($PY -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in sorted(families()) if f != 'decode-vector'))")
dev=(--backend "$BACKEND"); [ -n "$DEVICES" ] && dev+=(--devices "$DEVICES")
camp=/tmp/camp-8min; rm -rf "$camp" /tmp/repros-8min

echo "== ctsgen fuzz ${dev[*]} $fams --time $FUZZ_S --workers $W --seed $SEED --expect-deviation setdimension-floor" > "$OUT/fuzz.log"
timeout $((FUZZ_S + 90)) $PY -m ctsgen fuzz "${dev[@]}" $fams --time "$FUZZ_S" --workers "$W" --seed "$SEED" \
    --expect-deviation setdimension-floor --database none --keep-going --shrink-time 10 \
    --repro-dir /tmp/repros-8min >> "$OUT/fuzz.log" 2>&1

echo "== ctsgen campaign start $camp ${dev[*]} $fams --time $CAMP_S --workers $W --seed $SEED" > "$OUT/campaign.log"
t0=$EPOCHREALTIME
timeout $((CAMP_S + 60)) $PY -m ctsgen campaign start "$camp" "${dev[@]}" $fams --time "$CAMP_S" --workers "$W" \
    --seed "$SEED" --shrink-time 20 >> "$OUT/campaign.log" 2>&1
wall=$($PY -c "print(f'{$EPOCHREALTIME - $t0:.1f}')")
echo "campaign wall $wall s for a $CAMP_S s budget" >> "$OUT/campaign.log"
$PY -m ctsgen campaign status "$camp" > "$OUT/status.txt" 2>&1

# the figures: fuzz over its wall and over its workers' own fuzzing time (start-up left out), the campaign
$PY - "$OUT" "$CAMP_S" "$wall" > "$OUT/summary.txt" <<'EOF'
import re, sys
out, budget, wall = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
fuzz, camp = open(f"{out}/fuzz.log").read(), open(f"{out}/campaign.log").read()
tot = r"(\d+) workers together: (\d+) examples, (\d+) cases in ([\d.]+)s \((\d+) cases/s\)"
f, c = re.search(tot, fuzz), re.search(tot, camp)
steady = sum(int(m) for m in re.findall(r"\] fuzzed .*? cases in [\d.]+s \((\d+) cases/s\)", fuzz))
fuzz_rate, camp_rate = int(f.group(5)), int(c.group(3)) / wall
print(f"fuzz: {f.group(3)} cases in {f.group(4)} s of wall: {fuzz_rate} cases/s; "
      f"the workers' own rates summed (start-up left out): {steady} cases/s")
print(f"campaign: {c.group(3)} cases in {wall:.1f} s of wall for a {budget:.0f} s budget: {camp_rate:.0f} cases/s")
best = max(fuzz_rate, steady)
print(f"campaign / fuzz: {camp_rate / best:.1%} of the higher fuzz figure "
      f"({'pass' if camp_rate >= 0.9 * best else 'FAIL'}: at least 90%)")
print(f"campaign ended {wall - budget:.1f} s after its budget ({'pass' if wall - budget <= 10 else 'FAIL'}: within 10 s)")
for line in camp.splitlines():
    if "past the deadline" in line:
        print("worker:", line)
EOF
cat "$OUT/summary.txt" "$OUT/status.txt"
left() { echo $(( ${LIMIT_S:-590} - SECONDS )); }  # the device call's 600 s, less a margin for the files
[ "$(left)" -gt 5 ] && timeout "$(left)" $PY -m ctsgen campaign report "$camp" --out "$camp/report" 2>&1 | tail -1
cp "$camp/report/report.md" "$OUT/report.md" 2>/dev/null
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null && [ "$(left)" -gt 20 ]; then
    timeout "$(left)" $PY bench/campaign_report_screenshot.py "$camp" "$OUT/report.png" 2>&1 | tail -1
else
    echo "no screenshot: chromium is not installed here, or too little time is left"
fi
kept=$(cd "$camp" && ls -d buckets/*/bucket.json buckets/*/repro/REPORT.md 2>/dev/null)
[ -n "$kept" ] && (cd "$camp" && tar -czf "$OUT/buckets.tgz" $kept)
tar -czf "$OUT/campaign.tgz" --exclude=./db --exclude=./report -C "$camp" .
ls -la "$OUT"
