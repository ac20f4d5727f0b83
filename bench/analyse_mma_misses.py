"""Where the H100 MMA model misses: replay dumped cm2-gemm outputs under MMA-step variants.

    python bench/analyse_mma_misses.py PACK OUT.npz [--types float16_to_float32] [--show 3]

Reads every float-accumulator cm2-gemm case of PACK whose buffers OUT.npz holds (A, B, C from
the npz where it has them, else regenerated from the case's seed; written by
bench/dump_device_outputs.py; keys ``<case name>::<buffer>``), recomputes the device's D tile
from the *dumped* A, B and C under a grid of MMA-step hypotheses and prints, per hypothesis, the
share of D elements reproduced bit for bit. Then, for the first hypothesis, the misses are
described (K, whether beta*C is zero, the exponent spread of the step, the ulp distance) and
the first ``--show`` (shortest K first) are printed with their operands' bits, their products
as exact fractions and both hypotheses' results.

The hypotheses (issue 15 part 2; Fasi et al. 2021, "Numerical behavior of NVIDIA tensor cores",
PeerJ CS 7:e330; Xie et al. 2025, "MMA-Sim", arXiv:2511.10909, section on the fused dot-add):

* ``k_step``: products fused per step (8, 16, 32); steps chained along K from a zero accumulator;
* ``align``: the exponent each term is aligned to: ``magnitude`` (floor(log2 |term|), the
  model of ctsgen 578845f) or ``exponent`` (a product's exponent is e_a + e_b, the sum of its
  factors' exponents, whatever its significand's carry; the accumulator's its own);
* ``acc_in_max``: whether the accumulator's exponent takes part in the reference exponent
  (False: the products' largest alone sets the grid, the accumulator is cut on it too);
* ``frac``: fractional bits kept below the reference exponent;
* ``terms``: each aligned term ``trunc`` (toward zero) or ``rne`` (to nearest even) on the grid;
* ``acc``: the accumulator ``term`` (aligned and truncated like a product) or ``exact`` (added
  to the truncated product sum without truncation);
* ``round``: the final sum to fp32 ``rtz`` or ``rne``.

Exactness: each step's terms are integers on the step's grid, summed as int64 (the code
asserts the bounds) and rounded to fp32 by integer shifts, never as a float64 sum.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ctsgen.families import get_family
from ctsgen.model.types import ComponentType
from ctsgen.pack.read import load_pack

F32_MANT = 23


@dataclass(frozen=True)
class Hyp:
    k_step: int = 16
    align: str = "magnitude"
    frac: int = 25
    acc: str = "term"
    round: str = "rtz"
    acc_in_max: bool = True
    terms: str = "trunc"

    def label(self) -> str:
        extra = ("" if self.acc_in_max else "/E-products-only") + ("" if self.terms == "trunc" else "/terms-rne")
        return f"k{self.k_step}/{self.align}/f{self.frac}/acc-{self.acc}/{self.round}{extra}"


@dataclass
class Tile:
    name: str
    a: np.ndarray      # M x K float64 (values of fp16 / bf16)
    b: np.ndarray      # K x N
    c: np.ndarray      # M x N float64 (fp32 values), the tile of C
    alpha: float
    beta: float
    d: np.ndarray      # M x N float32, the device's tile of D
    a_type: ComponentType


def exponent_of(x: np.ndarray, emin: int) -> np.ndarray:
    """floor(log2 |x|) clamped below at the format's smallest normal exponent (a subnormal's
    exponent field); -10**6 for zero."""
    _, e = np.frexp(np.where(x != 0, x, 1.0))
    return np.where(x != 0, np.maximum(e - 1, emin), -10**6)


def round_f32_int(s: np.ndarray, scale: np.ndarray, rounding: str) -> np.ndarray:
    """``s * 2^scale`` (s int64, |s| < 2^53, exact) rounded to fp32 (normal range), as float64:
    the integer cut to 24 significant bits toward zero, or to nearest even."""
    assert np.all(np.abs(s) < 2**53)
    mag = np.abs(s)
    _, nb = np.frexp(mag.astype(np.float64))  # bit length (exact: mag < 2^53)
    drop = np.maximum(nb - (F32_MANT + 1), 0).astype(np.int64)
    q = mag >> drop
    if rounding == "rne":
        r = mag - (q << drop)
        half = np.where(drop > 0, np.int64(1) << np.maximum(drop - 1, 0), 0)
        up = (drop > 0) & ((r > half) | ((r == half) & (q & 1 == 1)))
        q = q + up
    return np.sign(s) * np.ldexp(q.astype(np.float64), drop + scale)


def step(prods: np.ndarray, ea: np.ndarray, acc: np.ndarray, h: Hyp) -> np.ndarray:
    """One fused step: ``prods`` (..., k) exact float64, ``ea`` their alignment exponents,
    ``acc`` (...) fp32 values. Returns the fp32 result (float64)."""
    acc_e = exponent_of(acc, -126)
    big = np.maximum(ea.max(axis=-1), acc_e) if h.acc_in_max else ea.max(axis=-1)
    grid_e = np.where(big > -10**5, big, acc_e) - h.frac  # term units: 2^grid_e
    cut = np.trunc if h.terms == "trunc" else np.rint
    terms = cut(np.ldexp(prods, -grid_e[..., None]))
    assert np.all(np.abs(terms) < 2.0**52)
    tsum = terms.astype(np.int64).sum(axis=-1)
    if h.acc == "term":
        acc_units = cut(np.ldexp(acc, -grid_e))
        assert np.all(np.abs(acc_units) < 2.0**52)
        s = tsum + acc_units.astype(np.int64)
        return round_f32_int(s, grid_e, h.round)
    # acc exact: scale down to the accumulator's own ulp where finer
    low = np.minimum(grid_e, np.where(acc != 0, acc_e - F32_MANT, grid_e))
    shift = (grid_e - low).astype(np.int64)
    assert np.all(shift < 20)
    s = (tsum << shift) + np.ldexp(acc, -low).astype(np.int64)
    return round_f32_int(s, low, h.round)


def product_exponents(a: np.ndarray, b: np.ndarray, a_type: ComponentType, h: Hyp) -> tuple[np.ndarray, np.ndarray]:
    prods = a[:, None, :] * b.T[None, :, :]
    if h.align == "magnitude":
        return prods, exponent_of(prods, -10**5)
    emin = -14 if a_type is ComponentType.float16 else -126
    e = exponent_of(a, emin)[:, None, :] + exponent_of(b.T, emin)[None, :, :]
    return prods, np.where(prods != 0, e, -10**6)


def chain(t: Tile, h: Hyp) -> np.ndarray:
    """The MMA result r (fp32 values) of the tile: steps along K from a zero accumulator."""
    prods, pe = product_exponents(t.a, t.b, t.a_type, h)
    acc = np.zeros(prods.shape[:2])
    for k0 in range(0, prods.shape[-1], h.k_step):
        acc = step(prods[..., k0:k0 + h.k_step], pe[..., k0:k0 + h.k_step], acc, h)
    return acc


def gemm(t: Tile, h: Hyp) -> np.ndarray:
    """D's tile: the shader's epilogue alpha * r + beta * C in fp32."""
    f = np.float32
    return f(t.alpha) * chain(t, h).astype(f) + f(t.beta) * t.c.astype(f)


def step_references(t: Tile, h: Hyp) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per element and step (M x N x steps) under ``h``'s accumulator chain: the largest
    term's binade floor(log2 max|term|), the largest exponent field max(e_a + e_b, e_acc),
    and the spread of the products' exponent fields (largest minus smallest nonzero)."""
    prods, pe = product_exponents(t.a, t.b, t.a_type, h)
    _, pe_fields = product_exponents(t.a, t.b, t.a_type, Hyp(align="exponent"))
    acc = np.zeros(prods.shape[:2])
    mags, fields, spreads = [], [], []
    for k0 in range(0, prods.shape[-1], h.k_step):
        p, f = prods[..., k0:k0 + h.k_step], pe_fields[..., k0:k0 + h.k_step]
        acc_e = exponent_of(acc, -126)
        mags.append(np.maximum(exponent_of(np.abs(p).max(axis=-1), -10**5), acc_e))
        fields.append(np.maximum(f.max(axis=-1), acc_e))
        spreads.append(f.max(axis=-1) - np.where(p != 0, f, 10**6).min(axis=-1))
        acc = step(p, pe[..., k0:k0 + h.k_step], acc, h)
    return np.stack(mags, -1), np.stack(fields, -1), np.stack(spreads, -1)


