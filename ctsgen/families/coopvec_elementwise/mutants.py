"""Plausible driver bugs in element-wise cooperative-vector instructions, for the mutation benchmark.

The reference semantics (ElementwiseVariant.execute) call this family's
oracle module by attribute (``oracle.load``, ``oracle.store``,
``oracle.apply``), and ``apply`` looks up ``float_op``, ``integer_op`` and
``convert_values`` at call time: those are the names patched. The rules
broken are SPV_NV_cooperative_vector's (3.42.8 loads/stores at a byte
Offset, 3.42.11 conversions, 3.42.13/14 arithmetic and bit instructions
component by component) and SPIR-V's (OpConvertFToS/FToU round toward zero;
a shift amount below the bit width shifts by that amount).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctsgen.ops.coopvec_elementwise_ops import Op
from ctsgen.model.types import CoopVecType
from ctsgen.core.mutant import Mutant
from ctsgen.ops import coopvec_elementwise as oracle

ORACLE = "ctsgen.ops.coopvec_elementwise"
FAMILY = "coopvec-elementwise"


def _load_offset_32_aligned() -> dict[str, Any]:
    """OpCooperativeVectorLoadNV rounds its byte offset down to a multiple of 32 (an internal
    32-byte access granule) instead of honouring the 16-byte alignment the spec allows."""
    original = oracle.load

    def load(buf: np.ndarray, byte_offsets: np.ndarray, n: int) -> np.ndarray:
        return original(buf, np.asarray(byte_offsets) & ~31, n)

    return {f"{ORACLE}:load": load}


def _store_whole_granules() -> dict[str, Any]:
    """OpCooperativeVectorStoreNV writes whole 16-byte granules: the components after the N-th
    up to the next 16-byte boundary are overwritten with zeros."""
    original = oracle.store

    def store(buf: np.ndarray, byte_offsets: np.ndarray, values: np.ndarray) -> None:
        per = 16 // buf.dtype.itemsize
        n = values.shape[-1]
        padded = np.zeros((*values.shape[:-1], -(-n // per) * per), dtype=values.dtype)
        padded[..., :n] = values
        original(buf, byte_offsets, padded)

    return {f"{ORACLE}:store": store}


def _shift_masked_to_4_bits() -> dict[str, Any]:
    """Shift amounts are masked to 4 bits (a 16-bit shifter): 32-bit shifts by 16..31 shift by 0..15."""
    original = oracle.integer_op

    def integer_op(op: Op, operands: list[np.ndarray], t: CoopVecType) -> np.ndarray:
        if op in (Op.shl, Op.shr):
            operands = [operands[0], (operands[1].astype(np.int64) & 15).astype(t.dtype)]
        return original(op, operands, t)

    return {f"{ORACLE}:integer_op": integer_op}


def _f16_to_int_rounds_to_nearest() -> dict[str, Any]:
    """fp16 -> integer conversions round to nearest even instead of toward zero."""
    original = oracle.convert_values

    def convert_values(a: np.ndarray, t: CoopVecType, r: CoopVecType) -> np.ndarray:
        if t is CoopVecType.float16 and not r.is_float:
            info = np.iinfo(r.dtype)
            a = np.clip(np.rint(a.astype(np.float64)), info.min, info.max).astype(t.dtype)
        return original(a, t, r)

    return {f"{ORACLE}:convert_values": convert_values}


def _vts_drops_last_component() -> dict[str, Any]:
    """OpVectorTimesScalar leaves the last component unscaled (a loop bound off by one)."""
    original = oracle.float_op

    def float_op(op: Op, operands: list[np.ndarray], scalar: float, t: CoopVecType) -> np.ndarray:
        out = original(op, operands, scalar, t)
        if op is Op.vts:
            out[..., -1] = operands[0][..., -1]
        return out

    return {f"{ORACLE}:float_op": float_op}


MUTANTS = [
    Mutant("coopvec-elementwise-load-offset-32-aligned", FAMILY,
           "OpCooperativeVectorLoadNV rounds its byte offset down to a multiple of 32",
           _load_offset_32_aligned,
           "any case whose load lands on an odd multiple of 16 bytes (e.g. invocation 1 with a 16-byte stride)"),
    Mutant("coopvec-elementwise-store-whole-granules", FAMILY,
           "OpCooperativeVectorStoreNV zero-fills its vector's last 16-byte granule past component N",
           _store_whole_granules,
           "any case whose N components do not fill whole 16-byte granules (e.g. one fp16 component)"),
    Mutant("coopvec-elementwise-shift-masked-4-bits", FAMILY,
           "shift amounts are masked to 4 bits",
           _shift_masked_to_4_bits,
           "a shl/shr on 32-bit components with an amount of 16 or more", kill_budget=700),
    Mutant("coopvec-elementwise-f16-to-int-rounds", FAMILY,
           "fp16 -> integer conversion rounds to nearest even instead of toward zero",
           _f16_to_int_rounds_to_nearest,
           "a float16 -> integer conversion of a value with a fraction of at least 1/2", kill_budget=600),
    Mutant("coopvec-elementwise-vts-drops-last", FAMILY,
           "OpVectorTimesScalar leaves the last component unscaled",
           _vts_drops_last_component,
           "a VectorTimesScalar with a scalar other than 1 and a non-zero last component", kill_budget=850),
]
