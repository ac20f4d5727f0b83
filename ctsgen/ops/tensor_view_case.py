"""The tensor-view case model: loads and stores through ``tensorLayoutNV`` + ``tensorViewNV``.

It lives below the families because cm2-program's view nodes are tensor-view cases; its JSON
(tagged ``"family": "tensor-view"``) is the pack format and its name hashes it.

A :class:`ViewVariant` is the compile-time signature: the layout part of
the tensor-layout family (operation, Dim, clampMode, matrix type) plus the
view type ``tensorViewNV<VDim, hasDimensions, p0, ..., p<VDim-1>>``. A
:class:`TensorViewCase` holds a tensor-layout case (its run-time layout
parameters, reused as is) and the view's run-time state. The shader replays
OpCreateTensorViewNV -> [OpTensorViewSetDimensionNV] ->
[OpTensorViewSetStrideNV] -> [OpTensorViewSetClipNV]; ``None`` means the
instruction is not executed, so the defaults of OpCreateTensorViewNV (clip
offsets 0, spans 0xFFFFFFFF) and of SetDimension (packed strides) are
tested too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops.tensor_layout_case import LayoutVariant, TensorLayoutCase
from ctsgen.ops.tensor_layout import (
    FAMILY_WORDS as LAYOUT_WORDS, FLAG_SET_BLOCK_SIZE, FLAG_SET_CLAMP_VALUE, FLAG_SET_STRIDE, FLAG_SLICE,
    W_BLOCK_SIZE, W_CLAMP_VALUE, W_DIMENSION, W_FILL, W_FLAGS, W_OFFSET, W_SPAN, W_STRIDE, Operation,
    decode_layout, initial_buffers,
)
from ctsgen.ops.tensor_view import (
    VIEW_SET_CLIP, VIEW_SET_DIMENSION, VIEW_SET_STRIDE, W_CLIP, W_VIEW_DIMENSION, W_VIEW_FLAGS, W_VIEW_STRIDE,
    decode_view, expected_load_view, expected_store_view,
)
from ctsgen.model.tensor import ClampMode, TensorLayout, TensorView
from ctsgen.model.types import MatrixType
from ctsgen.oracle.addressing import tensor_addresses_with_view
from ctsgen.templates import SHARED_DIR, render

FAMILY_NAME = "tensor-view"

FAMILY_WORDS = W_CLIP + 4
N_BUFFERS = 2  # binding 1: input, binding 2: output


@dataclass(frozen=True)
class ViewVariant:
    """Compile-time signature: the layout type, the view type and the matrix type."""

    operation: Operation
    Dim: int
    clampMode: ClampMode
    matrix: MatrixType
    hasDimensions: bool
    permutation: tuple[int, ...]

    @property
    def VDim(self) -> int:
        return len(self.permutation)

    def layout_variant(self) -> LayoutVariant:
        return LayoutVariant(self.operation, self.Dim, self.clampMode, self.matrix)

    @property
    def id(self) -> str:
        m = self.matrix
        view = f"view{self.VDim}_{'dims' if self.hasDimensions else 'span'}_p{''.join(map(str, self.permutation))}"
        return (f"tensor_view.{self.operation.value}.dim{self.Dim}.{view}.clamp_{self.clampMode.snake}."
                f"{m.label}")

    @property
    def local_size_x(self) -> int:
        return self.layout_variant().local_size_x

    def buffers(self) -> tuple[BufferSpec, ...]:
        return self.layout_variant().buffers()  # the same input/output pair as a plain layout

    def requirements(self) -> Requirements:
        return self.layout_variant().requirements()

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        m = self.matrix
        return render(SHARED_DIR, "tensor_view.comp.j2", T=m.component.glsl, bfloat16=m.component.name == "bfloat16",
                      **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): ``TensorLayout`` and ``TensorView`` (``Dimension``,
        ``Stride``, ``Clip``), the store through ``CoopMat.Store``, the load as the instruction with the
        poisoned matrix as its Object (docs/spec-decisions.md "compiler-routes")."""
        sliced = [w for i in range(self.Dim) for w in (W_OFFSET + i, W_SPAN + i)]  # Slice's operands, in order
        return render(SHARED_DIR, "tensor_view.slang.j2", T=self.matrix.component.slang, sliced=sliced,
                      **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        m = self.matrix
        return dict(v=self, m=m, baked=None if baked is None else [int(w) for w in baked],
                    component=m.component.name, words=N_BUFFERS + FAMILY_WORDS, H=N_BUFFERS,
                    W=dict(FLAGS=W_FLAGS, CLAMP_VALUE=W_CLAMP_VALUE, FILL=W_FILL,
                           BLOCK_SIZE=W_BLOCK_SIZE, DIMENSION=W_DIMENSION, STRIDE=W_STRIDE,
                           OFFSET=W_OFFSET, SPAN=W_SPAN, VIEW_FLAGS=W_VIEW_FLAGS,
                           VIEW_DIMENSION=W_VIEW_DIMENSION, VIEW_STRIDE=W_VIEW_STRIDE, CLIP=W_CLIP),
                    F=dict(SET_BLOCK_SIZE=FLAG_SET_BLOCK_SIZE, SET_STRIDE=FLAG_SET_STRIDE,
                           SLICE=FLAG_SLICE, SET_CLAMP_VALUE=FLAG_SET_CLAMP_VALUE,
                           VIEW_SET_DIMENSION=VIEW_SET_DIMENSION, VIEW_SET_STRIDE=VIEW_SET_STRIDE,
                           VIEW_SET_CLIP=VIEW_SET_CLIP))

    def to_json(self) -> dict[str, Any]:
        return {"operation": self.operation.value, "Dim": self.Dim, "clampMode": self.clampMode.name,
                "matrix": self.matrix.to_json(), "VDim": self.VDim,
                "hasDimensions": self.hasDimensions, "permutation": list(self.permutation)}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ViewVariant:
        return cls(Operation(o["operation"]), int(o["Dim"]), ClampMode[o["clampMode"]],
                   MatrixType.from_json(o["matrix"]), bool(o["hasDimensions"]),
                   tuple(int(p) for p in o["permutation"]))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: replay each case's instructions from its words, load/store on host buffers."""
        src, dst = buffers
        m = self.matrix
        for words, (in_off, out_off) in zip(params, offsets):
            t = decode_layout(words[:LAYOUT_WORDS], self.Dim, self.clampMode)
            v = decode_view(words, self)
            if self.operation is Operation.load:
                tensor = src[in_off:in_off + t.extent()]
                region = dst[out_off:out_off + m.elements]
                region[:] = expected_load_view(t, v, m.rows, m.cols, tensor, m.component, region,
                                               device=True).ravel()
            else:
                matrix = src[in_off:in_off + m.elements].reshape(m.rows, m.cols)
                region = dst[out_off:out_off + t.extent()]
                region[:] = expected_store_view(t, v, matrix, region, racing=True)


def expected_on(case: TensorViewCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """The load's or store's oracle on given inputs (FamilySpec.expectation): the layout and the
    view replayed from the words as the shader runs their instructions, then
    ``expected_load_view`` / ``expected_store_view`` (SPV_NV_tensor_addressing, "Tensor Layout
    and View") over copies of the given buffers; the input tensor is read up to the replayed
    layout's extent, as the reference semantics read it."""
    s, m = case.shader, case.shader.matrix
    t = decode_layout(params[:LAYOUT_WORDS], s.Dim, s.clampMode)
    v = decode_view(params, s)
    out0 = np.array(initial[1], copy=True)
    if s.operation is Operation.load:
        return [None, expected_load_view(t, v, m.rows, m.cols, initial[0][:t.extent()], m.component,
                                         out0).ravel()]
    return [None, expected_store_view(t, v, initial[0].reshape(m.rows, m.cols), out0)]


def _opt(v: tuple[int, ...] | None) -> list[int] | None:
    return None if v is None else list(v)


@dataclass(frozen=True)
class TensorViewCase:
    """One load or store through a layout (``layout``, a tensor-layout case whose
    variant matches) and a view: ``viewDimension`` / ``viewStride`` / ``clip``
    (clipRowOffset, clipRowSpan, clipColOffset, clipColSpan), each None when
    its instruction is not executed."""

    family: ClassVar[str] = FAMILY_NAME

    shader: ViewVariant
    layout_case: TensorLayoutCase
    viewDimension: tuple[int, ...] | None = None
    viewStride: tuple[int, ...] | None = None
    clip: tuple[int, int, int, int] | None = None

    def __post_init__(self) -> None:
        if self.layout_case.shader != self.shader.layout_variant():
            raise ValueError("the layout case's variant must be the view variant's layout part")
        if self.shader.hasDimensions and self.viewDimension is None:
            raise ValueError("a view with hasDimensions needs OpTensorViewSetDimensionNV "
                             "(its dimensions start at zero)")
        if self.viewStride is not None and self.viewDimension is None:
            raise ValueError("set viewStride only after viewDimension (SetDimension overwrites it)")

    def variant(self) -> ViewVariant:
        return self.shader

    def layout(self) -> TensorLayout:
        return self.layout_case.layout()

    def view(self) -> TensorView:
        s = self.shader
        v = TensorView.create(s.VDim, s.hasDimensions, s.permutation)
        if self.viewDimension is not None:
            v = v.set_dimension(*self.viewDimension)
        if self.viewStride is not None:
            v = v.set_stride(*self.viewStride)
        if self.clip is not None:
            v = v.set_clip(*self.clip)
        v.check(self.layout())
        return v

    def params(self) -> np.ndarray:
        w = np.zeros(FAMILY_WORDS, dtype=np.uint32)
        w[:LAYOUT_WORDS] = self.layout_case.params()
        flags = 0
        for flag, base, value in ((VIEW_SET_DIMENSION, W_VIEW_DIMENSION, self.viewDimension),
                                  (VIEW_SET_STRIDE, W_VIEW_STRIDE, self.viewStride),
                                  (VIEW_SET_CLIP, W_CLIP, self.clip)):
            if value is not None:
                flags |= flag
                w[base:base + len(value)] = value
        w[W_VIEW_FLAGS] = flags
        return w

    def data(self) -> CaseData:
        t = self.layout()
        self.view()  # checked valid with the layout
        lc = self.layout_case
        initial = initial_buffers(self.shader.operation, self.shader.matrix, t.extent(), lc.data_pattern, lc.seed)
        params = self.params()
        return CaseData(params, initial, expected_on(self, params, initial))

    def compare_rule(self) -> CompareRule:
        return CompareRule("bitwise")

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(), "layout": self.layout_case.to_json(),
                "viewDimension": _opt(self.viewDimension), "viewStride": _opt(self.viewStride),
                "clip": _opt(self.clip)}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> TensorViewCase:
        def tup(key: str) -> tuple[int, ...] | None:
            return None if o.get(key) is None else tuple(int(x) for x in o[key])

        return cls(ViewVariant.from_json(o["variant"]), TensorLayoutCase.from_json(o["layout"]),
                   tup("viewDimension"), tup("viewStride"), tup("clip"))  # type: ignore[arg-type]

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """What element ``element`` of the output buffer means: for a load the matrix
        (row, col), whether it is clipped, and its tensor coordinates; for a store
        which matrix element stores there."""
        if buffer != 1:
            return {}
        m = self.shader.matrix
        is_store = self.shader.operation is Operation.store
        a, in_clip = tensor_addresses_with_view(self.layout(), self.view(), m.rows, m.cols, is_store=is_store)
        return a.locate(element, is_store=is_store, in_clip=in_clip)

    def describe(self) -> dict[str, Any]:
        """The layout and view state the oracle used, for reports."""
        v = self.view()
        return {"layout": self.layout_case.describe(), "view": {
            "VDim": v.VDim, "hasDimensions": v.hasDimensions, "permutation": list(v.permutation),
            "viewDimension": list(v.viewDimension), "viewStride": list(v.viewStride),
            "clip": [v.clipRowOffset, v.clipRowSpan, v.clipColOffset, v.clipColSpan]}}
