"""Which rounding the device applies when converting to bfloat16 (triage of cm2-convert warnings).

Runs every ``*.to.bfloat16*`` variant of a cm2-convert pack on the Vulkan backend and counts, per
variant, how many inexact elements match round-to-nearest-even, round-toward-zero, and
round-half-away-from-zero. Usage: python3 bf16_rounding.py PACK
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np

from ctsgen.backends.vulkan import VulkanBackend
from ctsgen.pack.read import load_pack
from ctsgen.execute.batch import build_batch, case_outputs

BF16 = np.dtype(ml_dtypes.bfloat16)


def toward_zero(exact: np.ndarray, rte: np.ndarray) -> np.ndarray:
    """Step the RTE result one ulp toward zero where it rounded away from zero."""
    bits = rte.view(np.uint16).astype(np.int32)
    away = np.abs(rte.astype(np.float64)) > np.abs(exact)
    return np.where(away, bits - 1, bits).astype(np.uint16).view(BF16)


def half_away(exact: np.ndarray, rte: np.ndarray, rtz: np.ndarray) -> np.ndarray:
    """Round half away from zero: differs from RTE only at ties that RTE took toward zero."""
    lo = rtz.astype(np.float64)
    hi = (rtz.view(np.uint16).astype(np.int32) + 1).astype(np.uint16).view(BF16).astype(np.float64)
    tie = np.abs(np.abs(exact) - np.abs(lo)) == np.abs(np.abs(hi) - np.abs(exact))
    return np.where(tie, np.sign(exact) * np.abs(hi), rte.astype(np.float64)).astype(BF16)


def main(root: str) -> None:
    pack = load_pack(root)
    backend = VulkanBackend()
    groups: dict[str, list] = {}
    for c in pack.cases:
        if ".to.bfloat16" in c.variant_id:
            groups.setdefault(c.variant_id, []).append(c)
    backend.prepare([pack.variants[v] for v in groups])
    for vid, cases in sorted(groups.items()):
        arrays = [c.arrays() for c in cases]
        batch = build_batch(pack.variants[vid], [c.params for c in cases], [a[0] for a in arrays])
        out = backend.run(batch.dispatch, 30.0)
        n = rte_n = rtz_n = rna_n = 0
        for i, c in enumerate(cases):
            src = arrays[i][0][0].astype(np.float64)
            got = case_outputs(batch, out, i)[1].view(np.uint16)
            rte = arrays[i][1][1]  # the oracle's round-to-nearest-even result
            rtz = toward_zero(src, rte)
            rna = half_away(src, rte, rtz)
            inexact = rte.astype(np.float64) != src
            n += int(inexact.sum())
            rte_n += int((got == rte.view(np.uint16))[inexact].sum())
            rtz_n += int((got == rtz.view(np.uint16))[inexact].sum())
            rna_n += int((got == rna.view(np.uint16))[inexact].sum())
        print(f"{vid}: inexact {n}, match RTE {rte_n}, RTZ {rtz_n}, half-away {rna_n}")
    backend.close()


if __name__ == "__main__":
    main(sys.argv[1])
