"""The NVIDIA H100's float arithmetic inside cooperative-matrix and cooperative-vector
instructions, as pure vectorised numpy (issue 15, part 2).

* **MMA (cm2-gemm's MulAdd)**, after Microsoft's MMA-Sim description of the H100's fp16, bf16
  and tf32 MMA (Xie et al., "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores and Matrix
  Cores", arXiv:2511.10909, 2025; and Fasi et al., "Numerical behavior of NVIDIA tensor cores",
  PeerJ CS 7:e330, 2021): one MMA step takes ``k_step`` products (exact) and the accumulator
  element as ``k_step + 1`` terms. Each term has an alignment exponent: a product's is the sum
  e_a + e_b of its factors' exponents (a subnormal factor counts as the format's smallest
  normal exponent, as in MMA-Sim; the fitted data has none), *not* the binade of the product
  (1.5 * 1.5 = 2.25 aligns by 0, not 1); the accumulator's is its own. Every term is truncated (toward zero) to ``frac_bits`` fractional
  bits below the largest alignment exponent E, i.e. to multiples of 2^(E - frac_bits) (25;
  fp8: 13), the truncated terms are added exactly, and the sum is rounded toward zero to fp32.
  A K-long dot product is a chain of such steps in K order (k_step = 16 for 16-bit inputs, 32
  for fp8), starting from a zero accumulator; the epilogue ``alpha * r + beta * C`` is
  ordinary fp32 arithmetic (RNE). Fitted on the H100 (docs/validation.md, "Device numeric
  models"): bit-exact on every float16 and bfloat16 -> float32 element of cm2-gemm seed 1501;
  aligning by the products' binades instead (``mma_alignment="magnitude"``, this module's rule
  before) keeps one bit fewer whenever the largest product's significand carries, and misses
  1.58% of the float16 elements.
* **coopvec fp16 MatMul / MatMulAdd**, measured by this project (docs/validation.md, "coopvec
  accumulation model"): an fp16 accumulator starting at the bias adds the binary32 sum of each
  block of 16 products, rounding to fp16 (RNE) after each block
  (:func:`ctsgen.oracle.numeric.accumulate_blocks_f16`).
* **bfloat16 conversions** truncate (round toward zero), measured on the H100
  (docs/validation.md: cm2-convert's bfloat16 results).

Every knob a mutant turns is a field of :class:`H100Params`, so a mutated model is
``dataclasses.replace(H100, ...)``. bench/fit_numeric_model.py replays dumped device outputs
against it and its one-knob variations (bench/results/numeric-models/).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctsgen.model.types import ComponentType
from ctsgen.oracle.numeric import accumulate_blocks_f16, convert, float_format, neighbours, round_to_nearest_even


@dataclass(frozen=True)
class H100Params:
    """The model's knobs (their H100 values by default)."""

    frac_bits: int = 25            # fractional bits kept below the largest alignment exponent
    frac_bits_fp8: int = 13
    mma_alignment: str = "exponents"  # a product's alignment exponent: "exponents" (e_a + e_b)
                                      # or "magnitude" (floor(log2 |a * b|), one bit fewer on a carry)
    mma_rounding: str = "rtz"      # rounding of an MMA step's sum to fp32: "rtz" or "rne"
    coopvec_block: int = 16        # products summed in binary32 before each fp16 rounding
    coopvec_reverse: bool = False  # blocks taken in reverse K order (a mutant)
    bf16_rounding: str = "rtz"     # float -> bfloat16 conversions


H100 = H100Params()

#: MMA K-step per input type (products per fused sum).
K_STEP = {ComponentType.float16: 16, ComponentType.bfloat16: 16}
K_STEP_FP8 = 32


def round_f32(x: np.ndarray, rounding: str) -> np.ndarray:
    """float64 values rounded to fp32 toward zero ("rtz") or to nearest even ("rne"), as float64."""
    if rounding == "rne":
        return round_to_nearest_even(x, ComponentType.float32).astype(np.float64)
    lo, hi = neighbours(x, ComponentType.float32)
    return np.where(x < 0, hi, lo)


#: Alignment exponent of a zero term: below any real one, so a zero never sets E.
ZERO_EXPONENT = -(1 << 20)

#: ``mma_alignment`` values.
ALIGNMENTS = ("exponents", "magnitude")


