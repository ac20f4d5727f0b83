"""The tensor-layout case model: loads and stores through ``tensorLayoutNV``.

It lives below the families because tensor-view, decode, decode-vector and cm2-program embed it;
its JSON (tagged ``"family": "tensor-layout"``) is the pack format and its name hashes it.

A :class:`LayoutVariant` is the compile-time signature (operation, Dim,
clampMode, matrix type); a :class:`TensorLayoutCase` adds the run-time
parameters in the vocabulary of SPV_NV_tensor_addressing. The shader
replays the instruction sequence OpCreateTensorLayoutNV ->
[OpTensorLayoutSetBlockSizeNV] -> OpTensorLayoutSetDimensionNV ->
[OpTensorLayoutSetStrideNV] -> [OpTensorLayoutSliceNV] ->
[OpTensorLayoutSetClampValueNV]; a parameter that is ``None`` means its
instruction is not executed, so the defaults the spec gives are tested too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops.cm2 import COOPERATIVE_MATRIX
from ctsgen.model.tensor import ClampMode, TensorLayout
from ctsgen.model.types import ComponentType, MatrixType, Scope
from ctsgen.oracle.addressing import matrix_linear_index
from ctsgen.oracle import addressing
from ctsgen.oracle.values import sentinel_bits
from ctsgen.oracle import values as oracle_values
from ctsgen.ops.tensor_layout import (
    FAMILY_WORDS, FLAG_SET_BLOCK_SIZE, FLAG_SET_CLAMP_VALUE, FLAG_SET_STRIDE, FLAG_SLICE, W_BLOCK_SIZE,
    W_CLAMP_VALUE, W_DIMENSION, W_FILL, W_FLAGS, W_OFFSET, W_SPAN, W_STRIDE, Operation, decode_layout,
    expected_load, expected_store, initial_buffers,
)
from ctsgen.templates import SHARED_DIR, render

FAMILY_NAME = "tensor-layout"


N_BUFFERS = 2  # binding 1: input, binding 2: output


@dataclass(frozen=True)
class LayoutVariant:
    """Compile-time signature: ``tensorLayoutNV<Dim, clampMode>`` and the matrix type."""

    operation: Operation
    Dim: int
    clampMode: ClampMode
    matrix: MatrixType

    @property
    def id(self) -> str:
        m = self.matrix
        return (f"tensor_layout.{self.operation.value}.dim{self.Dim}.clamp_{self.clampMode.snake}."
                f"{m.label}")

    @property
    def local_size_x(self) -> int:
        return self.matrix.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        dt = self.matrix.component.dtype.name
        return (BufferSpec(1, "input", dt), BufferSpec(2, "output", dt))

    def requirements(self) -> Requirements:
        feats = [COOPERATIVE_MATRIX, "cooperativeMatrixTensorAddressing"]
        if self.operation is Operation.load:
            feats.append("cooperativeMatrixBlockLoads")  # blockSize may be set at run time
        if self.matrix.scope is Scope.Workgroup:
            feats.append("cooperativeMatrixWorkgroupScope")
        exts = ["VK_NV_cooperative_matrix2"]
        if self.matrix.component is ComponentType.bfloat16:
            exts.append("VK_KHR_shader_bfloat16")
        return Requirements(extensions=tuple(exts), features=tuple(feats), matrices=(self.matrix,))

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        """The shader; with ``baked`` (a whole parameter record) a one-case repro
        that reads its parameters from constants instead of binding 0."""
        m = self.matrix
        return render(SHARED_DIR, "tensor_layout.comp.j2", T=m.component.glsl,
                      bfloat16=m.component is ComponentType.bfloat16, **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): ``TensorLayout``'s BlockSize, Dimension, Stride,
        Slice and ClampValue, ``CoopMat.Load``/``Store`` of a tensor layout (docs/spec-decisions.md
        "compiler-routes")."""
        sliced = [w for i in range(self.Dim) for w in (W_OFFSET + i, W_SPAN + i)]  # Slice's operands, in order
        return render(SHARED_DIR, "tensor_layout.slang.j2", T=self.matrix.component.slang, sliced=sliced,
                      **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        m = self.matrix
        return dict(v=self, m=m, baked=None if baked is None else [int(w) for w in baked],
                    component=m.component.name, words=N_BUFFERS + FAMILY_WORDS, H=N_BUFFERS,
                    W=dict(FLAGS=W_FLAGS, CLAMP_VALUE=W_CLAMP_VALUE, FILL=W_FILL, BLOCK_SIZE=W_BLOCK_SIZE,
                           DIMENSION=W_DIMENSION, STRIDE=W_STRIDE, OFFSET=W_OFFSET, SPAN=W_SPAN),
                    F=dict(SET_BLOCK_SIZE=FLAG_SET_BLOCK_SIZE, SET_STRIDE=FLAG_SET_STRIDE,
                           SLICE=FLAG_SLICE, SET_CLAMP_VALUE=FLAG_SET_CLAMP_VALUE))

    def to_json(self) -> dict[str, Any]:
        return {"operation": self.operation.value, "Dim": self.Dim, "clampMode": self.clampMode.name,
                "matrix": self.matrix.to_json()}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> LayoutVariant:
        return cls(Operation(o["operation"]), int(o["Dim"]), ClampMode[o["clampMode"]],
                   MatrixType.from_json(o["matrix"]))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: decode each case's words and load/store on host buffers."""
        src, dst = buffers
        m = self.matrix
        for words, (in_off, out_off) in zip(params, offsets):
            t = decode_layout(words, self.Dim, self.clampMode)
            if self.operation is Operation.load:
                tensor = src[in_off:in_off + t.extent()]
                dst[out_off:out_off + m.elements] = expected_load(t, m.rows, m.cols, tensor, m.component,
                                                                     device=True).ravel()
            else:
                matrix = src[in_off:in_off + m.elements].reshape(m.rows, m.cols)
                region = dst[out_off:out_off + t.extent()]
                region[:] = expected_store(t, matrix, region, racing=True)


def expected_on(case: TensorLayoutCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """The load's or store's oracle on given inputs (FamilySpec.expectation): the layout state
    replayed from the words as the shader runs the instructions (:func:`decode_layout`), then
    ``expected_load`` over the input tensor, or ``expected_store`` into a copy of the output
    region (SPV_NV_cooperative_matrix2, OpCooperativeMatrixLoadTensorNV / StoreTensorNV). The
    input tensor is read up to the replayed layout's extent, as the reference semantics read it."""
    v, m = case.shader, case.shader.matrix
    t = decode_layout(params, v.Dim, v.clampMode)
    if v.operation is Operation.load:
        return [None, expected_load(t, m.rows, m.cols, initial[0][:t.extent()], m.component).ravel()]
    return [None, expected_store(t, initial[0].reshape(m.rows, m.cols), np.array(initial[1], copy=True))]


def _opt(v: tuple[int, ...] | None) -> list[int] | None:
    return None if v is None else list(v)


@dataclass(frozen=True)
class TensorLayoutCase:
    """One load or store through a tensor layout, in the spec's vocabulary.

    ``data``/``seed`` name the input values: ``iota`` (element i holds i+1,
    so a wrong element names the address it came from) or ``random``.
    """

    family: ClassVar[str] = FAMILY_NAME

    shader: LayoutVariant
    layoutDimension: tuple[int, ...]
    blockSize: tuple[int, ...] | None = None
    stride: tuple[int, ...] | None = None
    offset: tuple[int, ...] | None = None
    span: tuple[int, ...] | None = None
    clampValue: int | None = None
    data_pattern: str = "iota"
    seed: int = 0

    def __post_init__(self) -> None:
        if (self.offset is None) != (self.span is None):
            raise ValueError("offset and span come together (one OpTensorLayoutSliceNV)")
        if self.shader.operation is Operation.store and self.blockSize is not None:
            raise ValueError("blockSize must not be set for a store (SPV_NV_cooperative_matrix2: "
                             "a block size larger than 1 leads to data races)")

    def variant(self) -> LayoutVariant:
        return self.shader

    def layout(self) -> TensorLayout:
        """The layout state after the shader's instruction sequence (checked valid)."""
        v = self.shader
        t = TensorLayout.create(v.Dim, v.clampMode)
        if self.blockSize is not None:
            t = t.set_block_size(*self.blockSize)
        t = t.set_dimension(*self.layoutDimension)
        if self.stride is not None:
            t = t.set_stride(*self.stride)
        if self.offset is not None and self.span is not None:
            t = t.slice(self.offset, self.span)
        if self.clampValue is not None:
            t = t.set_clamp_value(self.clampValue)
        t.check(stride_rule=self.stride is not None)
        return t

    def params(self) -> np.ndarray:
        """The family's parameter words (see W_* above)."""
        w = np.zeros(FAMILY_WORDS, dtype=np.uint32)
        flags = 0
        D = self.shader.Dim
        for flag, base, value in ((FLAG_SET_BLOCK_SIZE, W_BLOCK_SIZE, self.blockSize),
                                  (FLAG_SET_STRIDE, W_STRIDE, self.stride),
                                  (FLAG_SLICE, W_OFFSET, self.offset)):
            if value is not None:
                flags |= flag
                w[base:base + D] = np.asarray(value, dtype=np.int64) & 0xFFFFFFFF
        w[W_DIMENSION:W_DIMENSION + D] = self.layoutDimension
        if self.span is not None:
            w[W_SPAN:W_SPAN + D] = self.span
        if self.clampValue is not None:
            flags |= FLAG_SET_CLAMP_VALUE
            w[W_CLAMP_VALUE] = self.clampValue
        w[W_FLAGS] = flags
        w[W_FILL] = sentinel_bits(self.shader.matrix.component)
        return w

    def data(self) -> CaseData:
        initial = initial_buffers(self.shader.operation, self.shader.matrix, self.layout().extent(), self.data_pattern,
                                  self.seed)
        params = self.params()
        return CaseData(params, initial, expected_on(self, params, initial))

    def compare_rule(self) -> CompareRule:
        return CompareRule("bitwise")

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(),
                "layoutDimension": list(self.layoutDimension), "blockSize": _opt(self.blockSize),
                "stride": _opt(self.stride), "offset": _opt(self.offset), "span": _opt(self.span),
                "clampValue": self.clampValue, "data": {"pattern": self.data_pattern, "seed": self.seed}}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> TensorLayoutCase:
        def tup(key: str) -> tuple[int, ...] | None:
            return None if o.get(key) is None else tuple(int(x) for x in o[key])

        return cls(LayoutVariant.from_json(o["variant"]), tup("layoutDimension") or (),
                   tup("blockSize"), tup("stride"), tup("offset"), tup("span"),
                   None if o.get("clampValue") is None else int(o["clampValue"]),
                   o["data"]["pattern"], int(o["data"]["seed"]))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def hazards(self) -> list[str]:
        """Known ways this case can take a driver down (it then belongs to the
        opt-in "hazardous" group): "mirror-repeat-dim-1", a RepeatMirrored load
        that goes out of bounds on an axis of layoutDimension 1."""
        v = self.shader
        if v.operation is not Operation.load or v.clampMode is not ClampMode.RepeatMirrored \
                or 1 not in self.layoutDimension:
            return []
        t = self.layout()
        span = addressing.linear_to_span_coord(t, matrix_linear_index(v.matrix.rows, v.matrix.cols))
        for axis, dim in enumerate(t.layoutDimension):
            c = span[axis] + t.offset[axis]
            if dim == 1 and ((c < 0) | (c >= 1)).any():
                return ["mirror-repeat-dim-1"]
        return []

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """What element ``element`` of buffer ``buffer`` (0 input, 1 output) means,
        for a failure report: the matrix (row, col) and the tensor coordinates."""
        if buffer != 1:
            return {}
        m = self.shader.matrix
        is_store = self.shader.operation is Operation.store
        addresses = addressing.tensor_addresses(self.layout(), m.rows, m.cols, is_store=is_store)
        return addresses.locate(element, is_store=is_store)

    def describe(self) -> dict[str, Any]:
        """The resulting layout state, for reports (what the oracle used)."""
        t = self.layout()
        return {"LDim": t.LDim, "clampMode": t.clampMode.name, "blockSize": list(t.blockSize),
                "layoutDimension": list(t.layoutDimension), "stride": list(t.stride),
                "offset": list(t.offset), "span": list(t.span), "clampValue": t.clampValue,
                "clampValueBits": oracle_values.clamp_value_bits(t.clampValue, self.shader.matrix.component)}
