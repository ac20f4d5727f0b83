"""Tensor layouts: the logical state of ``tensorLayoutNV`` and the Ops that build it.

SPV_NV_tensor_addressing, "3.X Tensor Layout and View": a layout has
``LDim`` dimensions (dimension 0 outermost) and the state ``blockSize``,
``layoutDimension``, ``stride``, ``offset``, ``span`` and ``clampValue``.
The methods of :class:`TensorLayout` mirror the OpTensorLayout*
instructions, each returning an updated copy exactly as the spec's
"3.X Tensor Layout and View Instructions" describe, so the oracle derives
the state the shader builds by replaying the same instruction sequence.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any, TypeVar

from ctsgen.errors import CtsgenError

MAX_DIM = 5
UINT32_MAX = 2**32 - 1


class ClampMode(enum.IntEnum):
    """Tensor Clamp Mode (SPV_NV_tensor_addressing, "3.X Tensor Clamp Mode")."""

    Undefined = 0
    Constant = 1
    ClampToEdge = 2
    Repeat = 3
    RepeatMirrored = 4

    @property
    def glsl(self) -> str:
        """The GL_NV_cooperative_matrix2 constant (GLSL spells mode 4 MirrorRepeat)."""
        glsl_name = "MirrorRepeat" if self is ClampMode.RepeatMirrored else self.name
        return f"gl_CooperativeMatrixClampMode{glsl_name}NV"

    @property
    def snake(self) -> str:
        return {"ClampToEdge": "clamp_to_edge", "RepeatMirrored": "repeat_mirrored"}.get(
            self.name, self.name.lower())


class InvalidLayoutError(CtsgenError, ValueError):
    """A tensor layout violates a rule of SPV_NV_tensor_addressing."""


_State = TypeVar("_State", "TensorLayout", "TensorView")


def _copy_with(state: _State, **changes: Any) -> _State:
    """``dataclasses.replace`` for the frozen state classes here (plain fields, no
    ``__post_init__``): a copy with ``changes``, without the generic field walk."""
    new = object.__new__(type(state))
    new.__dict__.update(state.__dict__, **changes)
    return new


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def default_strides(layoutDimension: tuple[int, ...], blockSize: tuple[int, ...]) -> tuple[int, ...]:
    """Strides set by OpTensorLayoutSetDimensionNV: ``stride[LDim-1] = 1`` and
    ``stride[i] = stride[i+1] * ceiling(Dim[i+1] / blockSize[i+1])``."""
    strides = [1] * len(layoutDimension)
    for i in range(len(layoutDimension) - 2, -1, -1):
        strides[i] = strides[i + 1] * ceil_div(layoutDimension[i + 1], blockSize[i + 1])
    return tuple(strides)


@dataclass(frozen=True)
class TensorLayout:
    """Logical state of ``tensorLayoutNV<LDim, clampMode>`` (field names as in the spec)."""

    clampMode: ClampMode
    blockSize: tuple[int, ...]
    layoutDimension: tuple[int, ...]
    stride: tuple[int, ...]
    offset: tuple[int, ...]
    span: tuple[int, ...]
    clampValue: int = 0

    @property
    def LDim(self) -> int:
        return len(self.layoutDimension)

    # -- the OpTensorLayout* instructions --------------------------------
    @classmethod
    def create(cls, Dim: int, clampMode: ClampMode = ClampMode.Undefined) -> TensorLayout:
        """OpCreateTensorLayoutNV: layoutDimension, stride, span and offset are
        zero, blockSize is one, clampValue is zero."""
        if not 1 <= Dim <= MAX_DIM:
            raise InvalidLayoutError(f"Dim must be in [1, {MAX_DIM}] (OpTypeTensorLayoutNV), got {Dim}")
        zeros = (0,) * Dim
        return cls(ClampMode(clampMode), (1,) * Dim, zeros, zeros, zeros, zeros, 0)

    def set_block_size(self, *blockSize: int) -> TensorLayout:
        """OpTensorLayoutSetBlockSizeNV."""
        return _copy_with(self, blockSize=self._operands("BlockSize", blockSize))

    def set_dimension(self, *Dim: int) -> TensorLayout:
        """OpTensorLayoutSetDimensionNV: sets layoutDimension and span to Dim,
        offset to zero, and the strides from Dim and the current blockSize."""
        dims = self._operands("Dim", Dim)
        return _copy_with(self, layoutDimension=dims, span=dims, offset=(0,) * self.LDim,
                       stride=default_strides(dims, self.blockSize))

    def set_stride(self, *Stride: int) -> TensorLayout:
        """OpTensorLayoutSetStrideNV."""
        return _copy_with(self, stride=self._operands("Stride", Stride))

    def slice(self, offsets: tuple[int, ...], spans: tuple[int, ...]) -> TensorLayout:
        """OpTensorLayoutSliceNV: *adds* Offset<i> to offset[i] and sets span[i]."""
        offsets = self._operands("Offset", offsets)
        spans = self._operands("Span", spans)
        return _copy_with(self, offset=tuple(o + d for o, d in zip(self.offset, offsets)), span=spans)

    def set_clamp_value(self, Value: int) -> TensorLayout:
        """OpTensorLayoutSetClampValueNV (a 32-bit integer)."""
        return _copy_with(self, clampValue=Value & UINT32_MAX)

    def _operands(self, what: str, values: tuple[int, ...]) -> tuple[int, ...]:
        if len(values) != self.LDim:
            raise InvalidLayoutError(
                f"the number of {what} operands must match the dimension ({self.LDim}), got {len(values)}")
        return tuple(int(v) for v in values)

    # -- valid usage ----------------------------------------------------
    def check(self, stride_rule: bool = True) -> None:
        """Raise :class:`InvalidLayoutError` naming the first violated rule.

        ``stride_rule=False`` skips the stride rule, which is valid usage of
        OpTensorLayoutSetStrideNV only: strides set by
        OpTensorLayoutSetDimensionNV satisfy it by construction (and a
        modelled driver deviation may not).

        Rules: every layoutDimension, blockSize and span is at least 1 (a
        zero span divides by zero in linearToSpanCoord); offsets fit int32;
        and the stride rule of OpTensorLayoutSetStrideNV,
        ``stride[i] >= stride[i+1] * ceiling(layoutDimension[i+1] / blockSize[i+1])``
        (docs/spec-decisions.md explains why this, not the unblocked wording
        under OpTensorLayoutSliceNV, is the rule applied).
        """
        for name in ("layoutDimension", "blockSize", "span"):
            vals = getattr(self, name)
            for i, v in enumerate(vals):
                if not 1 <= v <= UINT32_MAX:
                    raise InvalidLayoutError(f"{name}[{i}] = {v}: must be in [1, 2^32-1]")
        for i, o in enumerate(self.offset):
            if not -(2**31) <= o < 2**31:
                raise InvalidLayoutError(f"offset[{i}] = {o}: must fit a 32-bit signed integer")
        if not stride_rule:
            return
        if self.stride[-1] < 1:
            raise InvalidLayoutError(f"stride[{self.LDim - 1}] = {self.stride[-1]}: must be at least 1")
        for i in range(self.LDim - 1):
            need = self.stride[i + 1] * ceil_div(self.layoutDimension[i + 1], self.blockSize[i + 1])
            if self.stride[i] < need:
                raise InvalidLayoutError(
                    f"stride[{i}] = {self.stride[i]} is below stride[{i + 1}] * "
                    f"ceiling(layoutDimension[{i + 1}] / blockSize[{i + 1}]) = {need} "
                    f"(OpTensorLayoutSetStrideNV valid usage); use stride[{i}] >= {need}")

    def extent(self) -> int:
        """Number of elements of memory the layout can address: 1 + the largest
        linear index of an in-bounds coordinate (tensorCoordToLinear)."""
        blocks = [ceil_div(d, b) for d, b in zip(self.layoutDimension, self.blockSize)]
        return 1 + sum((n - 1) * s for n, s in zip(blocks, self.stride))

    @property
    def span_elements(self) -> int:
        return math.prod(self.span)


#: OpCreateTensorViewNV initialises every clip span to 0xFFFFFFFF (no clipping).
CLIP_SPAN_NONE = UINT32_MAX


class InvalidViewError(CtsgenError, ValueError):
    """A tensor view violates a rule of SPV_NV_tensor_addressing."""


@dataclass(frozen=True)
class TensorView:
    """Logical state of ``tensorViewNV<Dim, hasDimensions, p0, ..., p<Dim-1>>``.

    SPV_NV_tensor_addressing, "3.X Tensor Layout and View": ``VDim``,
    ``hasDimensions`` and ``permutation`` are compile-time (the type);
    ``viewDimension``, ``viewStride`` and the four clip values are the state
    the OpTensorView* instructions update. Methods mirror those
    instructions and return updated copies.
    """

    hasDimensions: bool
    permutation: tuple[int, ...]
    viewDimension: tuple[int, ...]
    viewStride: tuple[int, ...]
    clipRowOffset: int = 0
    clipRowSpan: int = CLIP_SPAN_NONE
    clipColOffset: int = 0
    clipColSpan: int = CLIP_SPAN_NONE

    @property
    def VDim(self) -> int:
        return len(self.permutation)

    @classmethod
    def create(cls, Dim: int, hasDimensions: bool, permutation: tuple[int, ...] | None = None) -> TensorView:
        """OpCreateTensorViewNV (with the type OpTypeTensorViewNV): viewDimension and
        viewStride are zero, clip offsets 0 and clip spans 0xFFFFFFFF."""
        if not 1 <= Dim <= MAX_DIM:
            raise InvalidViewError(f"Dim must be in [1, {MAX_DIM}] (OpTypeTensorViewNV), got {Dim}")
        perm = tuple(range(Dim)) if permutation is None else tuple(int(p) for p in permutation)
        if sorted(perm) != list(range(Dim)):
            raise InvalidViewError(f"p0..p{Dim - 1} must form a permutation of [0, {Dim}) "
                                   f"(OpTypeTensorViewNV), got {perm}")
        zeros = (0,) * Dim
        return cls(bool(hasDimensions), perm, zeros, zeros)

    def set_dimension(self, *Dim: int) -> TensorView:
        """OpTensorViewSetDimensionNV: sets viewDimension, ``viewStride[VDim-1] = 1`` and
        ``viewStride[i]`` = the product of Dim<i+1> .. Dim<VDim-1>."""
        dims = self._operands("Dim", Dim)
        strides = [1] * self.VDim
        for i in range(self.VDim - 2, -1, -1):
            strides[i] = strides[i + 1] * dims[i + 1]
        return _copy_with(self, viewDimension=dims, viewStride=tuple(strides))

    def set_stride(self, *Stride: int) -> TensorView:
        """OpTensorViewSetStrideNV."""
        return _copy_with(self, viewStride=self._operands("Stride", Stride))

    def set_clip(self, clipRowOffset: int, clipRowSpan: int, clipColOffset: int, clipColSpan: int) -> TensorView:
        """OpTensorViewSetClipNV (32-bit unsigned operands)."""
        return _copy_with(self, clipRowOffset=clipRowOffset & UINT32_MAX, clipRowSpan=clipRowSpan & UINT32_MAX,
                       clipColOffset=clipColOffset & UINT32_MAX, clipColSpan=clipColSpan & UINT32_MAX)

    def _operands(self, what: str, values: tuple[int, ...]) -> tuple[int, ...]:
        if len(values) != self.VDim:
            raise InvalidViewError(
                f"the number of {what} operands must match the view's dimension ({self.VDim}), got {len(values)}")
        return tuple(int(v) for v in values)

    def check(self, layout: TensorLayout) -> None:
        """Raise :class:`InvalidViewError` if addressing through ``layout`` and this
        view is undefined: with hasDimensions every viewDimension must be at
        least 1 (linearToViewCoord divides by it); without, the layout's span
        stands in, so VDim must not exceed the layout's LDim. A clip offset plus
        its span must not pass 2^32-1 (decision "clip-no-wrap" in
        docs/spec-decisions.md: the spec's uint32 sum would wrap).
        """
        for what, off, span in (("Row", self.clipRowOffset, self.clipRowSpan),
                                ("Col", self.clipColOffset, self.clipColSpan)):
            if off + span > UINT32_MAX:
                raise InvalidViewError(f"clip{what}Offset + clip{what}Span = {off + span} wraps in 32 bits; "
                                       f"use a span of at most {UINT32_MAX - off}")
        if self.hasDimensions:
            for i, d in enumerate(self.viewDimension):
                if not 1 <= d <= UINT32_MAX:
                    raise InvalidViewError(f"viewDimension[{i}] = {d}: must be in [1, 2^32-1]; "
                                           f"call OpTensorViewSetDimensionNV with nonzero dimensions")
        elif self.VDim > layout.LDim:
            raise InvalidViewError(f"a view without dimensions uses the layout's span: VDim {self.VDim} "
                                   f"must not exceed LDim {layout.LDim}")
