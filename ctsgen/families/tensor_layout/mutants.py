"""Plausible driver bugs in tensor-layout addressing, for the mutation benchmark.

Each mutant replaces one function of the reference semantics with the
faulty twin a driver could plausibly ship; ``killed_by`` names the
smallest kind of case that must expose it. ``setdimension-floor`` is the
deviation measured on the H100 (docs/validation.md).
"""

from __future__ import annotations

from typing import Any
from dataclasses import replace

import numpy as np

from ctsgen.model.tensor import ClampMode
from ctsgen.core.mutant import Mutant
import ctsgen.oracle.addressing as addressing
from ctsgen.oracle.values import to_bits

ADDR = "ctsgen.oracle.addressing"
MODEL = "ctsgen.model.tensor"
VALUES = "ctsgen.oracle.values"
FAMILY = "tensor-layout"


def _wrap(mode_fault: dict[ClampMode, Any]) -> dict[str, Any]:
    """Replace wrap_coordinate for some clamp modes, keeping the others."""
    original = addressing.wrap_coordinate

    def wrap(mode: ClampMode, c: np.ndarray, dim: int) -> np.ndarray:
        fault = mode_fault.get(mode)
        return fault(c, dim) if fault else original(mode, c, dim)

    return {f"{ADDR}:wrap_coordinate": wrap}


def _mirror(c: np.ndarray, dim: int, period_delta: int = 0, reflect: bool = True) -> np.ndarray:
    period = max(2 * dim - 2 + period_delta, 1)
    c = np.mod(c, period)
    return np.where(c >= dim, period - c, c) if reflect else c


