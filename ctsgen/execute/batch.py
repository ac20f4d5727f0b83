"""Packing many cases of one shader variant into one dispatch, and unpacking.

Binding 0 gets one record per case: the element offset of the case's data
in each buffer, then the family's words. Each buffer is the concatenation
of every case's data, each case starting on a 16-byte boundary (the
alignment SPV_NV_cooperative_matrix2 requires of a tensor's Pointer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ctsgen.core.shader import Dispatch, ShaderVariant, buffer_align

ALIGN_BYTES = 16


@dataclass
class Batch:
    """A dispatch plus where each case's data sits in its buffers."""

    dispatch: Dispatch
    offsets: np.ndarray  # cases x buffers, element offsets
    lengths: np.ndarray  # cases x buffers, element counts


def build_batch(variant: ShaderVariant, params: Sequence[np.ndarray],
                initial: Sequence[Sequence[np.ndarray]]) -> Batch:
    """``params[i]``: case i's family words; ``initial[i][b]``: case i's data for buffer b."""
    n_cases, n_buf = len(params), len(variant.buffers)
    if n_cases == 0:
        raise ValueError("a batch needs at least one case")
    offsets = np.zeros((n_cases, n_buf), dtype=np.int64)
    lengths = np.zeros((n_cases, n_buf), dtype=np.int64)
    buffers = []
    for b, spec in enumerate(variant.buffers):
        dtype = np.dtype(spec.dtype)
        # a variant may ask for more (cooperative-vector matrices: 64 bytes, VUID-RuntimeSpirv-
        # OpCooperativeVectorMatrixMulNV-10097)
        step = max(1, buffer_align(variant, spec.binding, ALIGN_BYTES) // dtype.itemsize)
        pos = 0
        for i in range(n_cases):
            arr = initial[i][b]
            if arr.dtype != dtype:
                raise ValueError(f"case {i}, buffer {spec.name}: dtype {arr.dtype}, the variant declares {dtype}")
            offsets[i, b], lengths[i, b] = pos, arr.size
            pos += -(-max(arr.size, 1) // step) * step
        buf = np.zeros(max(pos, step), dtype=dtype)
        for i in range(n_cases):
            buf[offsets[i, b]:offsets[i, b] + lengths[i, b]] = initial[i][b].ravel()
        buffers.append(buf)
    words = np.concatenate([np.concatenate([offsets[i].astype(np.uint32), np.asarray(params[i], np.uint32)])
                            for i in range(n_cases)])
    return Batch(Dispatch(variant, n_cases, [words, *buffers]), offsets, lengths)


def case_outputs(batch: Batch, results: Sequence[np.ndarray], i: int) -> list[np.ndarray]:
    """Case ``i``'s slice of every buffer (results[0] is the parameter buffer)."""
    return [results[b + 1][batch.offsets[i, b]:batch.offsets[i, b] + batch.lengths[i, b]]
            for b in range(batch.offsets.shape[1])]
