"""OpCooperativeMatrixLoadKHR / OpCooperativeMatrixStoreKHR: where each matrix element lives.

../shared/specs/SPV_KHR_cooperative_matrix.txt, "Cooperative Matrix Layout": with *RowMajorKHR*
"Elements (row,*) of the result of load or store operations are taken in order from contiguous
locations starting at 'Pointer'[row*'Stride']"; *ColumnMajorKHR* the same with (*,col) and
'Pointer'[col*'Stride']. 'Stride' "must be greater than 0 when passed to
*OpCooperativeMatrixStoreKHR* and must be greater than or equal to 0 when passed to
*OpCooperativeMatrixLoadKHR*". Issue "Should strides be in bytes or elements?": "Stride is in
elements of the pointee type (which can be different than the matrix component type)"; issue
"Should we allow the Pointer type and matrix component type to mismatch?": yes (e.g. ``uvec4``).

So with a pointee of P bytes, a component of C bytes and 'Pointer' at array element ``offset``,
line ``i`` (a row for RowMajor, a column for ColumnMajor) starts at byte ``(offset + i*stride)*P``
and its ``k``-th element is at byte ``(offset + i*stride)*P + k*C``: the matrix elements of a line
are contiguous components whatever the pointee, and only the start of each line moves in pointee
units. The Vulkan alignment rule (:func:`alignment_bytes`) makes every such byte address a whole
number of components, so memory is modelled as a 1-D array of components and each element's
address as a component index: one vectorised gather (load) or scatter (store), no per-element loop.

A load may use stride 0 (every line reads the same memory) or a stride below the line length
(lines overlap); a store's lines must not overlap (:func:`expected_store` raises where two elements
would land on one component: the result would depend on the order of racing stores).
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ctsgen.model.types import ComponentType

#: VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986 (Vulkan spec, "Shader Validation",
#: RuntimeSpirv): "For OpCooperativeMatrixLoadKHR and OpCooperativeMatrixStoreKHR instructions,
#: the Pointer and Stride operands must be aligned to at least the lesser of 16 bytes or the
#: natural alignment of a row or column (depending on ColumnMajor) of the matrix (where the
#: natural alignment is the number of columns/rows multiplied by the component size)".
ALIGNMENT_CAP_BYTES = 16
ALIGNMENT_VUID = "VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986"


class Layout(str, enum.Enum):
    """Cooperative Matrix Layout (SPV_KHR_cooperative_matrix); the value is the spec's name."""

    RowMajor = "RowMajor"        # RowMajorKHR, 0x0
    ColumnMajor = "ColumnMajor"  # ColumnMajorKHR, 0x1

    @property
    def glsl(self) -> str:
        """The GL_KHR_cooperative_matrix constant."""
        return f"gl_CooperativeMatrixLayout{self.value}"


#: GLSL scalar and vector-name prefix of each lane type a pointee may have.
_GLSL_LANES = {
    "float16": ("float16_t", "f16vec"), "float32": ("float", "vec"), "bfloat16": ("bfloat16_t", "bf16vec"),
    "int8": ("int8_t", "i8vec"), "uint8": ("uint8_t", "u8vec"), "int16": ("int16_t", "i16vec"),
    "uint16": ("uint16_t", "u16vec"), "int32": ("int32_t", "ivec"), "uint32": ("uint32_t", "uvec"),
}


