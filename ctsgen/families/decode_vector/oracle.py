"""Reference semantics of a decode load with both a DecodeFunc and a DecodeVectorFunc.

SPV_NV_cooperative_matrix_decode_vector, 3.49.8: each matrix element is decoded
either by a DecodeFunc invocation for that element or by a DecodeVectorFunc
invocation for a *V-group* containing it; the implementation chooses. A V-group
is V matrix elements whose tensor coordinates share blockCoord (every dimension)
and coordInBlock in every dimension except LDim-1, and whose coordInBlock[LDim-1]
values are V consecutive integers starting at a multiple of V. The invocation gets
the arguments of the group's lowest element; component i goes to the element whose
coordInBlock[LDim-1] is that lowest value plus i.

The Python decode functions below mirror the shader's two functions, each written
from the decode definition (a probe or a block format of the decode family), so a
wrong component order or a wrong base element in the vector path shows up as a
wrong element in the "vector" and "mixed" call patterns (decision
"decode-vector-call-patterns" in docs/spec-decisions.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctsgen.ops.decode import Format
from ctsgen.ops import decode as decode_ops
from ctsgen.ops.decode_load import BC_MUL, CIB_MUL
from ctsgen.model.tensor import TensorLayout
from ctsgen.model.types import ComponentType
from ctsgen.oracle.addressing import TensorAddresses
from ctsgen.oracle import addressing
from ctsgen.oracle.values import from_bits
from ctsgen.oracle import values as oracle_values

CALL_PATTERNS = ("scalar", "vector", "mixed")


@dataclass(frozen=True)
class Decoder:
    """The decode definition a variant's two shader functions evaluate."""

    component: ComponentType
    fmt: Format | None
    probe_words: int
    blockShape: tuple[int, ...] | None


def _probe(d: Decoder, words: np.ndarray, index: np.ndarray, blockCoord: np.ndarray,
           coordInBlock: np.ndarray) -> np.ndarray:
    """The decode family's probe at explicit arguments (index: block index, D x n coordinates)."""
    D = blockCoord.shape[0]
    r = words[index * d.probe_words + coordInBlock[D - 1] % d.probe_words].astype(np.uint64)
    for i in range(D):
        r += blockCoord[i].astype(np.uint64) * BC_MUL[i] + coordInBlock[i].astype(np.uint64) * CIB_MUL[i]
    r &= np.uint64(0xFFFFFFFF)
    if d.component is ComponentType.float32:
        return (r & np.uint64(0xFFFFFF)).astype(np.float32)
    return r.astype(np.uint32).view(d.component.dtype)


def _format(d: Decoder, table: np.ndarray, index: np.ndarray, coordInBlock: np.ndarray) -> np.ndarray:
    """Element coordInBlock (linearised row-major over the block shape) of block ``index``."""
    e = np.zeros(index.shape, dtype=np.int64)
    for i, n in enumerate(d.blockShape or ()):
        e = e * n + coordInBlock[i]
    return table[index, e].astype(d.component.dtype)


def decode_scalar(d: Decoder, words: np.ndarray, table: np.ndarray | None, index: np.ndarray,
                  blockCoord: np.ndarray, coordInBlock: np.ndarray) -> np.ndarray:
    """DecodeFunc for n elements: one value each."""
    if d.fmt is None:
        return _probe(d, words, index, blockCoord, coordInBlock)
    return _format(d, table, index, coordInBlock)


def decode_vector(d: Decoder, V: int, words: np.ndarray, table: np.ndarray | None, index: np.ndarray,
                  blockCoord: np.ndarray, coordInBlock: np.ndarray) -> np.ndarray:
    """DecodeVectorFunc for g groups (the arguments of each group's lowest element):
    g x V, component i decoded at coordInBlock[LDim-1] + i."""
    D = coordInBlock.shape[0]
    g = index.shape[0]
    lanes = np.arange(V, dtype=np.int64)
    cib = np.repeat(coordInBlock[:, :, None], V, axis=2)  # D x g x V
    cib[D - 1] += lanes
    bc = np.repeat(blockCoord[:, :, None], V, axis=2)
    idx = np.repeat(index[:, None], V, axis=1)
    if d.fmt is None:
        return _probe(d, words, idx.ravel(), bc.reshape(D, -1), cib.reshape(D, -1)).reshape(g, V)
    return _format(d, table, idx.ravel(), cib.reshape(D, -1)).reshape(g, V)