def describe_misses(tiles: list[Tile], old: Hyp, new: Hyp) -> None:
    """What the elements ``old`` misses have in common, seen along ``new``'s chain."""
    stats: Counter = Counter()
    spreads: list[int] = []
    for t in tiles:
        got = gemm(t, old).astype(np.float32)
        miss = ~((got.view(np.uint32) == t.d.view(np.uint32)) | ((got == 0) & (t.d == 0)))
        mags, fields, spread = step_references(t, new)
        carry_step = (mags > fields).any(axis=-1)
        K = t.a.shape[1]
        stats["elements"] += miss.size
        stats["misses"] += int(miss.sum())
        stats["misses with a step whose largest term carries (binade > exponent field)"] += int((miss & carry_step).sum())
        stats["elements with such a step"] += int(carry_step.sum())
        stats[f"misses at K={K}"] += int(miss.sum())
        stats["misses with beta*C == 0"] += int((miss & (t.beta * t.c == 0)).sum())
        r_old = chain(t, old).astype(np.float32).view(np.int32).astype(np.int64)
        r_new = chain(t, new).astype(np.float32).view(np.int32).astype(np.int64)
        for u, n in Counter(np.abs(r_old - r_new)[miss].tolist()).items():
            stats[f"misses whose r (before the epilogue) is {u} fp32 ulp(s) off"] += n
        spreads.extend(np.where(mags > fields, spread, -1).max(-1)[miss].tolist())
    if spreads:
        q = np.percentile(spreads, [0, 50, 100])
        print(f"  exponent-field spread of the products in a carrying step, over the misses: "
              f"min {q[0]:.0f}, median {q[1]:.0f}, max {q[2]:.0f}")
    for k in sorted(stats, key=str):
        print(f"  {k}: {stats[k]}")


