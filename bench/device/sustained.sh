#!/usr/bin/env bash
# One device call (one GPU, 16 cores; issue 37): the SUSTAINED fuzz rate. The naive loop for NAIVE_S seconds,
# then `ctsgen fuzz --workers W --devices 0 --time T` over every family the device runs (the ones it lacks are
# skipped and named), from a fresh seed, with the shipped NVIDIA expectations as --baseline (a finding they
# expect is passed over), --keep-going. Defaults fit the call's 10 minutes: 20 s + 450 s + start-up.
# $OUT: device.txt (GPU, driver, cores, commit, seed), naive.log, fuzz.log (everything fuzz printed),
#   minutes.txt (the per-minute table: cases/s and ms per case per stage, each minute), summary.txt:
#   cases/s over the session's wall, first vs last whole minute, how far past --time it ended, pass/FAIL
#   against the issue's goals (10,000 cases/s, within 5 s of --time, last minute within 10% of the first).
#   carry: .gl .whl .carry (device)
# usage: bash bench/device/sustained.sh [T [W [SEED [NAIVE_S]]]]   (DEVICES=0,1 in the environment: two GPUs)
#   BACKEND=reference OUT=/tmp/s bash bench/device/sustained.sh 70 2 1 3   checks the script here, on the CPU.
set -uo pipefail
T=${1:-450}; W=${2:-16}; SEED=${3:-$(( $(date +%s) % 1000000 ))}; NAIVE_S=${4:-20}
BACKEND=${BACKEND:-vulkan}; DEVICES=${DEVICES:-0}; OUT=${OUT:-/tmp/sustained-out}; mkdir -p "$OUT"
PY=${PYTHON:-python3}
if [ "$BACKEND" = vulkan ]; then
    . bench/device/setup.sh >/dev/null 2>&1
    export CTSGEN_CACHE_DIR=${SUSTAINED_CACHE_DIR:-$CTSGEN_CACHE_DIR}  # a cache of the run's own (sustained_ab.sh)
    BASELINE=${BASELINE:-expectations/nvidia-h100-580.csv}
fi
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no GPU: backend $BACKEND"
  echo "cores $(nproc)"; git log -1 --format=%H 2>/dev/null; echo "seed $SEED, --time $T, --workers $W"; } \
    > "$OUT/device.txt"
fams=$($PY -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in sorted(families())))")
base=(); [ -n "${BASELINE:-}" ] && base=(--baseline "$BASELINE")

echo "== $PY bench/naive_loop.py --backend $BACKEND --time $NAIVE_S" > "$OUT/naive.log"
timeout $((NAIVE_S + 30)) $PY bench/naive_loop.py --backend "$BACKEND" --time "$NAIVE_S" >> "$OUT/naive.log" 2>&1

rm -rf /tmp/repros-sustained
cmd=(-m ctsgen fuzz --backend "$BACKEND" $fams --workers "$W" --devices "$DEVICES" --time "$T" --seed "$SEED" "${base[@]}"
     --database none --keep-going --shrink-time 20 --repro-dir /tmp/repros-sustained)
echo "== $PY ${cmd[*]}" > "$OUT/fuzz.log"
t0=$EPOCHREALTIME
timeout $((T + 30)) $PY "${cmd[@]}" >> "$OUT/fuzz.log" 2>&1
echo "exit $?" >> "$OUT/fuzz.log"
wall=$($PY -c "print(f'{$EPOCHREALTIME - $t0:.1f}')")

$PY - "$OUT" "$T" "$wall" > "$OUT/summary.txt" <<'EOF'
import re, sys
out, budget, wall = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
fuzz, naive = open(f"{out}/fuzz.log").read(), open(f"{out}/naive.log").read()
lines = fuzz.splitlines()
start = next((i for i, l in enumerate(lines) if l.startswith("per minute (")), None)
table = []
if start is not None:
    table = [lines[start], lines[start + 1]]
    table += [l for l in lines[start + 2:] if re.match(r"\s+\d+ ", l) or l.startswith("  last whole minute")]
open(f"{out}/minutes.txt", "w").write("\n".join(table) + "\n")
tot = re.search(r"(\d+) workers together: (\d+) examples, (\d+) cases in ([\d.]+)s \((\d+) cases/s\)", fuzz)
n = re.search(r"naive loop on \S+: (\d+) cases in ([\d.]+)s = ([\d.]+) cases/s", naive)
print(f"naive loop: {n.group(3) if n else '?'} cases/s")
if tot is None:
    print("FAIL: no workers' totals in fuzz.log")
    sys.exit(0)
cases = int(tot.group(3))
rate = cases / wall
print(f"fuzz --workers {tot.group(1)} --time {budget:.0f}: {cases} cases, {tot.group(2)} examples, "
      f"{wall:.1f} s of wall (the command's): {rate:.0f} cases/s "
      f"({'pass' if rate >= 10000 else 'FAIL'}: at least 10,000)")
over = wall - budget
print(f"ended {over:.1f} s after --time, Python's start-up included ({'pass' if over <= 5 else 'FAIL'}: within 5 s); "
      f"fuzz's own wall {float(tot.group(4)):.1f} s")
rows = [l.split() for l in table[2:] if not l.startswith("  last")]
whole = [(int(r[0]), int(r[1]), float(r[2])) for r in rows if "(last" not in " ".join(r)]
if len(whole) >= 2:
    (m0, _, r0), (m1, _, r1) = whole[0], whole[-1]
    best = max(whole, key=lambda w: w[2])
    print(f"minute {m0}: {r0:.0f} cases/s, minute {m1} (last whole): {r1:.0f} cases/s = {r1 / r0:.0%} of the first "
          f"({'pass' if r1 >= 0.9 * r0 else 'FAIL'}: within 10%; the first includes the workers' start-up); "
          f"best minute {best[0]}: {best[2]:.0f} cases/s")
else:
    print("fewer than two whole minutes: no first-vs-last comparison")
print(f"worker examples abandoned at the deadline: {fuzz.count('past the deadline (a pipeline build')}; "
      f"backends stopped while closing: {fuzz.count('still closing')}; findings: {fuzz.count('found:')}")
print(re.search(r"^(bound by|the host's CPU).*$", fuzz, re.M).group(0) if re.search(r"^(bound by|the host's CPU).*$", fuzz, re.M) else "")
EOF
{ echo; cat "$OUT/minutes.txt"; echo; grep -A12 "^where the workers' time went" "$OUT/fuzz.log"; } >> "$OUT/summary.txt"
cat "$OUT/device.txt" "$OUT/summary.txt"
[ -d /tmp/repros-sustained ] && tar czf "$OUT/repros.tgz" -C /tmp repros-sustained 2>/dev/null
exit 0