@dataclass(frozen=True)
class Pointee:
    """The type 'Pointer' points to: a scalar (``lanes`` 1) or a vector of ``lanes`` scalars of
    numpy dtype name ``scalar`` (the spec: "a scalar or vector type"). ``scalar`` is also the numpy
    dtype of the buffer that holds such an array, ``lanes`` numpy elements per array element."""

    scalar: str
    lanes: int = 1

    def __post_init__(self) -> None:
        if self.scalar not in _GLSL_LANES:
            raise ValueError(f"pointee lane type {self.scalar!r} is not one of {sorted(_GLSL_LANES)}")
        if self.lanes not in (1, 2, 4):
            raise ValueError(f"a pointee here has 1, 2 or 4 lanes, not {self.lanes} (a 3-vector's std430 array "
                             "stride is not its size)")

    @classmethod
    def of(cls, component: ComponentType) -> Pointee:
        """The pointee whose type is the matrix's component type."""
        return _component_pointee(component)

    @property
    def lane_size(self) -> int:
        return _lane_size(self.scalar)

    @property
    def size(self) -> int:
        """Bytes of one array element (its std430 array stride)."""
        return self.lane_size * self.lanes

    @property
    def glsl(self) -> str:
        scalar, prefix = _GLSL_LANES[self.scalar]
        return scalar if self.lanes == 1 else f"{prefix}{self.lanes}"

    def to_json(self) -> dict[str, Any]:
        return {"scalar": self.scalar, "lanes": self.lanes}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> Pointee:
        return cls(str(o["scalar"]), int(o["lanes"]))


@functools.cache
def _component_pointee(component: ComponentType) -> Pointee:
    """:meth:`Pointee.of`, built once per component type (an immutable value; the oracle asks per access)."""
    return Pointee(component.dtype.name)


@functools.cache
def _lane_size(scalar: str) -> int:
    """Bytes of one lane of numpy dtype name ``scalar``."""
    return 2 if scalar == "bfloat16" else np.dtype(scalar).itemsize


@dataclass(frozen=True)
class KhrAccess:
    """One OpCooperativeMatrixLoadKHR or StoreKHR: its MemoryLayout (a constant), its run-time
    Stride, and 'Pointer' as run-time element ``offset`` into an array of ``pointee``; stride and
    offset count elements of the pointee."""

    layout: Layout
    stride: int
    offset: int = 0
    pointee: Pointee | None = None  # None: the matrix's component type

    def pointee_for(self, component: ComponentType) -> Pointee:
        return self.pointee or Pointee.of(component)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"layout": self.layout.value, "stride": self.stride, "offset": self.offset}
        if self.pointee is not None:
            out["pointee"] = self.pointee.to_json()
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> KhrAccess:
        p = o.get("pointee")
        return cls(Layout(o["layout"]), int(o["stride"]), int(o.get("offset", 0)),
                   None if p is None else Pointee.from_json(p))


def line_length(layout: Layout, rows: int, cols: int) -> int:
    """Elements of one contiguous line: a row (RowMajor) or a column (ColumnMajor)."""
    return cols if layout is Layout.RowMajor else rows


def line_count(layout: Layout, rows: int, cols: int) -> int:
    return rows if layout is Layout.RowMajor else cols


def alignment_bytes(layout: Layout, rows: int, cols: int, component: ComponentType) -> int:
    """The byte alignment Pointer and Stride need (VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986):
    the lesser of 16 and a line's natural alignment, its length times the component size."""
    return min(ALIGNMENT_CAP_BYTES, line_length(layout, rows, cols) * component.size)


def alignment_unit(layout: Layout, rows: int, cols: int, component: ComponentType, pointee: Pointee) -> int:
    """The smallest number of pointee elements whose bytes meet :func:`alignment_bytes`: every
    valid stride and offset is a multiple of it."""
    align = alignment_bytes(layout, rows, cols, component)
    return align // math.gcd(align, pointee.size)