def work_out(t: Tile, i: int, j: int, old: Hyp, new: Hyp) -> None:
    """One element's operands, exact products and sum, and its r under both hypotheses."""
    from fractions import Fraction  # noqa: PLC0415
    a, b = t.a[i], t.b[:, j]
    print(f"case {t.name} D[{i},{j}] (tile coordinates), K={a.size}, alpha={t.alpha}, beta={t.beta}")
    dt = t.a_type.dtype
    print("  a bits:", " ".join(f"{int(x):04x}" for x in a.astype(dt).view(np.uint16)))
    print("  b bits:", " ".join(f"{int(x):04x}" for x in b.astype(dt).view(np.uint16)))
    print("  a:", a.tolist())
    print("  b:", b.tolist())
    prods = [Fraction(x) * Fraction(y) for x, y in zip(a.tolist(), b.tolist())]
    print("  products:", [str(p) for p in prods])
    for h in (old, new):
        r = gemm(Tile(t.name, a[None], b[:, None], t.c[i:i + 1, j:j + 1], 1.0, 0.0, t.d[:1, :1], t.a_type), h)
        print(f"  {h.label()}: r = {float(r[0, 0])!r} bits {np.float32(r[0, 0]).view(np.uint32):08x}")
    print(f"  device D = {float(t.d[i, j])!r} bits {t.d[i, j].view(np.uint32):08x}, beta*C = {t.beta * t.c[i, j]!r}")
    print(f"  exact sum = {sum(prods)} = {float(sum(prods))!r}")


