#!/usr/bin/env bash
# One device call (nvidia-h100-x2), issue 27: fuzz --workers N against a campaign of the same workers
# and time, on 1 GPU (N/2 workers, device 0) and on 2 GPUs (N workers, devices 0,1: the same cores per
# GPU), every family the H100 runs, --expect-deviation setdimension-floor in all four; then a campaign
# without it, to count the deviation's buckets (one expected, float programs included, and one Log).
# $OUT: fuzz-1gpu.log, campaign-1gpu.log, fuzz-2gpu.log, campaign-2gpu.log, buckets.log, status-*.txt,
#   report/ (report.md, report.html) of the bucket campaign.
#   carry: .gl .whl .carry   usage: bash bench/device/campaign_scale.sh [SECONDS [WORKERS [SEED]]]
set -uo pipefail
. bench/device/setup.sh >/dev/null 2>&1
T=${1:-120}; W=${2:-32}; SEED=${3:-2700}; H=$((W / 2))
fams=$(python3 -c "from ctsgen.families import families; print(' '.join('--family ' + f for f in families() if f != 'decode-vector'))")
dev="--backend vulkan --expect-deviation setdimension-floor"
run_fuzz() {  # name workers devices
    echo "== ctsgen fuzz $dev $fams --time $T --workers $2 --devices $3 --seed $SEED --keep-going" > "$OUT/fuzz-$1.log"
    timeout $((T + 120)) python3 -m ctsgen fuzz $dev $fams --time "$T" --workers "$2" --devices "$3" --seed "$SEED" \
        --database none --keep-going --shrink-time 20 --repro-dir /tmp/repros-$1 >> "$OUT/fuzz-$1.log" 2>&1
    grep -A9 "workers together" "$OUT/fuzz-$1.log"
}
run_campaign() {  # name workers devices [extra...]
    local name=$1 w=$2 d=$3; shift 3
    rm -rf "/tmp/camp-$name"
    echo "== ctsgen campaign start /tmp/camp-$name $fams --time $T --workers $w --devices $d --seed $SEED $*" > "$OUT/campaign-$name.log"
    /usr/bin/time -f "campaign wall %e s for a $T s budget" timeout $((T + 300)) python3 -m ctsgen campaign start \
        "/tmp/camp-$name" --backend vulkan $fams --time "$T" --workers "$w" --devices "$d" --seed "$SEED" \
        --shrink-time 20 "$@" >> "$OUT/campaign-$name.log" 2>&1
    python3 -m ctsgen campaign status "/tmp/camp-$name" > "$OUT/status-$name.txt" 2>&1
    grep -A9 "workers together" "$OUT/campaign-$name.log"; tail -1 "$OUT/campaign-$name.log"; cat "$OUT/status-$name.txt"
}
nvidia-smi -L
run_fuzz 1gpu "$H" 0
run_campaign 1gpu "$H" 0 --expect-deviation setdimension-floor
run_fuzz 2gpu "$W" 0,1
run_campaign 2gpu "$W" 0,1 --expect-deviation setdimension-floor
run_campaign buckets "$W" 0,1 > "$OUT/buckets.log" 2>&1; cat "$OUT/buckets.log"
python3 -m ctsgen campaign report /tmp/camp-buckets --out "$OUT/report" 2>&1 | tail -1
