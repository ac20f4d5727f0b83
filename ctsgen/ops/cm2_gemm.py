"""Expected result of the proposal's workgroup-scope GEMM tile (VK_NV_cooperative_matrix2
proposal, "4. Examples"): D[tile] = alpha * (A[tile rows, :] x B[:, tile cols]) + beta * C[tile].

A is M x K, B is K x N, C and D are M x N, all row-major through 2-D tensor
layouts; one workgroup computes the tile at (ty, tx) by looping over K in
TILE_K slices with coopMatMulAdd. Elements of D outside the tile are left
alone (they keep their poison).

Integers wrap modulo 2^32 and are exact. Floats: A and B hold multiples of
1/8 in [-2, 2] and C small integers, alpha and beta are 0, +-1/2, +-1 or +-2,
so every product is exact and scaling by alpha or beta is exact; the only
rounding is in the sums. Bound (docs/spec-decisions.md "cm2-gemm-bound"):
|D - exact| <= (gamma_K + 2u) * (|alpha| * sum_k |a_ik||b_kj| + |beta||c_ij|)
+ u * |exact|, u the accumulator type's unit roundoff: gamma_K for the
K-term dot product in any order (Higham eq. 3.5), then the rounding of the
epilogue's addition, then the rounding of the expected value stored.
"""

from __future__ import annotations

import numpy as np

from ctsgen.model.types import ComponentType
from ctsgen.oracle.numeric import gamma, unit_roundoff


def expected_tile(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float | int, beta: float | int,
                  rows: slice, cols: slice, d0: np.ndarray, component: ComponentType
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(expected D (M x N), tolerance) for the tile ``rows`` x ``cols``; ``d0`` is D's initial content."""
    d = d0.copy()
    tol = np.zeros(d.shape)
    at, bt, ct = a[rows, :], b[:, cols], c[rows, cols]
    if not component.is_float:
        mask = (1 << 32) - 1
        prod = _exact_integer_product(at, bt)
        val = (int(alpha) * prod + int(beta) * ct.astype(np.int64)) & mask
        d[rows, cols] = val.astype(np.uint64).astype(np.uint32).view(component.dtype)
        return d, tol
    af, bf = at.astype(np.float64), bt.astype(np.float64)
    exact = alpha * (af @ bf) + beta * ct.astype(np.float64)
    scale = abs(alpha) * (np.abs(af) @ np.abs(bf)) + abs(beta) * np.abs(ct.astype(np.float64))
    d[rows, cols] = exact.astype(component.dtype)
    tol[rows, cols] = tile_error(scale, exact, a.shape[1], component)
    return d, tol


def tile_error(scale: np.ndarray, exact: np.ndarray, k: int, component: ComponentType) -> np.ndarray:
    """The family's bound per element (docs/spec-decisions.md "cm2-gemm-bound"):
    (gamma_K + 2u) * scale + u * |exact|, ``scale`` = |alpha| sum_k |a_ik||b_kj| + |beta||c_ij|, u the
    accumulator's unit roundoff. cm2-program reuses it as one MulAdd's device allowance."""
    u = unit_roundoff(component)
    return (gamma(k, u) + 2 * u) * scale + u * np.abs(exact)


#: integers up to 2^53 are exact in float64
_FLOAT64_EXACT = 2**53


def _exact_integer_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` of integer matrices as exact int64 (|sum| < 2^31 * K fits).

    numpy multiplies integer matrices without BLAS, several times slower than float64; when
    the types bound every partial sum below 2^53 in magnitude (8-bit inputs: at most 2^16 * K),
    the float64 product is exact in any summation order: the same integers, bit for bit."""
    if _magnitude(a.dtype) * _magnitude(b.dtype) * a.shape[1] < _FLOAT64_EXACT:
        return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.int64)
    return a.astype(np.int64) @ b.astype(np.int64)


def _magnitude(dtype: np.dtype) -> int:
    """The largest |x| of an integer type."""
    info = np.iinfo(dtype)
    return max(-int(info.min), int(info.max))
