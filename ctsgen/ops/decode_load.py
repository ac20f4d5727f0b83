"""Expected results of OpCooperativeMatrixLoadTensorNV with a DecodeFunc operand.

SPV_NV_cooperative_matrix2, "3.X Tensor Layout and View": "rather than loading
a value, the function operand is invoked for each matrix element"; its
pointer is the load's Pointer plus matrixCoordToTensorElement(...) times the
size of the pointee type, and it receives that element's blockCoord and
coordInBlock. The oracle therefore evaluates the decode function's
definition (a probe or a block format, :mod:`ctsgen.ops.decode`) at the addresses of
:func:`ctsgen.oracle.addressing.tensor_addresses`. Constant clamping
"terminates the index calculation" and returns clampValue without decoding.
"""

from __future__ import annotations

import numpy as np

from ctsgen.ops.decode import Format
from ctsgen.ops import decode as decode_ops
from ctsgen.model.tensor import TensorLayout
from ctsgen.model.types import ComponentType
from ctsgen.oracle.addressing import TensorAddresses
from ctsgen.oracle import addressing
from ctsgen.oracle.values import from_bits
from ctsgen.oracle import values as oracle_values

#: Multipliers of blockCoord[i] and coordInBlock[i] in the probe (odd, unrelated constants).
BC_MUL = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1)
CIB_MUL = (0x61C88647, 0x7FEB352D, 0x846CA68B, 0x2545F491, 0x3C6EF373)


def probe_values(a: TensorAddresses, words: np.ndarray, probe_words: int, component: ComponentType
                 ) -> np.ndarray:
    """The probe: ``w[coordInBlock[D-1] % S] + sum(blockCoord[i] * BC_MUL[i] + coordInBlock[i] *
    CIB_MUL[i])`` (uint32 wrap-around), where ``w`` is the S-word pointee at ``index * S``;
    a float32 result keeps the low 24 bits (exact)."""
    D = a.blockCoord.shape[0]
    idx = np.where(a.valid, a.index, 0) * probe_words + a.coordInBlock[D - 1] % probe_words
    r = words[idx].astype(np.uint64)
    for i in range(D):
        r += a.blockCoord[i].astype(np.uint64) * BC_MUL[i] + a.coordInBlock[i].astype(np.uint64) * CIB_MUL[i]
    r &= np.uint64(0xFFFFFFFF)
    if component is ComponentType.float32:
        return (r & np.uint64(0xFFFFFF)).astype(np.float32)
    return r.astype(np.uint32).view(component.dtype) if component.size == 4 else r.astype(component.dtype)


def element_in_block(a: TensorAddresses, blockShape: tuple[int, ...]) -> np.ndarray:
    """coordInBlock linearised row-major over the block shape."""
    e = np.zeros(a.coordInBlock.shape[1:], dtype=np.int64)
    for i, n in enumerate(blockShape):
        e = e * n + a.coordInBlock[i]
    return e


def format_values(a: TensorAddresses, words: np.ndarray, fmt: Format, blockShape: tuple[int, ...],
                  n_blocks: int) -> np.ndarray:
    """Dequantised element ``element_in_block`` of block ``index`` (float64)."""
    raw = words.view(np.uint8)[:n_blocks * fmt.block_bytes].reshape(n_blocks, fmt.block_bytes)
    table = decode_ops.dequantize(fmt, raw)
    return table[np.where(a.valid, a.index, 0), element_in_block(a, blockShape)]


def expected_decode_load(t: TensorLayout, rows: int, cols: int, words: np.ndarray, component: ComponentType,
                         fmt: Format | None, probe_words: int, blockShape: tuple[int, ...] | None
                         ) -> np.ndarray:
    """The rows x cols matrix the decode load produces from the uint32 ``words``."""
    a = addressing.tensor_addresses(t, rows, cols, is_store=False)
    return decoded_at(a, t, words, component, fmt, probe_words, blockShape)


def decoded_at(a: TensorAddresses, t: TensorLayout, words: np.ndarray, component: ComponentType,
               fmt: Format | None, probe_words: int, blockShape: tuple[int, ...] | None) -> np.ndarray:
    """What a decode load through ``t`` gives at the addresses ``a`` (of every matrix element):
    the decode function's value where ``a`` is valid, clampValue elsewhere. A load through a
    view passes the view's addresses (``tensor_addresses_with_view``; a clipped element is
    then not valid, and its caller keeps the matrix element there)."""
    if fmt is None:
        values = probe_values(a, words, probe_words, component)
    else:
        values = format_values(a, words, fmt, blockShape or (), t.extent()).astype(component.dtype)
    clamp = from_bits(oracle_values.clamp_value_bits(t.clampValue, component), component)
    return np.where(a.valid, values, clamp).astype(component.dtype)
