#!/usr/bin/env bash
# Multi-GPU scaling of the pytest plugin: one pre-compiled pack, three runs.
#
#   source bench/device/setup.sh          # on the device machine (repo root)
#   bash bench/device/xdist_scaling.sh .pack/tl2000
#
#   single  one process on GPU 0                       (pytest --ctsgen-devices 0)
#   n1      one xdist worker on GPU 0                  (-n 1 --ctsgen-devices 0)
#   n2      two xdist workers, gw0 on GPU 0, gw1 on 1  (-n 2 --ctsgen-devices 0,1)
#
# Every run prepares its pipelines up front (each xdist worker exactly those of
# the variants planned for it) and writes JUnit; the summary compares every
# case's outcome across runs and reports wall time, speed-up over `single`,
# and each process's up-front build (the `prepared` / `prepare_s` properties).
#
# Writes into $OUT (default bench/results/xdist): summary.md, summary.json,
# <run>.xml (JUnit), <run>.log (pytest output). Exit 0 when every run finished
# (pytest exit 0 or 1: failing cases are results) with identical outcomes.
#
# The NVIDIA driver keeps built pipelines in an on-disk cache shared by every process, so
# a later run would reuse the first run's builds (seen on an H200 pair: 12.5 s of builds in
# the first run, 0.1 s in the next). Every run here starts cold: __GL_SHADER_DISK_CACHE=0
# unless the caller sets it.
#
# Environment: BACKEND (vulkan; `reference` for a dry run without a GPU),
# DEVICES (0,1: the devices of run n2), LEG_TIMEOUT (seconds per run, 150: three runs fit the device tool's 10 minutes),
# PYTHON (python3). Needs numpy, ml_dtypes, hypothesis, jinja2, pytest,
# pytest-xdist and, for vulkan, vulkan_py; no shader compiler (the pack holds SPIR-V).
set -uo pipefail

PACK=${1:?usage: bash bench/device/xdist_scaling.sh PACK_DIR  (a pack written by ctsgen generate)}
PACK=$(cd "$PACK" && pwd) || exit 2
[ -f "$PACK/manifest.json" ] || { echo "xdist_scaling: $PACK has no manifest.json; give a pack directory" >&2; exit 2; }
BACKEND=${BACKEND:-vulkan}
DEVICES=${DEVICES:-0,1}
LEG_TIMEOUT=${LEG_TIMEOUT:-150}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-bench/results/xdist}
export __GL_SHADER_DISK_CACHE=${__GL_SHADER_DISK_CACHE:-0}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)

say() { echo "[xdist_scaling $(date +%H:%M:%S)] $*"; }

if ! "$PYTHON" -c "import xdist" 2>/dev/null; then
    echo "xdist_scaling: pytest-xdist is not importable by $PYTHON; install it (pip install pytest-xdist) or put its wheel on PYTHONPATH" >&2
    exit 2
fi
# The plugin is a pytest11 entry point when ctsgen is installed; on PYTHONPATH only, load it by name
# (both at once would register it twice).
if "$PYTHON" -c "import sys; from importlib.metadata import entry_points; \
sys.exit(not any(e.value == 'ctsgen.pytest_plugin' for e in entry_points(group='pytest11')))"; then
    PLUGIN=()
else
    PLUGIN=(-p ctsgen.pytest_plugin)
fi

