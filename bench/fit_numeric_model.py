"""Replay dumped device outputs against candidate numeric models; report the bit-exact share.

    python bench/dump_device_outputs.py PACK OUT.npz --backend vulkan     # on the device
    python bench/fit_numeric_model.py PACK OUT.npz [--candidates all]      # anywhere

For every case of a family that declares ``numeric_model`` (cm2-gemm, cm2-convert, cm2-reduce,
coopvec), each candidate that concerns the family (the H100 model and its one-knob variations,
ctsgen.oracle.models.h100.H100Params) predicts the output buffers; one table per family gives,
per type combination (:func:`type_combination`), the share of predicted elements the device
reproduced bit for bit (the sign of zero aside) under each candidate, and which candidates
share the highest. Elements that keep the poison value are not counted. The candidate with
100% is the fitted model; a miss of the h100 candidate is printed with its case and element so
it can be explained (docs/validation.md, numeric models).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from ctsgen.families import get_family
from ctsgen.model.types import ComponentType
from ctsgen.oracle.models.h100 import H100, H100Params
from ctsgen.oracle.values import sentinel_bits, to_bits
from ctsgen.pack.read import load_pack

#: name -> (parameters, the families whose predictions the knob changes). "h100" is the model;
#: each other candidate turns one knob (or one knob and its rounding) away from it.
CANDIDATES: dict[str, tuple[H100Params, tuple[str, ...]]] = {
    "h100": (H100, ("cm2-gemm", "coopvec", "cm2-convert", "cm2-reduce")),
    "mma-rne": (replace(H100, mma_rounding="rne"), ("cm2-gemm",)),
    "frac-24": (replace(H100, frac_bits=24), ("cm2-gemm", "coopvec")),
    "frac-26": (replace(H100, frac_bits=26), ("cm2-gemm", "coopvec")),
    "align-magnitude": (replace(H100, mma_alignment="magnitude"), ("cm2-gemm", "coopvec")),  # the model before
    # an fp16 accumulator (cm2-gemm float16 -> float16, coopvec fp16 and fp8): a binary32 block sum
    # added to the accumulator (the model before call-1601) instead of one fused step, or the fused
    # step rounded otherwise
    "f16-blocks": (replace(H100, f16_acc="blocks"), ("cm2-gemm", "coopvec")),
    "f16-fused-rtz": (replace(H100, f16_rounding="rtz"), ("cm2-gemm", "coopvec")),
    "f16-fused-rtz-rne": (replace(H100, f16_rounding="rtz-rne"), ("cm2-gemm", "coopvec")),
    "f16-k-step-8": (replace(H100, f16_acc_k_step=8), ("cm2-gemm",)),
    "f16-k-step-32": (replace(H100, f16_acc_k_step=32), ("cm2-gemm",)),
    "coopvec-block-32": (replace(H100, coopvec_block=32), ("coopvec",)),
    "coopvec-reversed": (replace(H100, coopvec_reverse=True), ("coopvec",)),
    "fp8-block-32": (replace(H100, coopvec_block_fp8=32), ("coopvec",)),  # the prior before call-1601
    "bf16-rne": (replace(H100, bf16_rounding="rne"), ("cm2-convert",)),
    "bf16-rtz-exact": (replace(H100, bf16_source="exact"), ("cm2-convert",)),  # the rule before call-1701
    # cm2-reduce: each result's terms in the spec oracle's order instead of the fragment layout
    "reduce-halving": (replace(H100, reduce_order="halving"), ("cm2-reduce",)),  # the prior before call-1601
    "reduce-pairwise": (replace(H100, reduce_order="pairwise"), ("cm2-reduce",)),
    "reduce-sequential": (replace(H100, reduce_order="sequential"), ("cm2-reduce",)),
    "reduce-exact": (replace(H100, reduce_order="exact"), ("cm2-reduce",)),
    "reduce-f32": (replace(H100, reduce_width="float32"), ("cm2-reduce",)),  # fragment order, binary32 partials
}


def type_combination(family: str, variant_id: str) -> str:
    """A variant id's type combination, the table's row: cm2-gemm ``float16_to_float32``, coopvec
    op and interpretations (``matmul.float16_as_floate4m3.m_floate4m3``), cm2-reduce mode, combine
    and component (``row.sum.float16``), cm2-convert ``float32_to_bfloat16``."""
    parts = variant_id.split(".")
    if family == "coopvec":
        return ".".join(parts[1:4])
    if family == "cm2-reduce":
        return ".".join(parts[1:4])
    if family == "cm2-convert" and "to" in parts:
        return f"{parts[2]}_to_{parts[parts.index('to') + 1]}"
    return parts[1]


def bit_exact(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per element: equal bits, or both zero (sign of zero not counted)."""
    bits = np.dtype(f"uint{8 * want.dtype.itemsize}")
    same = got.view(bits) == want.view(bits)
    with np.errstate(invalid="ignore"):
        return same | ((got.astype(np.float64) == 0) & (want.astype(np.float64) == 0))


