"""What a backend is given: a compiled shader variant, its buffers, and a dispatch of a batch.

A *dispatch* is a batch of cases that share one compiled shader variant: the parameter buffer
(binding 0) holds every case's run-time parameters, the variant's other buffers every case's data,
and the backend runs ``workgroups`` workgroups (one per case). docs/pack-format.md describes the
same records as a pack stores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ctsgen.device.profile import Requirements


@dataclass(frozen=True)
class BufferSpec:
    """One storage buffer of a shader variant: ``layout(binding = binding)``."""

    binding: int
    name: str
    dtype: str  # numpy dtype name of the buffer's element type, e.g. "float16"


@dataclass(frozen=True)
class ShaderVariant:
    """A compiled compute shader and what it needs from a device.

    Binding 0 is always the uint32 parameter buffer; ``buffers`` lists the
    family's buffers (bindings 1..n) in binding order.
    """

    id: str
    spirv: bytes
    local_size_x: int
    buffers: tuple[BufferSpec, ...]
    requirements: Requirements = field(default_factory=Requirements)
    family: str = ""
    signature: dict[str, Any] = field(default_factory=dict)  # the family's compile-time signature


#: Key of a family signature (``ShaderVariant.signature``) under which a variant asks the
#: runner and backends for buffer placement beyond the default: ``{"bufferAlign": {binding:
#: bytes}, "matrixConversions": [MatrixConversion.to_json(), ...]}``. It lives in the
#: signature so that it survives a pack's manifest unchanged.
DEVICE_LAYOUT_KEY = "deviceLayout"


@dataclass(frozen=True)
class MatrixConversion:
    """A per-case matrix the backend converts with vkConvertCooperativeVectorMatrixNV.

    Each case's source is a tightly packed row-major ``rows`` x ``cols`` matrix of
    ``src_type`` (a VkComponentTypeKHR) at the start of the case's data in binding
    ``src_binding``. Before the dispatch the backend converts it into ``dst_layout``
    (a VkCooperativeVectorMatrixLayoutNV) of ``dst_type`` in binding ``dst_binding``
    (a uint8 buffer the backend sizes itself: it sets each case's element offset
    word of that binding, so the shader finds the converted matrix at that offset
    plus the byte offset in parameter word ``offset_word`` of the record, if any).
    With ``write_back`` the backend converts the matrix back into the source region
    after the dispatch (matrices a shader accumulates into). A backend without
    optimal layouts (the reference) ignores conversions and works on the source.
    """

    src_binding: int
    dst_binding: int
    rows: int
    cols: int
    src_type: int
    dst_type: int
    dst_layout: int
    offset_word: int | None = None
    write_back: bool = False

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> MatrixConversion:
        return cls(**o)


def matrix_conversions(variant: ShaderVariant) -> tuple[MatrixConversion, ...]:
    """The conversions ``variant`` asks for (see :data:`DEVICE_LAYOUT_KEY`)."""
    layout = variant.signature.get(DEVICE_LAYOUT_KEY, {})
    return tuple(MatrixConversion.from_json(c) for c in layout.get("matrixConversions", ()))


def buffer_align(variant: ShaderVariant, binding: int, default: int) -> int:
    """The byte alignment each case's data needs in ``binding`` (at least ``default``)."""
    layout = variant.signature.get(DEVICE_LAYOUT_KEY, {})
    return max(default, int(layout.get("bufferAlign", {}).get(str(binding), default)))


@dataclass
class Dispatch:
    """A batch of cases of one variant: ``workgroups`` workgroups in x.

    ``buffers[0]`` is the uint32 parameter buffer, ``buffers[i]`` (i >= 1)
    is the initial content of ``variant.buffers[i-1]``.
    """

    variant: ShaderVariant
    workgroups: int
    buffers: list[np.ndarray]
