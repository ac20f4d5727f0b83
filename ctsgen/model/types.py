"""Component types, matrix uses and scopes (SPV_KHR_cooperative_matrix vocabulary).

Each :class:`ComponentType` carries everything the pipeline needs to speak
about it: its ``VkComponentTypeKHR`` value (device profiles), its GLSL type
name (templates) and its numpy dtype (oracle and buffers).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class _TypeInfo:
    vk: int
    glsl: str
    dtype: np.dtype
    is_float: bool


class ComponentType(enum.Enum):
    """A cooperative matrix / vector component type (VkComponentTypeKHR)."""

    float16 = _TypeInfo(0, "float16_t", np.dtype(np.float16), True)
    float32 = _TypeInfo(1, "float", np.dtype(np.float32), True)
    sint8 = _TypeInfo(3, "int8_t", np.dtype(np.int8), False)
    sint32 = _TypeInfo(5, "int32_t", np.dtype(np.int32), False)
    uint8 = _TypeInfo(7, "uint8_t", np.dtype(np.uint8), False)
    uint32 = _TypeInfo(9, "uint32_t", np.dtype(np.uint32), False)
    bfloat16 = _TypeInfo(1000141000, "bfloat16_t", np.dtype(ml_dtypes.bfloat16), True)

    @property
    def vk(self) -> int:
        return self.value.vk

    @property
    def glsl(self) -> str:
        return self.value.glsl

    @property
    def dtype(self) -> np.dtype:
        return self.value.dtype

    @property
    def is_float(self) -> bool:
        return self.value.is_float

    @property
    def size(self) -> int:
        """Size of one component in bytes."""
        return self.value.dtype.itemsize

    @property
    def bits_dtype(self) -> np.dtype:
        """The unsigned integer dtype of the same width (for bit-exact compares)."""
        return np.dtype(f"uint{8 * self.size}")

    @classmethod
    def from_vk(cls, value: int) -> ComponentType | None:
        """The member whose VkComponentTypeKHR is ``value`` (None if not modelled)."""
        return _BY_VK.get(value)


_BY_VK = {t.vk: t for t in ComponentType}


class MatrixUse(enum.Enum):
    """Cooperative Matrix Use (SPV_KHR_cooperative_matrix)."""

    A = "gl_MatrixUseA"
    B = "gl_MatrixUseB"
    Accumulator = "gl_MatrixUseAccumulator"


class Scope(enum.Enum):
    """Scope of a cooperative matrix; values are VkScopeKHR."""

    Workgroup = 2
    Subgroup = 3

    @property
    def glsl(self) -> str:
        return f"gl_Scope{self.name}"


@dataclass(frozen=True)
class MatrixType:
    """``OpTypeCooperativeMatrixKHR``: component type, scope, Rows, Columns, Use.

    ``workgroup_size`` is the number of invocations of the workgroup that
    executes the shader (a subgroup of 32 for Subgroup scope).
    """

    component: ComponentType
    scope: Scope
    rows: int
    cols: int
    use: MatrixUse
    workgroup_size: int = 32

    @property
    def glsl(self) -> str:
        return (f"coopmat<{self.component.glsl}, {self.scope.glsl}, "
                f"{self.rows}, {self.cols}, {self.use.value}>")

    @property
    def elements(self) -> int:
        return self.rows * self.cols
