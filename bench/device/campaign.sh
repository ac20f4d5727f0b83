#!/usr/bin/env bash
# Issue 17's device campaign on the H100, across three device calls on one warm machine:
#   start   set up, start a 20.5-minute campaign over every family the H100 runs (decode-vector's
#           extension is not exposed there), 8 workers on GPU 0, in its own process session so it
#           outlives the call; in the same call, dump cm2-gemm's raw outputs for issue 15's fit
#   term    SIGTERM the campaign, wait for it to stop cleanly, resume it in the background
#   finish  wait for the budget to be spent (the report is written off the device, from the snapshot)
# Each phase leaves a snapshot of the campaign directory in $OUT (camp.tgz). If the machine was
# given back between calls, `term` and `finish` set up again and unpack the snapshot carried in
# .campsnap/camp.tgz, so no finished round is lost.
#   carry: .gl .whl .carry (.campsnap)        usage: bash bench/device/campaign.sh start|term|finish
set -uo pipefail
D=/tmp/dev; C=$D/camp
fams=""; for f in tensor-layout tensor-view decode cm2-reduce cm2-elementwise cm2-convert cm2-gemm coopvec \
    coopvec-elementwise cm2-program; do fams="$fams --family $f"; done
ready() {
    [ -e $D/env ] && . $D/env && return
    mkdir -p $D
    . bench/device/setup.sh >/dev/null 2>&1
    echo "export PYTHONPATH=$PYTHONPATH PYTHONUNBUFFERED=1 PATH=$PWD/.carry/bin:$PATH" \
         "CTSGEN_GLSLANG_LIBRARY=$(ls $PWD/.carry/glslang/libslang-glslang-*.so)" \
         "CTSGEN_CACHE_DIR=/tmp/ctsgen-cache ${VK_DRIVER_FILES:+VK_DRIVER_FILES=$VK_DRIVER_FILES}" > $D/env
    . $D/env
    if [ ! -d $C ] && [ -e .campsnap/camp.tgz ]; then tar xzf .campsnap/camp.tgz -C $D; echo "unpacked the carried snapshot"; fi
}
background() { setsid nohup python3 -m ctsgen campaign "$@" >> $D/camp.log 2>&1 < /dev/null & echo $! > $D/pid; }
alive() { [ -e $D/pid ] && kill -0 "$(cat $D/pid)" 2>/dev/null; }
snapshot() { tar czf "$OUT/camp.tgz" -C $D camp; cp $D/camp.log "$OUT/camp.log"; python3 -m ctsgen campaign status $C; }
until_s() { while alive && [ $SECONDS -lt "$1" ]; do sleep 5; done; }
ready
case "$1" in
start)
    background start $C --backend vulkan $fams --workers 8 --devices 0 --time 1230 --seed 1717 --max-batch 64
    P=/tmp/packs; mkdir -p $P
    nice timeout 200 python3 -m ctsgen generate --family cm2-gemm --count 2000 --seed 1501 --out $P/cm2-gemm --jobs 4 \
        2>&1 | grep -E "^wrote|error"
    nice timeout 150 python3 bench/dump_device_outputs.py $P/cm2-gemm "$OUT/cm2-gemm-1501.npz" --backend vulkan 2>&1 | tail -3
    until_s 560 ;;
term)
    alive && kill -TERM "$(cat $D/pid)"; until_s $((SECONDS + 240)); alive && echo "still running 240 s after SIGTERM"
    echo "== stopped by SIGTERM"; tail -5 $D/camp.log
    python3 -m ctsgen campaign status $C
    background resume $C
    until_s 560 ;;
finish)
    until_s 420
    alive && { kill -TERM "$(cat $D/pid)"; until_s 500; } ;;
esac
snapshot