def min_disjoint_stride(layout: Layout, rows: int, cols: int, component: ComponentType, pointee: Pointee) -> int:
    """The smallest aligned stride (pointee elements) whose lines do not overlap: the least
    multiple of :func:`alignment_unit` spanning a line's bytes. A store's stride is at least this."""
    unit = alignment_unit(layout, rows, cols, component, pointee)
    line_bytes = line_length(layout, rows, cols) * component.size
    return unit * -(-line_bytes // (unit * pointee.size))


def check_access(access: KhrAccess, rows: int, cols: int, component: ComponentType, *, is_store: bool) -> None:
    """Raise ValueError naming the rule if ``access`` is not a valid load (store) of a rows x cols
    matrix of ``component``: a negative stride or offset, a store's stride 0 or overlapping lines,
    a misaligned Pointer or Stride, or a pointee narrower than the component."""
    p = access.pointee_for(component)
    if access.stride < 0 or access.offset < 0:
        raise ValueError(f"stride {access.stride} and element offset {access.offset} must be >= 0 "
                         "(SPV_KHR_cooperative_matrix, Cooperative Matrix Layout)")
    if p.size < component.size or p.size % component.size:
        raise ValueError(f"pointee {p.glsl} ({p.size} bytes) must be a whole number of {component.name} "
                         f"components ({component.size} bytes); draw a pointee at least as wide")
    align = alignment_bytes(access.layout, rows, cols, component)
    for name, value in (("Pointer", access.offset), ("Stride", access.stride)):
        if value * p.size % align:
            raise ValueError(f"{name} of {value} {p.glsl} elements is {value * p.size} bytes, not a multiple of "
                             f"{align} ({ALIGNMENT_VUID}); draw a multiple of "
                             f"{alignment_unit(access.layout, rows, cols, component, p)} elements")
    if is_store and access.stride < min_disjoint_stride(access.layout, rows, cols, component, p):
        raise ValueError(f"a store's stride {access.stride} makes its lines overlap (a data race); draw at least "
                         f"{min_disjoint_stride(access.layout, rows, cols, component, p)}")


def component_indices(access: KhrAccess, rows: int, cols: int, component: ComponentType) -> np.ndarray:
    """rows x cols int64: the component index (memory as a 1-D array of ``component`` from array
    element 0) of every matrix element. Assumes :func:`check_access` holds."""
    per = access.pointee_for(component).size // component.size  # components per pointee element
    line = np.arange(line_count(access.layout, rows, cols), dtype=np.int64).reshape(-1, 1)
    within = np.arange(line_length(access.layout, rows, cols), dtype=np.int64).reshape(1, -1)
    index = (access.offset + line * access.stride) * per + within  # lines x line length
    return index if access.layout is Layout.RowMajor else index.T


def extent_components(access: KhrAccess, rows: int, cols: int, component: ComponentType) -> int:
    """Components from array element 0 to the last one the access touches, rounded up to whole
    pointee elements: the smallest memory with no access out of bounds."""
    per = access.pointee_for(component).size // component.size
    last = int(component_indices(access, rows, cols, component).max()) if rows * cols else -1
    return per * -(-(last + 1) // per)


def extent_elements(access: KhrAccess, rows: int, cols: int, component: ComponentType) -> int:
    """:func:`extent_components` in pointee elements (the array length the shader needs)."""
    return extent_components(access, rows, cols, component) // (access.pointee_for(component).size // component.size)


def expected_load(access: KhrAccess, rows: int, cols: int, memory: np.ndarray, component: ComponentType
                  ) -> np.ndarray:
    """The rows x cols matrix OpCooperativeMatrixLoadKHR gives from ``memory`` (1-D, components)."""
    check_access(access, rows, cols, component, is_store=False)
    index = component_indices(access, rows, cols, component)
    if index.size and int(index.max()) >= memory.size:
        raise ValueError(f"the load reads component {int(index.max())} of a memory of {memory.size}; "
                         "size it with extent_components")
    return np.asarray(memory)[index]


def expected_store(access: KhrAccess, matrix: np.ndarray, memory: np.ndarray, component: ComponentType
                   ) -> np.ndarray:
    """``memory`` (1-D, components) after OpCooperativeMatrixStoreKHR of ``matrix``: every other
    component keeps its bits (the caller's sentinel)."""
    rows, cols = matrix.shape
    check_access(access, rows, cols, component, is_store=True)
    index = component_indices(access, rows, cols, component)
    if index.size and int(index.max()) >= memory.size:
        raise ValueError(f"the store writes component {int(index.max())} of a memory of {memory.size}; "
                         "size it with extent_components")
    out = np.array(memory, copy=True)
    out[index] = matrix
    return out


def as_components(memory: np.ndarray, component: ComponentType) -> np.ndarray:
    """A buffer of any pointee's lane type seen as ``component`` (same bytes, no copy)."""
    return np.ascontiguousarray(memory).view(component.dtype)