def load_tiles(pack_dir: Path, npz: Path, types: set[str]) -> tuple[list[Tile], list[str]]:
    pack = load_pack(pack_dir)
    dumped = np.load(npz)
    fam = get_family("cm2-gemm")
    tiles, absent = [], []
    for case in pack.cases:
        if case.record["family"] != "cm2-gemm" or case.variant_id.split(".")[1] not in types:
            continue
        if f"{case.name}::D" not in dumped:
            absent.append(case.name)
            continue
        mc = fam.case_from_json(case.record["parameters"])
        v = mc.shader
        M, N, K = mc.dims()
        get = lambda n, dt, size: np.asarray(dumped[f"{case.name}::{n}"]).view(dt).ravel()[:size]  # noqa: E731
        if f"{case.name}::A" in dumped:
            inputs = get("A", v.a_type.dtype, M * K), get("B", v.a_type.dtype, K * N), get("C", np.float32, M * N)
        else:  # a dump of D alone (dump_device_outputs.py --keep D): the case's seeded inputs
            inputs = mc.inputs()
        a, b, c = (x.astype(np.float64) for x in inputs)
        a, b, c = a.reshape(M, K), b.reshape(K, N), c.reshape(M, N)
        d = get("D", np.float32, M * N).reshape(M, N)
        rows = slice(mc.ty * v.tile_m, (mc.ty + 1) * v.tile_m)
        cols = slice(mc.tx * v.tile_n, (mc.tx + 1) * v.tile_n)
        alpha, beta = float(np.float32(mc.alpha)), float(np.float32(mc.beta))  # the case's words are fp32
        tiles.append(Tile(case.name, a[rows], b[:, cols], c[rows, cols], alpha, beta, d[rows, cols], v.a_type))
    return tiles, absent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack", type=Path)
    ap.add_argument("outputs", type=Path)
    ap.add_argument("--types", default="float16_to_float32")
    ap.add_argument("--show", type=int, default=3)
    ap.add_argument("--grid", default="default", help="'default' or 'wide'")
    args = ap.parse_args()
    tiles, absent = load_tiles(args.pack, args.outputs, set(args.types.split(",")))
    print(f"{len(tiles)} cases with dumped outputs, {len(absent)} of the pack's without; "
          f"{sum(t.d.size for t in tiles)} D elements")
    if args.grid == "wide":
        hyps = [Hyp(*x) for x in itertools.product(
            (8, 16, 32), ("magnitude", "exponent"), (24, 25, 26), ("term", "exact"), ("rtz", "rne"), (True, False),
            ("trunc", "rne"))]
    else:
        hyps = [Hyp(), Hyp(align="exponent"), Hyp(frac=26), Hyp(k_step=8), Hyp(acc="exact"),
                Hyp(align="exponent", k_step=8), Hyp(align="exponent", k_step=32), Hyp(align="exponent", frac=24),
                Hyp(align="exponent", frac=26), Hyp(align="exponent", acc="exact"),
                Hyp(align="exponent", acc_in_max=False), Hyp(align="exponent", terms="rne"),
                Hyp(align="exponent", round="rne")]
    for h in hyps:
        hit = tot = 0
        for t in tiles:
            got = gemm(t, h).astype(np.float32)
            ok = (got.view(np.uint32) == t.d.view(np.uint32)) | ((got == 0) & (t.d == 0))
            hit += int(ok.sum())
            tot += ok.size
        print(f"{h.label():40s} {hit:8d}/{tot} {100 * hit / tot:7.3f}%")
    if args.grid == "default":
        old_h, new_h = Hyp(), Hyp(align="exponent")
        print(f"misses of {old_h.label()}, along {new_h.label()}'s chain:")
        describe_misses(tiles, old_h, new_h)
        shown = 0
        for t in sorted(tiles, key=lambda t: (t.a.shape[1], t.beta != 0, t.alpha != 1)):
            got = gemm(t, old_h).astype(np.float32)
            for i, j in zip(*np.nonzero(got.view(np.uint32) != t.d.view(np.uint32))):
                if shown < args.show:
                    work_out(t, int(i), int(j), old_h, new_h)
                    shown += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
