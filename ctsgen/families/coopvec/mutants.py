"""Plausible driver bugs in cooperative-vector matrix-vector products, for the mutation benchmark.

The reference semantics (CoopVecVariant.execute) call ``oracle.convert_input``
and ``oracle.matmul`` through this family's oracle module, which looks up
``unpack_int8`` at call time; the backend rebuilds each variant with the
``read_matrix`` method itself, which the variant keeps from ``CoopVecSignature``
(patched on that class, so the coopvec-program family's layers read through it too).
Those are the names patched. The rules are SPV_NV_cooperative_vector's
OpCooperativeVectorMatrixMulAddNV: the input is converted to
InputInterpretation (float -> integer rounds to nearest even, integer ->
integer saturates; docs/spec-decisions.md "coopvec-numeric-model"), packed
int8 holds component 0 in the low byte, and the bias is added.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ctsgen.model.types import CoopVecType
from ctsgen.core.mutant import Mutant
from ctsgen.ops import coopvec as oracle
from ctsgen.ops.coopvec_matrix import CoopVecSignature

ORACLE = "ctsgen.ops.coopvec"
FAMILY = "coopvec"


def _packed_bytes_reversed() -> dict[str, Any]:
    """Packed int8 words are unpacked with component 0 in the high byte."""
    original = oracle.unpack_int8

    def unpack_int8(words: np.ndarray, signed: bool) -> np.ndarray:
        out = original(words, signed)
        return out.reshape(*out.shape[:-1], -1, 4)[..., ::-1].reshape(out.shape)

    return {f"{ORACLE}:unpack_int8": unpack_int8}


def _input_conversion(fault: Any) -> dict[str, Any]:
    """Replace the non-packed integer input conversion by ``fault(x, stored, interp, lo, hi)``."""
    original = oracle.convert_input

    def convert_input(x: np.ndarray, stored: CoopVecType, interp: CoopVecType) -> np.ndarray:
        if interp.is_packed or interp.is_float:
            return original(x, stored, interp)
        lo, hi = (-128, 127) if interp is CoopVecType.sint8 else \
            (0, 255) if interp is CoopVecType.uint8 else (None, None)
        out = fault(x, stored, interp, lo, hi)
        return original(x, stored, interp) if out is None else out

    return {f"{ORACLE}:convert_input": convert_input}


def _truncating(x: np.ndarray, stored: CoopVecType, interp: CoopVecType, lo: int | None, hi: int | None
                ) -> np.ndarray | None:
    """float -> integer input truncates toward zero (then saturates) instead of rounding to nearest even."""
    if not stored.is_float or lo is None:
        return None
    return np.clip(np.trunc(x.astype(np.float64)), lo, hi).astype(np.int64)


def _wrapping(x: np.ndarray, stored: CoopVecType, interp: CoopVecType, lo: int | None, hi: int | None
              ) -> np.ndarray | None:
    """integer -> 8-bit integer input keeps the low byte instead of saturating."""
    if stored.is_float or lo is None:
        return None
    return x.astype(np.int64).astype(np.int8 if lo < 0 else np.uint8).astype(np.int64)


def _bias_ignored() -> dict[str, Any]:
    """OpCooperativeVectorMatrixMulAddNV drops its bias (computes W x only)."""
    original = oracle.matmul

    def matmul(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, result: CoopVecType) -> np.ndarray:
        return original(x, w, None, result)

    return {f"{ORACLE}:matmul": matmul}


def _e4m3_as_fnuz() -> dict[str, Any]:
    """An E4M3 matrix is decoded as e4m3fnuz (exponent bias 8, not 7): every value halves."""
    original = CoopVecSignature.read_matrix

    def read_matrix(self: Any, buf: np.ndarray, moff: int, stride: int) -> np.ndarray:
        w = original(self, buf, moff, stride)
        if self.matrixInterpretation is not CoopVecType.floate4m3:
            return w
        bits = w.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        with np.errstate(invalid="ignore"):
            return bits.view(ml_dtypes.float8_e4m3fnuz).astype(np.float64)

    # the method the family's variant inherits, patched where it is defined
    return {"ctsgen.ops.coopvec_matrix:CoopVecSignature.read_matrix": read_matrix}


def _last_product_dropped() -> dict[str, Any]:
    """A K loop that stops one product early: component K-1 never reaches the sum (K > 1)."""
    original = oracle.matmul

    def matmul(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, result: CoopVecType) -> np.ndarray:
        if w.shape[1] > 1:
            x, w = x[:, :-1], w[:, :-1]
        return original(x, w, bias, result)

    return {f"{ORACLE}:matmul": matmul}


def _infinity_saturates() -> dict[str, Any]:
    """Float inputs are converted with saturation: an infinite component becomes the max normal."""
    original = oracle.convert_input

    def convert_input(x: np.ndarray, stored: CoopVecType, interp: CoopVecType) -> np.ndarray:
        out = original(x, stored, interp)
        if interp.is_float:
            big = float(ml_dtypes.finfo(interp.dtype).max)
            out = np.clip(out, -big, big)
        return out

    return {f"{ORACLE}:convert_input": convert_input}


MUTANTS = [
    Mutant("coopvec-packed-bytes-reversed", FAMILY,
           "packed int8 input words are unpacked high byte first",
           _packed_bytes_reversed,
           "a matmul with a packed int8 input whose word holds unlike bytes", kill_budget=300),
    Mutant("coopvec-float-to-int-truncates", FAMILY,
           "float -> int8 input conversion truncates instead of rounding to nearest even",
           lambda: _input_conversion(_truncating),
           "a float16 input interpreted as int8 with a fraction of 1/2", kill_budget=800),
    Mutant("coopvec-int-to-int-wraps", FAMILY,
           "integer -> int8/uint8 input conversion wraps instead of saturating",
           lambda: _input_conversion(_wrapping),
           "a 32-bit integer input outside the 8-bit interpretation's range", kill_budget=200),
    Mutant("coopvec-bias-ignored", FAMILY, "MatrixMulAdd ignores its bias",
           _bias_ignored,
           "a matmuladd with a non-zero bias"),
    Mutant("coopvec-e4m3-as-fnuz", FAMILY, "an E4M3 matrix is decoded as e4m3fnuz (bias 8)",
           _e4m3_as_fnuz,
           "a matmul with an E4M3 matrix (optimal layout) and a non-zero product", kill_budget=1150),
    Mutant("coopvec-last-product-dropped", FAMILY, "the K loop stops one product early",
           _last_product_dropped,
           "a float or integer matmul with K > 1 and a non-zero last product (grid data keep it "
           "visible at any K)"),
    Mutant("coopvec-infinity-saturates", FAMILY, "an infinite float input is clamped to the max normal",
           _infinity_saturates,
           "a float matmul with special values (an Inf input component)", kill_budget=650),
]
