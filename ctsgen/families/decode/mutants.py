"""Plausible driver bugs in decode loads (DecodeFunc), for the mutation benchmark.

The reference semantics (DecodeVariant.execute -> expected_decode_load in
this family's oracle) look up ``expected_decode_load`` and ``probe_values`` in
``ctsgen.ops.decode_load`` and ``dequantize`` in ``ctsgen.ops.decode``, their defining modules,
at call time: those are the names patched. The faults read SPV_NV_cooperative_matrix2 "3.X Tensor
Layout and View" (the decode function's pointer and its blockCoord /
coordInBlock operands) or a block format's layout wrongly.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ctsgen.core.mutant import Mutant
from ctsgen.ops import decode_load as oracle, decode
from ctsgen.oracle import addressing
from ctsgen.ops.decode import Q4_0, MXFP4

ORACLE = "ctsgen.ops.decode_load"
BLOCKS = "ctsgen.ops.decode"
FAMILY = "decode"


def _operands_swapped() -> dict[str, Any]:
    """The decode function receives coordInBlock as blockCoord and blockCoord as coordInBlock."""
    original = oracle.probe_values

    def probe_values(a: Any, words: np.ndarray, probe_words: int, component: Any) -> np.ndarray:
        return original(replace(a, blockCoord=a.coordInBlock, coordInBlock=a.blockCoord), words, probe_words,
                        component)

    return {f"{ORACLE}:probe_values": probe_values}


def _pointer_from_element_index() -> dict[str, Any]:
    """The decode pointer advances by the element's tensor coordinates (tensorCoord . stride),
    not by its block's (blockCoord . stride); the read stays inside the encoded buffer."""
    def expected_decode_load(t: Any, rows: int, cols: int, words: np.ndarray, *rest: Any) -> np.ndarray:
        a = addressing.tensor_addresses(t, rows, cols, is_store=False)
        coord = np.where(a.valid, a.tensorCoord, 0)
        index = np.tensordot(np.asarray(t.stride, dtype=np.int64), coord, axes=1) % max(t.extent(), 1)
        return oracle.decoded_at(replace(a, index=index), t, words, *rest)

    return {f"{ORACLE}:expected_decode_load": expected_decode_load}


def _q4_0_nibbles_swapped() -> dict[str, Any]:
    """Q4_0 takes element j from the high nibble of qs[j] and j+16 from the low one."""
    original = decode.dequantize

    def dequantize(fmt: Any, blocks: np.ndarray) -> np.ndarray:
        out = original(fmt, blocks)
        return np.concatenate([out[:, 16:], out[:, :16]], axis=1) if fmt is Q4_0 else out

    return {f"{BLOCKS}:dequantize": dequantize}


def _mxfp4_bias_off_by_one() -> dict[str, Any]:
    """MXFP4's E8M0 scale is decoded as 2^(e-128) instead of 2^(e-127)."""
    original = decode.dequantize

    def dequantize(fmt: Any, blocks: np.ndarray) -> np.ndarray:
        out = original(fmt, blocks)
        return out / 2 if fmt is MXFP4 else out

    return {f"{BLOCKS}:dequantize": dequantize}


MUTANTS = [
    Mutant("decode-operands-swapped", FAMILY,
           "the decode function is called with blockCoord and coordInBlock swapped",
           _operands_swapped,
           "a probe decode load with a non-zero coordinate (blockSize 1 suffices)"),
    Mutant("decode-pointer-from-element", FAMILY,
           "the decode pointer is computed from the element's coordinates instead of its block's",
           _pointer_from_element_index,
           "a probe decode load with blockSize 2 along an axis of 3 (an element past the first block)"),
    Mutant("q4_0-nibbles-swapped", FAMILY, "Q4_0 decodes the high nibble first (elements j and j+16 swapped)",
           _q4_0_nibbles_swapped,
           "any q4_0 decode load"),
    Mutant("mxfp4-scale-bias-off-by-one", FAMILY, "MXFP4's E8M0 scale uses bias 128 instead of 127",
           _mxfp4_bias_off_by_one,
           "any mxfp4 decode load with a non-zero element"),
]
