"""OpCooperativeMatrixMulAddKHR: ``Result = A x B + C``, integer saturation included.

../shared/specs/SPV_KHR_cooperative_matrix.txt, OpCooperativeMatrixMulAddKHR:

* "If any of the Matrix{A,B,C}SignedComponentsKHR operands are present, elements of the
  corresponding matrix operands are sign-extended to the precision of 'Result Type', otherwise they
  are zero-extended" (GLSL sets the operand from the component type: int8_t / int32_t signed).
* Integer products "are performed at the precision of the 'Result Type' and the resulting value will
  equal the low-order N bits of the correct result R" without SaturatingAccumulation; with it, "if
  ... overflow or underflow occurs as part of calculating that intermediate result, the result of the
  instruction is undefined" (:func:`saturation_defined` says whether the operands keep it defined).
* "Integer additions of the elements of that intermediate result with those of 'C' are performed at
  the precision of 'Result Type', are exact, and are saturating if the SaturatingAccumulation
  Cooperative Matrix Operand is present, with the signedness of the saturation being that of the
  components of 'Result Type'"; otherwise the low-order N bits.
* Floats: "The order of the operations is implementation-dependent": the cm2-gemm family's bound
  (``ops.cm2_gemm.tile_error``, decision "cm2-gemm-bound") plus K + 1 smallest normals of the result
  type, a subnormal partial sum flushed (as cm2-program's MulAdd, decision "cm2-program-float-domain").
"""

from __future__ import annotations

import numpy as np

from ctsgen.model.types import ComponentType
from ctsgen.ops import cm2_gemm as cm2_gemm_ops
from ctsgen.oracle.propagation import smallest_normal


def integer_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The exact A x B of integer matrices (int64; 8-bit operands sum far below 2^63)."""
    return a.astype(np.int64) @ b.astype(np.int64)


def saturation_defined(a: np.ndarray, b: np.ndarray, result: ComponentType) -> bool:
    """Whether every partial sum of A x B, in any order, fits the result type: the only A, B for which
    SaturatingAccumulation has a defined result. A sum of products lies between the sum of the
    negative products and the sum of the positive ones, whatever the order."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    positive = np.maximum(a64, 0) @ np.maximum(b64, 0) + np.minimum(a64, 0) @ np.minimum(b64, 0)
    negative = np.maximum(a64, 0) @ np.minimum(b64, 0) + np.minimum(a64, 0) @ np.maximum(b64, 0)
    info = np.iinfo(result.dtype)
    return bool((positive <= int(info.max)).all() and (negative >= int(info.min)).all())


def expected_muladd(a: np.ndarray, b: np.ndarray, c: np.ndarray, result: ComponentType, *, saturating: bool = False,
                    strict: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(expected Result, two-sided tolerance 2 x M x N) of A (M x K) x B (K x N) + C (M x N).

    Integer: exact (tolerance 0). With ``strict`` (an oracle) raises ValueError for a saturating case
    whose intermediate product may overflow (undefined: draw operands that keep
    :func:`saturation_defined`); without it (a reference execution) saturates the exact sum anyway."""
    rows, cols = c.shape
    if not result.is_float:
        if saturating:
            if strict and not saturation_defined(a, b, result):
                raise ValueError("A x B overflows the result type under SaturatingAccumulation (undefined) -> "
                                 "draw smaller or same-signed operands")
            info = np.iinfo(result.dtype)
            d = np.clip(integer_product(a, b) + c.astype(np.int64), int(info.min), int(info.max)).astype(result.dtype)
        else:
            bits = 8 * result.size
            wide = (integer_product(a, b) + c.astype(np.int64)) & ((1 << bits) - 1)
            d = wide.astype(np.uint64).astype(result.bits_dtype).view(result.dtype)
        return d, np.zeros((2, rows, cols))
    everything = slice(None)
    d, tol = cm2_gemm_ops.expected_tile(a, b, c, 1, 1, everything, everything, c.astype(result.dtype), result)
    tol = tol + (a.shape[1] + 1) * smallest_normal(result.dtype)
    return d, np.stack([tol, tol])


def accumulator_after(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """What a MulAdd's C operand holds after the instruction (A, B and C as the caller's oracle holds
    them; a replacement returns C's dtype): C itself. A SPIR-V value is immutable (SPIR-V 1.6, 2.2.1 "Static Single Assignment"), and
    OpCooperativeMatrixMulAddKHR defines only its Result. Every oracle that evaluates a MulAdd and reads
    its C operand again (the kernels, cm2-program) takes C's later value from here, so one documented
    deviation (lavapipe-muladd-accumulator) replaces it for all of them."""
    return c
