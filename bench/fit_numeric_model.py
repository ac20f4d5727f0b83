"""Replay dumped device outputs against candidate numeric models; report the bit-exact share.

    python bench/dump_device_outputs.py PACK OUT.npz --backend vulkan     # on the device
    python bench/fit_numeric_model.py PACK OUT.npz [--candidates all]      # anywhere

For every case of a family that declares ``numeric_model`` (cm2-gemm, cm2-convert, coopvec), each
candidate (the H100 model and its one-knob variations, ctsgen.oracle.models.h100.H100Params)
predicts the output buffers; the table gives, per family and type combination (the variant
id's second field, e.g. ``float16_to_float32``), how many predicted elements the device
reproduced bit for bit (the sign of zero aside) under each candidate. Elements that keep the
poison value are not counted. The candidate with 100% is the fitted model; a miss is printed
with its case and element so it can be explained (docs/validation.md, numeric models).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from ctsgen.families import get_family
from ctsgen.oracle.models.h100 import H100, H100Params
from ctsgen.oracle.values import sentinel_bits, to_bits
from ctsgen.pack.read import load_pack

CANDIDATES: dict[str, H100Params] = {
    "h100": H100,
    "mma-rne": replace(H100, mma_rounding="rne"),
    "frac-24": replace(H100, frac_bits=24),
    "frac-26": replace(H100, frac_bits=26),
    "align-magnitude": replace(H100, mma_alignment="magnitude"),  # products aligned by their binade (the model before)
    "coopvec-block-32": replace(H100, coopvec_block=32),
    "coopvec-reversed": replace(H100, coopvec_reverse=True),
    "bf16-rne": replace(H100, bf16_rounding="rne"),
}


def bit_exact(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per element: equal bits, or both zero (sign of zero not counted)."""
    bits = np.dtype(f"uint{8 * want.dtype.itemsize}")
    same = got.view(bits) == want.view(bits)
    with np.errstate(invalid="ignore"):
        return same | ((got.astype(np.float64) == 0) & (want.astype(np.float64) == 0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack", type=Path)
    ap.add_argument("outputs", type=Path, help="npz written by bench/dump_device_outputs.py")
    ap.add_argument("--show-misses", type=int, default=5, help="misses of the h100 candidate to print")
    args = ap.parse_args()
    try:
        pack = load_pack(args.pack)
        dumped = np.load(args.outputs)
    except (OSError, ValueError) as exc:
        print(f"fit_numeric_model: error: {exc} -> pass a pack directory and the npz of dump_device_outputs.py",
              file=sys.stderr)
        return 2
    hits: dict[tuple[str, str], Counter] = defaultdict(Counter)
    totals: Counter = Counter()
    misses: list[str] = []
    for case in pack.cases:
        fam = get_family(case.record["family"])
        if fam.numeric_model is None:
            continue
        model_case = fam.case_from_json(case.record["parameters"])
        key = (fam.name, case.variant_id.split(".")[1])
        for name, params in CANDIDATES.items():
            predicted = fam.numeric_model(model_case, params)
            if predicted is None:
                break
            for spec, want in zip(case.buffers, predicted):
                stored = f"{case.name}::{spec.name}"
                if want is None or stored not in dumped:
                    continue
                got = np.asarray(dumped[stored]).view(want.dtype).ravel()
                want = want.ravel()
                comp = next(c for c in _components() if c.dtype == want.dtype)
                counted = to_bits(want, comp) != sentinel_bits(comp)
                ok = bit_exact(got, want) & counted
                hits[key][name] += int(ok.sum())
                if name == "h100":
                    totals[key] += int(counted.sum())
                    for k in np.flatnonzero(counted & ~ok)[:max(0, args.show_misses - len(misses))]:
                        misses.append(f"{case.name} {spec.name}[{k}]: device {float(got[k])!r}, "
                                      f"model {float(want[k])!r}")
    if not totals:
        print("no modelled case of the pack has dumped outputs (families with a numeric model: "
              "cm2-gemm, cm2-convert, coopvec)")
        return 1
    names = list(CANDIDATES)
    print("| family | types | elements | " + " | ".join(names) + " |")
    print("|---|---|---:|" + "---:|" * len(names))
    for key in sorted(totals):
        shares = [f"{100 * hits[key][n] / totals[key]:.2f}%" for n in names]
        print(f"| {key[0]} | {key[1]} | {totals[key]} | " + " | ".join(shares) + " |")
    for m in misses:
        print("miss:", m)
    return 0


def _components():
    from ctsgen.model.types import ComponentType
    return list(ComponentType)


if __name__ == "__main__":
    sys.exit(main())
