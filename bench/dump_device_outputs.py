"""Run a pack on a backend and keep every case's raw output buffers (for numeric-model fits).

A results file keeps only the elements that fail their rule, so it cannot
tell how a passing result was rounded. Fitting a device numeric model (issue
15: which accumulation order, alignment and rounding reproduce the H100 bit
for bit) needs every output element, so this runs each variant's cases in
one dispatch per batch and saves, per case and buffer, what came back:

    python bench/dump_device_outputs.py PACK OUT.npz [--backend vulkan] [--batch 64] [--timeout 120]
        [--keep D,result] [--float-only]

OUT.npz maps ``"<case name>::<buffer name>"`` to the case's slice of that
buffer after the dispatch; the pack holds the inputs and the oracle's
expectations. ``--keep`` names the buffers to save (the outputs a fit compares; its inputs
it regenerates from the pack), all by default; ``--float-only`` runs and saves only the
variants with a float buffer among them (what a numeric model predicts). A dispatch that
fails (timeout, lost device) is reported and its cases are left out.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from ctsgen.backends.base import BackendError
from ctsgen.backends.registry import open_backend
from ctsgen.pack.read import load_pack
from ctsgen.execute.batch import build_batch, case_outputs


#: buffer dtypes that hold float values
FLOATS = {"float16", "bfloat16", "float32"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--backend", default="vulkan", choices=["vulkan", "reference"])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--keep", default="", help="comma-separated buffer names to save (default: every buffer)")
    ap.add_argument("--float-only", action="store_true",
                    help="run and save only the variants with a float buffer among those kept "
                         "(what a numeric model predicts)")
    args = ap.parse_args()
    keep = {k for k in args.keep.split(",") if k}
    pack = load_pack(args.pack)
    backend = open_backend(args.backend, isolation="none")
    profile = backend.profile()
    by_variant: dict[str, list] = defaultdict(list)
    for case in pack.cases:
        by_variant[case.variant_id].append(case)
    if args.float_only:
        by_variant = {vid: cases for vid, cases in by_variant.items()
                      if any(b.dtype in FLOATS and (not keep or b.name in keep) for b in pack.variants[vid].buffers)}
    saved: dict[str, np.ndarray] = {}
    t0, failed, skipped = time.perf_counter(), 0, 0
    try:
        try:  # the driver builds pipelines in parallel ahead (VulkanBackend.prepare), not one per variant
            backend.prepare([pack.variants[vid] for vid in by_variant
                             if not profile.unsupported_reason(pack.variants[vid].requirements)])
        except BackendError as exc:
            print(f"building pipelines ahead: {type(exc).__name__}: {exc}", file=sys.stderr)
        for vid, cases in by_variant.items():
            variant = pack.variants[vid]
            if profile.unsupported_reason(variant.requirements):
                skipped += len(cases)
                continue
            for start in range(0, len(cases), args.batch):
                chunk = cases[start:start + args.batch]
                batch = build_batch(variant, [c.params for c in chunk], [c.arrays()[0] for c in chunk])
                try:
                    results = backend.run(batch.dispatch, args.timeout)
                except BackendError as exc:
                    failed += len(chunk)
                    print(f"{vid}: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                for i, case in enumerate(chunk):
                    for spec, arr in zip(variant.buffers, case_outputs(batch, results, i)):
                        if keep and spec.name not in keep:
                            continue
                        saved[f"{case.name}::{spec.name}"] = np.array(arr)
    finally:
        backend.close()
    np.savez_compressed(args.out, **saved)
    ran = sum(len(c) for c in by_variant.values())
    print(f"{ran} of the pack's {len(pack.cases)} cases selected: {ran - failed - skipped} saved, {failed} failed, "
          f"{skipped} NotSupported, {time.perf_counter() - t0:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