@dataclass(frozen=True)
class VGroups:
    """The complete V-groups of a load: ``group`` (M x N, -1 where an element is in none),
    ``lane`` (M x N, the element's component in its group), and per group the
    arguments of its lowest element (``index``, ``blockCoord``, ``coordInBlock``)."""

    group: np.ndarray
    lane: np.ndarray
    index: np.ndarray
    blockCoord: np.ndarray
    coordInBlock: np.ndarray

    @property
    def count(self) -> int:
        return int(self.index.shape[0])


def v_groups(a: TensorAddresses, V: int) -> VGroups:
    """Every complete V-group of the matrix (3.49.8): valid elements with equal
    (blockCoord, coordInBlock[:LDim-1], coordInBlock[LDim-1] // V) form one group when
    all V lanes coordInBlock[LDim-1] % V are present. Several matrix elements may share
    a tensor element (clamping, Repeat): each gets its lane of the group. Groups never
    straddle a block, since they share blockCoord (blockSize[LDim-1] % V == 0)."""
    D = a.coordInBlock.shape[0]
    valid = a.valid.ravel()
    bc = a.blockCoord.reshape(D, -1)[:, valid]
    cib = a.coordInBlock.reshape(D, -1)[:, valid]
    keys = np.concatenate([bc, cib[:D - 1], cib[D - 1:] // V]).T  # n x (2D)
    group = np.full(a.valid.size, -1, dtype=np.int64)
    lane = np.zeros(a.valid.size, dtype=np.int64)
    if keys.shape[0] == 0:
        empty = np.zeros((D, 0), dtype=np.int64)
        return VGroups(group.reshape(a.valid.shape), lane.reshape(a.valid.shape), np.zeros(0, np.int64),
                       empty, empty)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    present = np.zeros((uniq.shape[0], V), dtype=bool)
    present[inverse, cib[D - 1] % V] = True
    complete = present.all(axis=1)
    renumber = np.cumsum(complete) - 1
    member = complete[inverse]
    group[np.flatnonzero(valid)[member]] = renumber[inverse[member]]
    lane[np.flatnonzero(valid)] = cib[D - 1] % V
    index = np.zeros(uniq.shape[0], dtype=np.int64)
    index[inverse] = a.index.ravel()[valid]  # one block per group: every member has the same index
    base = uniq[complete].T
    cib0 = np.concatenate([base[D:2 * D - 1], base[2 * D - 1:] * V])
    return VGroups(group.reshape(a.valid.shape), lane.reshape(a.valid.shape), index[complete], base[:D], cib0)


def reference_load(t: TensorLayout, rows: int, cols: int, words: np.ndarray, d: Decoder, V: int,
                   pattern: str) -> np.ndarray:
    """The load as an implementation that calls the decode functions in ``pattern`` would do it:
    ``scalar`` (DecodeFunc for every element), ``vector`` (DecodeVectorFunc for every complete
    V-group, DecodeFunc for the rest) or ``mixed`` (DecodeVectorFunc for every other group)."""
    if pattern not in CALL_PATTERNS:
        raise ValueError(f"unknown call pattern {pattern!r}; use one of {CALL_PATTERNS}")
    a = addressing.tensor_addresses(t, rows, cols, is_store=False)
    table = None
    if d.fmt is not None:
        n = t.extent()
        table = decode_ops.dequantize(d.fmt, words.view(np.uint8)[:n * d.fmt.block_bytes].reshape(n, d.fmt.block_bytes))
    clamp = from_bits(oracle_values.clamp_value_bits(t.clampValue, d.component), d.component)
    out = np.full((rows, cols), clamp, dtype=d.component.dtype)
    vector = np.zeros((rows, cols), dtype=bool)
    if pattern != "scalar":
        g = v_groups(a, V)
        chosen = np.arange(g.count) % (2 if pattern == "mixed" else 1) == 0
        values = decode_vector(d, V, words, table, g.index[chosen], g.blockCoord[:, chosen],
                               g.coordInBlock[:, chosen])
        slot = np.cumsum(chosen) - 1  # row of ``values`` for a chosen group
        member = g.group >= 0
        vector[member] = chosen[g.group[member]]
        out[vector] = values[slot[g.group[vector]], g.lane[vector]]
    scalar = a.valid & ~vector
    out[scalar] = decode_scalar(d, words, table, a.index[scalar], a.blockCoord[:, scalar], a.coordInBlock[:, scalar])
    return out
