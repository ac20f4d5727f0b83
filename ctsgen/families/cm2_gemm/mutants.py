"""Plausible driver bugs in the workgroup-scope GEMM tile, for the mutation benchmark.

The reference semantics (GemmVariant.execute) call ``expected_tile`` by the
name imported into this family's case module: that is the name patched.
The rule (VK_NV_cooperative_matrix2 proposal, "4. Examples"):
D[tile] = alpha * (A x B)[tile] + beta * C[tile].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctsgen.core.mutant import Mutant

CASE = "ctsgen.families.cm2_gemm.case"
FAMILY = "cm2-gemm"


def _epilogue(fault: Any) -> dict[str, Any]:
    """Call the correct tile with (alpha, beta) replaced by ``fault(alpha, beta)``."""
    from ctsgen.families.cm2_gemm import case

    original = case.expected_tile

    def expected_tile(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: Any, beta: Any, *rest: Any
                      ) -> tuple[np.ndarray, np.ndarray]:
        return original(a, b, c, *fault(alpha, beta), *rest)

    return {f"{CASE}:expected_tile": expected_tile}


def _as_python(x: Any) -> float | int:
    return float(x) if isinstance(x, (float, np.floating)) else int(x)


def _product(alpha: Any, beta: Any) -> float | int:
    """alpha * beta; for integers modulo 2^32 (the tile wraps modulo 2^32 anyway)."""
    p = _as_python(alpha) * _as_python(beta)
    return p if isinstance(p, float) else p & 0xFFFFFFFF


MUTANTS = [
    Mutant("gemm-ignores-beta", FAMILY, "the epilogue adds C unscaled (beta treated as 1)",
           lambda: _epilogue(lambda alpha, beta: (alpha, type(_as_python(beta))(1))),
           "a GEMM tile with beta != 1 and a non-zero C"),
    Mutant("gemm-alpha-scales-c", FAMILY, "alpha scales the whole sum: alpha * (A x B + beta * C)",
           lambda: _epilogue(lambda alpha, beta: (alpha, _product(alpha, beta))),
           "a GEMM tile with alpha != 1, beta != 0 and a non-zero C"),
]