def exponents_of(x: np.ndarray, emin: int) -> np.ndarray:
    """floor(log2 |x|) of float64 values, at least ``emin`` (a subnormal's exponent is the format's
    smallest normal one, its significand below 1); :data:`ZERO_EXPONENT` for zeros. int64."""
    x = np.asarray(x, dtype=np.float64)
    _, e = np.frexp(np.where(x != 0, x, 1.0))  # |x| in [2^(e-1), 2^e)
    return np.where(x != 0, np.maximum(e.astype(np.int64) - 1, emin), ZERO_EXPONENT)


def mma_step(products: np.ndarray, acc: np.ndarray, frac_bits: int, rounding: str,
             exponents: np.ndarray | None = None) -> np.ndarray:
    """One fused MMA step: ``products`` (..., k) exact, ``acc`` (...) fp32 values (float64).

    ``exponents`` (..., k) are the products' alignment exponents (e_a + e_b; :func:`gemm` forms
    them); None aligns each product by its binade floor(log2 |product|). With E the largest
    alignment exponent of the products and the accumulator (fp32's own binade), every term,
    the accumulator included, is truncated toward zero to a multiple of 2^(E - frac_bits); the
    exact sum is rounded to fp32. Exact in float64: a product's significand is below 4, so a
    truncated term is an integer below 2^(frac_bits + 2) times that power of two, and k + 1 <= 33
    of them sum below 2^(frac_bits + 8) <= 2^33 of it."""
    if exponents is None:
        exponents = exponents_of(products, ZERO_EXPONENT + 1)
    exponents = np.where(products != 0, exponents, ZERO_EXPONENT)
    big = np.maximum(exponents.max(axis=-1), exponents_of(acc, float_format(ComponentType.float32)[1]))
    big = np.where(big > ZERO_EXPONENT, big, 0)  # every term zero: any grid gives 0
    grid = np.ldexp(1.0, big - frac_bits)[..., None]
    terms = np.concatenate([products, acc[..., None]], axis=-1)
    s = (np.trunc(terms / grid) * grid).sum(axis=-1)
    return round_f32(s, rounding)


def gemm(a: np.ndarray, b: np.ndarray, a_type: ComponentType, params: H100Params = H100) -> np.ndarray:
    """A (M x K) times B (K x N) as a chain of MMA steps in K order from a zero fp32
    accumulator (float64 array of fp32 values); products aligned by ``params.mma_alignment``."""
    if params.mma_alignment not in ALIGNMENTS:
        raise ValueError(f"H100Params.mma_alignment {params.mma_alignment!r} -> use one of {', '.join(ALIGNMENTS)}")
    af, bf = a.astype(np.float64), b.astype(np.float64)
    k_step = K_STEP.get(a_type, K_STEP_FP8)
    frac = params.frac_bits if a_type in K_STEP else params.frac_bits_fp8
    prods = af[:, None, :] * bf.T[None, :, :]  # M x N x K, exact
    exps = None
    if params.mma_alignment == "exponents":
        emin = float_format(a_type)[1]
        exps = exponents_of(af, emin)[:, None, :] + exponents_of(bf, emin).T[None, :, :]
    acc = np.zeros(prods.shape[:2])
    for k0 in range(0, prods.shape[-1], k_step):  # one iteration per MMA step, vectorised over the tile
        ks = slice(k0, k0 + k_step)
        acc = mma_step(prods[..., ks], acc, frac, params.mma_rounding, None if exps is None else exps[..., ks])
    return acc


def gemm_epilogue(r: np.ndarray, c: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """``alpha * r + beta * c`` in fp32 (each operation rounded to nearest even), float64 values."""
    f = np.float32
    return (f(alpha) * r.astype(np.float32) + f(beta) * c.astype(np.float32)).astype(np.float64)


def coopvec_f16(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, params: H100Params = H100) -> np.ndarray:
    """fp16 MatMul / MatMulAdd results (invocations x M, float64 values of fp16)."""

    n_blocks = -(-w.shape[-1] // params.coopvec_block)
    order = np.arange(n_blocks)[::-1] if params.coopvec_reverse else None
    return accumulate_blocks_f16(x, w, bias, params.coopvec_block, order)


def convert_values(values: np.ndarray, src: ComponentType, dst: ComponentType, params: H100Params = H100
                   ) -> np.ndarray:
    """Conversions as the H100 performs them: any -> bfloat16 truncates (``bf16_rounding``
    "rtz"); everything else as :func:`ctsgen.oracle.numeric.convert` (round to nearest even)."""
    if dst is ComponentType.bfloat16 and params.bf16_rounding == "rtz":
        x = np.asarray(values, dtype=src.dtype).astype(np.float64)
        lo, hi = neighbours(x, ComponentType.bfloat16)
        return np.where(x < 0, hi, lo).astype(dst.dtype)
    return convert(values, src, dst)
