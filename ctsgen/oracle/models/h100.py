"""The NVIDIA H100's float arithmetic inside cooperative-matrix and cooperative-vector
instructions, as pure vectorised numpy (issue 15, part 2).

* **MMA (cm2-gemm's MulAdd)**, after Microsoft's MMA-Sim description of the H100's fp16, bf16
  and tf32 MMA (and Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021): one MMA
  step takes ``k_step`` products (exact) and the accumulator element as ``k_step + 1`` terms,
  aligns every term to the largest one's exponent and truncates it (toward zero) to
  ``frac_bits`` fractional bits below that exponent (25; fp8: 13), adds the truncated terms
  exactly, and rounds the sum toward zero to fp32. A K-long dot product is a chain of such
  steps in K order (k_step = 16 for 16-bit inputs, 32 for fp8), starting from a zero
  accumulator; the epilogue ``alpha * r + beta * C`` is ordinary fp32 arithmetic (RNE).
* **coopvec fp16 MatMul / MatMulAdd**, measured by this project (docs/validation.md, "coopvec
  accumulation model"): an fp16 accumulator starting at the bias adds the binary32 sum of each
  block of 16 products, rounding to fp16 (RNE) after each block
  (:func:`ctsgen.oracle.numeric.accumulate_blocks_f16`).
* **bfloat16 conversions** truncate (round toward zero), measured on the H100
  (docs/validation.md: cm2-convert's bfloat16 results).

Every knob a mutant turns is a field of :class:`H100Params`, so a mutated model is
``dataclasses.replace(H100, ...)``. None of this is fitted on a device yet: bench/
fit_numeric_model.py replays dumped device outputs against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctsgen.model.types import ComponentType
from ctsgen.oracle.numeric import accumulate_blocks_f16, convert, neighbours, round_to_nearest_even


@dataclass(frozen=True)
class H100Params:
    """The model's knobs (their H100 values by default)."""

    frac_bits: int = 25            # fractional bits kept below the largest term's exponent
    frac_bits_fp8: int = 13
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


def mma_step(products: np.ndarray, acc: np.ndarray, frac_bits: int, rounding: str) -> np.ndarray:
    """One fused MMA step: ``products`` (..., k) exact, ``acc`` (...) fp32 values (float64).

    Terms aligned to the largest magnitude's exponent E and truncated toward zero to multiples
    of 2^(E - frac_bits); the exact sum rounded to fp32. Exact in float64: each truncated term
    is an integer below 2^(frac_bits + 1) times that power of two, and k + 1 <= 33 of them sum
    below 2^32 of it."""
    terms = np.concatenate([products, acc[..., None]], axis=-1)
    big = np.max(np.abs(terms), axis=-1, keepdims=True)
    _, e = np.frexp(np.where(big > 0, big, 1.0))  # big in [2^(e-1), 2^e)
    grid = np.ldexp(1.0, e - 1 - frac_bits)
    s = (np.trunc(terms / grid) * grid).sum(axis=-1)
    return round_f32(s, rounding)


def gemm(a: np.ndarray, b: np.ndarray, a_type: ComponentType, params: H100Params = H100) -> np.ndarray:
    """A (M x K) times B (K x N) as a chain of MMA steps in K order from a zero fp32
    accumulator (float64 array of fp32 values)."""
    af, bf = a.astype(np.float64), b.astype(np.float64)
    k_step = K_STEP.get(a_type, K_STEP_FP8)
    frac = params.frac_bits if a_type in K_STEP else params.frac_bits_fp8
    acc = np.zeros((af.shape[0], bf.shape[1]))
    for k0 in range(0, af.shape[1], k_step):  # one iteration per MMA step, vectorised over the tile
        prods = af[:, None, k0:k0 + k_step] * bf.T[None, :, k0:k0 + k_step]  # M x N x k
        acc = mma_step(prods, acc, frac, params.mma_rounding)
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