def _floor_strides() -> dict[str, Any]:
    def default_strides(dims: tuple[int, ...], blocks: tuple[int, ...]) -> tuple[int, ...]:
        s = [1] * len(dims)
        for i in range(len(dims) - 2, -1, -1):
            s[i] = s[i + 1] * (dims[i + 1] // blocks[i + 1])
        return tuple(s)

    return {f"{MODEL}:default_strides": default_strides}


def _span(outer_wraps: bool = True, inner_first: bool = True) -> dict[str, Any]:
    def linear_to_span_coord(t: Any, index: np.ndarray) -> np.ndarray:
        coords = np.empty((t.LDim,) + index.shape, dtype=np.int64)
        rest = index.astype(np.int64, copy=True)
        order = range(t.LDim - 1, -1, -1) if inner_first else range(t.LDim)
        for dim in order:
            last = dim == (0 if inner_first else t.LDim - 1)
            coords[dim] = rest if (last and not outer_wraps) else rest % t.span[dim]
            rest //= t.span[dim]
        return coords

    return {f"{ADDR}:linear_to_span_coord": linear_to_span_coord}


def _store_like_load() -> dict[str, Any]:
    original = addressing.span_coord_to_tensor_coord

    def span_coord_to_tensor_coord(t: Any, spanCoord: np.ndarray, is_store: bool) -> Any:
        return original(t, spanCoord, False)  # out-of-bounds stores clamped or wrapped, then written

    return {f"{ADDR}:span_coord_to_tensor_coord": span_coord_to_tensor_coord}


def _clamp_bits(fn: Any) -> dict[str, Any]:
    return {f"{VALUES}:clamp_value_bits": fn}


def _layout_method(name: str, replacement: Any) -> dict[str, Any]:
    # replaced on the class itself, so every layout the reference semantics build (from the words in
    # ops, from a case's fields, inside a program) takes it
    return {f"{MODEL}:TensorLayout.{name}": replacement}


def _unsigned_offsets() -> dict[str, Any]:
    original = addressing.span_coord_to_tensor_coord

    def span_coord_to_tensor_coord(t: Any, spanCoord: np.ndarray, is_store: bool) -> Any:
        return original(replace(t, offset=tuple(o % 2**32 for o in t.offset)), spanCoord, is_store)

    return {f"{ADDR}:span_coord_to_tensor_coord": span_coord_to_tensor_coord}


def _mode_as(actual: ClampMode, used: ClampMode) -> dict[str, Any]:
    original = addressing.span_coord_to_tensor_coord

    def span_coord_to_tensor_coord(t: Any, spanCoord: np.ndarray, is_store: bool) -> Any:
        if t.clampMode is actual and not is_store:
            t = replace(t, clampMode=used)
        return original(t, spanCoord, is_store)

    return {f"{ADDR}:span_coord_to_tensor_coord": span_coord_to_tensor_coord}


def _converted_clamp_value(value: int, component: Any) -> int:
    """clampValue converted as an integer to the component type, not reinterpreted."""
    with np.errstate(over="ignore"):  # a float16 saturates to inf, as a conversion would
        v = np.asarray([min(value, 2**31 - 1)], dtype=np.float64).astype(component.dtype)
    return int(to_bits(v, component)[0]) if component.is_float else value & ((1 << (8 * component.size)) - 1)


MUTANTS = [
    Mutant("repeat-c-remainder", FAMILY, "Repeat wraps with a C remainder (sign of the dividend) instead of OpSMod",
           lambda: _wrap({ClampMode.Repeat: lambda c, d: np.fmod(c, d)}),
           "a Repeat load with a negative offset"),
    Mutant("repeat-as-clamp-to-edge", FAMILY, "Repeat clamps to the edge instead of wrapping",
           lambda: _wrap({ClampMode.Repeat: lambda c, d: np.clip(c, 0, d - 1)}),
           "a Repeat load two or more past the edge"),
    Mutant("mirror-period-off-by-one", FAMILY, "RepeatMirrored uses period 2*dim-1 instead of 2*dim-2",
           lambda: _wrap({ClampMode.RepeatMirrored: lambda c, d: _mirror(c, d, period_delta=1)}),
           "a RepeatMirrored load that wraps a full period", kill_budget=300),
    Mutant("mirror-without-reflection", FAMILY, "RepeatMirrored repeats with period 2*dim-2 but never reflects",
           lambda: _wrap({ClampMode.RepeatMirrored: lambda c, d: np.minimum(_mirror(c, d, reflect=False), d - 1)}),
           "a RepeatMirrored load just past the edge"),
    Mutant("mirror-as-repeat", FAMILY, "RepeatMirrored wraps like Repeat",
           lambda: _wrap({ClampMode.RepeatMirrored: lambda c, d: np.mod(c, d)}),
           "a RepeatMirrored load past the edge of an axis of 3 or more"),
    Mutant("clamp-to-edge-at-dim", FAMILY, "ClampToEdge clamps to layoutDimension instead of layoutDimension-1",
           lambda: _wrap({ClampMode.ClampToEdge: lambda c, d: np.clip(c, 0, d)}),
           "a ClampToEdge load past the high edge of an inner axis"),
    Mutant("clamp-to-edge-low-only", FAMILY, "ClampToEdge clamps negative coordinates only",
           lambda: _wrap({ClampMode.ClampToEdge: lambda c, d: np.maximum(c, 0) % d}),
           "a ClampToEdge load past the high edge"),
    Mutant("constant-clamp-zero", FAMILY, "Constant clamping returns 0 instead of clampValue",
           lambda: _clamp_bits(lambda value, component: 0),
           "a Constant load out of bounds with a non-zero clampValue"),
    Mutant("clamp-value-high-bits", FAMILY, "a 16/8-bit component takes the high bits of clampValue",
           lambda: _clamp_bits(lambda value, component: (value >> (32 - 8 * component.size))
                               & ((1 << (8 * component.size)) - 1)),
           "a Constant load of a 16- or 8-bit type, clampValue with unlike high and low bits"),
    Mutant("clamp-value-converted", FAMILY, "clampValue is converted as an integer instead of read as bits",
           lambda: _clamp_bits(_converted_clamp_value),
           "a Constant float load with clampValue 1"),
    Mutant("constant-as-clamp-to-edge", FAMILY, "Constant clamps coordinates instead of returning clampValue",
           lambda: _mode_as(ClampMode.Constant, ClampMode.ClampToEdge),
           "a Constant load out of bounds"),
    Mutant("oob-store-written", FAMILY, "an out-of-bounds store is clamped or wrapped and written, not discarded",
           _store_like_load,
           "a ClampToEdge/Repeat/RepeatMirrored store out of bounds"),
    Mutant("setdimension-floor", FAMILY,
           "OpTensorLayoutSetDimensionNV's default strides divide by blockSize rounding down (seen on the H100)",
           _floor_strides,
           "a blocked load, default strides, a layoutDimension not a multiple of its blockSize",
           instructions=("OpTensorLayoutSetDimensionNV", "OpTensorLayoutSetBlockSizeNV")),
    Mutant("set-block-size-ignored", FAMILY, "OpTensorLayoutSetBlockSizeNV has no effect",
           lambda: _layout_method("set_block_size", lambda self, *b: self),
           "a load with blockSize > 1"),
    Mutant("set-stride-ignored", FAMILY, "OpTensorLayoutSetStrideNV has no effect (default strides stay)",
           lambda: _layout_method("set_stride", lambda self, *s: self),
           "a load with a padded explicit stride"),
    Mutant("span-outer-axis-no-wrap", FAMILY, "linearToSpanCoord does not wrap the outermost span coordinate",
           lambda: _span(outer_wraps=False),
           "a load whose matrix has more elements than its span"),
    Mutant("span-axes-reversed", FAMILY, "linearToSpanCoord peels the outermost axis first",
           lambda: _span(inner_first=False),
           "a load through a 2-D span that is not square"),
    Mutant("offset-unsigned", FAMILY, "slice offsets are read as unsigned (a negative offset becomes huge)",
           _unsigned_offsets,
           "a ClampToEdge or Repeat load with a negative offset"),
]