def fit(pack, dumped, candidates: dict[str, tuple[H100Params, tuple[str, ...]]], show_misses: int = 0
        ) -> tuple[dict[tuple[str, str], Counter], Counter, list[str], Counter]:
    """Replay every modelled case of ``pack`` under each candidate that concerns its family:
    (hits per (family, type combination) and candidate, counted elements per key, up to
    ``show_misses`` misses of the first candidate, dumped cases per key that the first candidate
    does not model: its family model returned None, and no candidate counts them)."""
    hits: dict[tuple[str, str], Counter] = defaultdict(Counter)
    totals: Counter = Counter()
    misses: list[str] = []
    unmodelled: Counter = Counter()
    first = next(iter(candidates))
    for case in pack.cases:
        fam = get_family(case.record["family"])
        if fam.numeric_model is None:
            continue
        model_case = fam.case_from_json(case.record["parameters"])
        key = (fam.name, type_combination(fam.name, case.variant_id))
        for name, (params, families) in candidates.items():
            if fam.name not in families:
                continue
            predicted = fam.numeric_model(model_case, params)
            if predicted is None:
                if any(f"{case.name}::{b.name}" in dumped for b in case.buffers):
                    unmodelled[key] += 1
                break
            for spec, want in zip(case.buffers, predicted):
                stored = f"{case.name}::{spec.name}"
                if want is None or stored not in dumped:
                    continue
                got = np.asarray(dumped[stored]).view(want.dtype).ravel()
                want = want.ravel()
                comp = next(c for c in ComponentType if c.dtype == want.dtype)
                counted = to_bits(want, comp) != sentinel_bits(comp)
                ok = bit_exact(got, want) & counted
                hits[key][name] += int(ok.sum())
                if name == first:
                    totals[key] += int(counted.sum())
                    for k in np.flatnonzero(counted & ~ok)[:max(0, show_misses - len(misses))]:
                        misses.append(f"{case.name} {spec.name}[{k}]: device {float(got[k])!r}, "
                                      f"model {float(want[k])!r}")
    return hits, totals, misses, unmodelled


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
    hits, totals, misses, unmodelled = fit(pack, dumped, CANDIDATES, args.show_misses)
    if not totals:
        print("no modelled case of the pack has dumped outputs (families with a numeric model: "
              "cm2-gemm, cm2-convert, cm2-reduce, coopvec)")
        return 1
    for family in sorted({f for f, _ in totals}):
        names = [n for n, (_, fams) in CANDIDATES.items() if family in fams]
        print(f"\n{family}: share of float elements predicted bit for bit; h100 misses = elements the "
              "model gets wrong; best = the candidates with the highest share\n")
        print("| types | elements | h100 misses | " + " | ".join(names) + " | best |")
        print("|---|---:|---:|" + "---:|" * len(names) + "---|")
        for key in sorted(k for k in totals if k[0] == family):
            top = max(hits[key][n] for n in names)
            best = ", ".join(n for n in names if hits[key][n] == top)
            shares = [f"{100 * hits[key][n] / totals[key]:.2f}%" for n in names]
            print(f"| {key[1]} | {totals[key]} | {totals[key] - hits[key]['h100']} | " + " | ".join(shares)
                  + f" | {best} |")
    print()
    for family in sorted({f for f, _ in unmodelled}):
        keys = ", ".join(f"{k} ({n})" for (f, k), n in sorted(unmodelled.items()) if f == family)
        print(f"{family}: dumped cases the h100 model does not predict (exact by the spec, or not modelled): {keys}")
    for m in misses:
        print("miss:", m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