WORK=$(mktemp -d)  # rootdir of the runs: no repository conftest or ini options
trap 'rm -rf "$WORK"' EXIT
{
    echo "pack: $PACK"
    "$PYTHON" -c "import json,sys; m=json.load(open(sys.argv[1])); print(f\"cases: {len(m['cases'])}, variants: {len(m['variants'])}\")" "$PACK/manifest.json"
    echo "backend: $BACKEND, devices: $DEVICES, timeout per run: $LEG_TIMEOUT s"
    "$PYTHON" -c "import pytest, xdist; print(f'pytest {pytest.__version__}, pytest-xdist {xdist.__version__}')"
    "$PYTHON" -c "import ctsgen; print('ctsgen', ctsgen.__version__)"
    echo "__GL_SHADER_DISK_CACHE=$__GL_SHADER_DISK_CACHE (0: no driver pipeline cache between runs)"
    command -v nvidia-smi >/dev/null && nvidia-smi -L
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

run_leg() {  # name, extra pytest arguments...
    local name=$1; shift
    say "$name: pytest $* (up to $LEG_TIMEOUT s)"
    local t0=$EPOCHREALTIME
    (cd "$WORK" && timeout -k 10 "$LEG_TIMEOUT" "$PYTHON" -m pytest "${PLUGIN[@]}" -p no:cacheprovider -q \
        --ctsgen-pack "$PACK" --ctsgen-backend "$BACKEND" --junitxml="$OUT/$name.xml" "$@") > "$OUT/$name.log" 2>&1
    local rc=$?
    local wall
    wall=$("$PYTHON" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$EPOCHREALTIME")
    echo "$name $rc $wall $*" >> "$OUT/legs.txt"
    say "$name: exit $rc after $wall s: $(tail -n 1 "$OUT/$name.log")"
}

rm -f "$OUT/legs.txt"
run_leg single --ctsgen-devices 0
run_leg n1 -n 1 --ctsgen-devices 0
run_leg n2 -n 2 --ctsgen-devices "$DEVICES"

"$PYTHON" - "$OUT" <<'EOF'
"""Summarise the runs: outcome counts, per-case agreement, wall time, each process's up-front build."""
import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

out = Path(sys.argv[1])
legs = []
for line in (out / "legs.txt").read_text().splitlines():
    name, rc, wall, *args = line.split()
    leg = {"name": name, "rc": int(rc), "wall_s": float(wall), "args": " ".join(args),
           "outcomes": {}, "counts": {}, "prepare": {}}
    xml = out / f"{name}.xml"
    if xml.exists() and xml.stat().st_size:
        for tc in ET.parse(xml).getroot().iter("testcase"):
            kind = next((c.tag for c in tc if c.tag in ("failure", "error", "skipped")), "passed")
            leg["outcomes"][tc.get("name").split("@", 1)[0]] = kind
            props = {p.get("name"): p.get("value") for p in tc.iter("property")}
            if "prepared" in props:
                who = f"{props['worker']} (device {props['device']})" if "worker" in props else "main"
                leg["prepare"][who] = [int(props["prepared"]), float(props["prepare_s"])]
        leg["counts"] = dict(sorted(Counter(leg["outcomes"].values()).items()))
    legs.append(leg)

base = legs[0]
same = all(leg["outcomes"] == base["outcomes"] and leg["outcomes"] for leg in legs)
finished = all(leg["rc"] in (0, 1) for leg in legs)
rows = ["| run | pytest arguments | exit | wall (s) | speed-up vs single | outcomes | up-front build per process |",
        "|---|---|---|---|---|---|---|"]
for leg in legs:
    counts = ", ".join(f"{k} {v}" for k, v in leg["counts"].items()) or "no JUnit"
    prep = "; ".join(f"{w}: {n} pipelines in {s:.1f} s" for w, (n, s) in sorted(leg["prepare"].items())) or "-"
    rows.append(f"| {leg['name']} | `{leg['args']}` | {leg['rc']} | {leg['wall_s']:.1f} | "
                f"{base['wall_s'] / leg['wall_s']:.2f}x | {counts} | {prep} |")
diffs = []
for leg in legs[1:]:
    changed = sorted(n for n in base["outcomes"].keys() | leg["outcomes"].keys()
                     if base["outcomes"].get(n) != leg["outcomes"].get(n))
    if changed:
        diffs.append(f"- {leg['name']} differs from {base['name']} on {len(changed)} cases, e.g. "
                     + ", ".join(f"{n}: {base['outcomes'].get(n)} -> {leg['outcomes'].get(n)}" for n in changed[:5]))
verdict = ("every case has the same outcome in every run" if same and finished
           else "NOT COMPARABLE: " + ("a run did not finish (exit other than 0/1; 124 = timeout)" if not finished
                                      else "outcomes differ"))
text = "\n".join(["# xdist scaling", "", (out / "environment.txt").read_text().strip().replace("\n", "  \n"), "",
                  *rows, "", verdict + ".", *diffs, ""])
(out / "summary.md").write_text(text)
(out / "summary.json").write_text(json.dumps(
    {"same_outcomes": same, "finished": finished,
     "legs": [{k: v for k, v in leg.items() if k != "outcomes"} for leg in legs]}, indent=1))
print(text)
sys.exit(0 if same and finished else 1)
EOF
