"""Plausible driver bugs in cooperative-matrix conversions and transposes, for the mutation benchmark.

The reference semantics (ConvertVariant.execute) call ``expected_result`` in
``ctsgen.ops.cm2_convert``, which calls ``convert`` in ``ctsgen.oracle.numeric``; each is
looked up in its defining module at call time, and patched there. The rules are SPIR-V's
conversion instructions (float -> integer rounds toward zero; integer narrowing keeps the low
bits) and OpCooperativeMatrixTransposeNV (result (j, i) = source (i, j)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctsgen.ops.cm2_convert import Kind
from ctsgen.model.types import ComponentType
from ctsgen.core.mutant import Mutant
from ctsgen.oracle import numeric
from ctsgen.ops import cm2_convert as oracle

NUMERIC = "ctsgen.oracle.numeric"
ORACLE = "ctsgen.ops.cm2_convert"
FAMILY = "cm2-convert"


def _float_to_int_rounds() -> dict[str, Any]:
    """OpConvertFTo{S,U} rounds to nearest even (and saturates) instead of truncating."""
    original = numeric.convert

    def convert(values: np.ndarray, src: ComponentType, dst: ComponentType) -> np.ndarray:
        if src.is_float and not dst.is_float:
            info = np.iinfo(dst.dtype)
            return np.clip(np.rint(np.asarray(values, np.float64)), info.min, info.max).astype(dst.dtype)
        return original(values, src, dst)

    return {f"{NUMERIC}:convert": convert}


def _int_narrowing_saturates() -> dict[str, Any]:
    """A narrowing OpSConvert / OpUConvert saturates instead of keeping the low bits."""
    original = numeric.convert

    def convert(values: np.ndarray, src: ComponentType, dst: ComponentType) -> np.ndarray:
        if not src.is_float and not dst.is_float and dst.size < src.size:
            info = np.iinfo(dst.dtype)
            return np.clip(np.asarray(values, np.int64), info.min, info.max).astype(dst.dtype)
        return original(values, src, dst)

    return {f"{NUMERIC}:convert": convert}


def _transpose_ignored(component: ComponentType) -> dict[str, Any]:
    """OpCooperativeMatrixTransposeNV of one component type copies the elements in order
    (the N x M result is the source's row-major data reinterpreted, not transposed)."""
    original = oracle.expected_result

    def expected_result(kind: Kind, source: np.ndarray, src: ComponentType, dst: ComponentType
                        ) -> tuple[np.ndarray, np.ndarray]:
        if kind is Kind.transpose and src is component:
            *lead, r, c = source.shape
            return source.reshape(*lead, c, r).copy(), np.zeros((2, *lead, c, r))
        return original(kind, source, src, dst)

    return {f"{ORACLE}:expected_result": expected_result}


MUTANTS = [
    Mutant("convert-float-to-int-rounds", FAMILY,
           "float -> integer conversion rounds to nearest even instead of truncating toward zero",
           _float_to_int_rounds,
           "a float -> integer conversion of a value with a fraction of at least 1/2"),
    Mutant("convert-int-narrowing-saturates", FAMILY,
           "a narrowing integer conversion saturates instead of wrapping",
           _int_narrowing_saturates,
           "a 32 -> 8-bit (or 16-bit) integer conversion of a value outside the narrow range", kill_budget=250),
    Mutant("transpose-ignored-float16", FAMILY,
           "coopMatTransposeNV of float16 matrices copies the elements without transposing",
           lambda: _transpose_ignored(ComponentType.float16),
           "a float16 transpose of any matrix with two or more rows and columns"),
]
