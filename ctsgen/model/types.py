"""Component types, matrix uses and scopes (SPV_KHR_cooperative_matrix vocabulary).

Each :class:`ComponentType` carries everything the pipeline needs to speak
about it: its ``VkComponentTypeKHR`` value (device profiles), its GLSL and
Slang type names (templates; Slang: the ``slang`` compiler route) and its numpy
dtype (oracle and buffers).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

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
    def slang(self) -> str:
        """The type's name in Slang (its standard library's scalar types)."""
        return _SLANG[self]

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
        return _BITS_DTYPE[self]

    @classmethod
    def from_vk(cls, value: int) -> ComponentType | None:
        """The member whose VkComponentTypeKHR is ``value`` (None if not modelled)."""
        return _BY_VK.get(value)


_BY_VK = {t.vk: t for t in ComponentType}
_SLANG = {ComponentType.float16: "half", ComponentType.float32: "float", ComponentType.sint8: "int8_t",
          ComponentType.sint32: "int", ComponentType.uint8: "uint8_t", ComponentType.uint32: "uint",
          ComponentType.bfloat16: "BFloat16"}
#: each component type's unsigned integer dtype of the same width, built once (asked per value conversion)
_BITS_DTYPE = {t: np.dtype(f"uint{8 * t.size}") for t in ComponentType}


class MatrixUse(enum.Enum):
    """Cooperative Matrix Use (SPV_KHR_cooperative_matrix)."""

    A = "gl_MatrixUseA"
    B = "gl_MatrixUseB"
    Accumulator = "gl_MatrixUseAccumulator"

    @property
    def slang(self) -> str:
        """The Use in Slang (``linalg.CoopMatMatrixUse``)."""
        return f"CoopMatMatrixUse::Matrix{self.name}"


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
    def slang(self) -> str:
        """The type in Slang: ``CoopMat<half, MemoryScope.Subgroup, 16, 16, CoopMatMatrixUse::MatrixA>``."""
        return (f"CoopMat<{self.component.slang}, MemoryScope.{self.scope.name}, {self.rows}, {self.cols}, "
                f"{self.use.slang}>")

    @property
    def elements(self) -> int:
        return self.rows * self.cols

    @property
    def label(self) -> str:
        """The matrix part of CTS-style names: ``float16.a_16x16.subgroup`` (``workgroup128``)."""
        scope = "subgroup" if self.scope is Scope.Subgroup else f"workgroup{self.workgroup_size}"
        return f"{self.component.name}.{self.use.name.lower()}_{self.rows}x{self.cols}.{scope}"

    def to_json(self) -> dict[str, Any]:
        """The matrix type in a pack's signatures and parameters (the spec's names)."""
        return {"componentType": self.component.name, "use": self.use.name, "scope": self.scope.name,
                "rows": self.rows, "cols": self.cols, "workgroupSize": self.workgroup_size}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> MatrixType:
        return cls(ComponentType[o["componentType"]], Scope[o["scope"]], int(o["rows"]), int(o["cols"]),
                   MatrixUse[o["use"]], int(o["workgroupSize"]))


class CoopVecType(enum.Enum):
    """A VkComponentTypeKHR as SPV_NV_cooperative_vector uses it: a vector's
    component type or an Input/Matrix/Bias *interpretation*.

    Kept apart from :class:`ComponentType` (cooperative matrix components):
    the 8-bit float and packed interpretations have no GLSL scalar type and
    are stored as bytes. ``dtype`` is the numpy type of one stored element
    (ml_dtypes for E4M3 / E5M2; uint32 words for the packed interpretations,
    four 8-bit values each, lowest component in the lowest bits).
    """

    float16 = (0, "Float16NV", "float16_t", "float16")
    float32 = (1, "Float32NV", "float", "float32")
    sint8 = (3, "SignedInt8NV", "int8_t", "int8")
    sint32 = (5, "SignedInt32NV", "int32_t", "int32")
    uint8 = (7, "UnsignedInt8NV", "uint8_t", "uint8")
    uint32 = (9, "UnsignedInt32NV", "uint32_t", "uint32")
    sint8packed = (1000491000, "SignedInt8PackedNV", "uint32_t", "uint32")
    uint8packed = (1000491001, "UnsignedInt8PackedNV", "uint32_t", "uint32")
    floate4m3 = (1000491002, "FloatE4M3NV", "", "float8_e4m3fn")
    floate5m2 = (1000491003, "FloatE5M2NV", "", "float8_e5m2")

    @property
    def vk(self) -> int:
        return self.value[0]

    @property
    def glsl_enum(self) -> str:
        """The GL_NV_cooperative_vector constant, e.g. ``gl_ComponentTypeFloat16NV``."""
        return f"gl_ComponentType{self.value[1]}"

    @property
    def glsl(self) -> str:
        """The GLSL scalar type of a vector of this component type ('' if none)."""
        return self.value[2]

    @property
    def slang(self) -> str:
        """The Slang scalar type of a vector of this component type (a packed interpretation's: its
        uint32 words; the 8-bit floats: Slang's ``FloatE4M3``/``FloatE5M2``)."""
        return _COOPVEC_SLANG.get(self, "uint")

    def __init__(self, vk: int, spirv: str, glsl: str, dtype: str) -> None:
        # the numpy dtype built once per member: the oracle asks for it per node per case
        self._dtype = np.dtype(getattr(ml_dtypes, dtype)) if dtype.startswith("float8") else np.dtype(dtype)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def is_float(self) -> bool:
        return self in _COOPVEC_FLOATS

    @property
    def is_packed(self) -> bool:
        return self in _COOPVEC_PACKED

    @property
    def is_signed(self) -> bool:
        return self in _COOPVEC_SIGNED

    @property
    def bits(self) -> int:
        """Bits of one logical value (8 for the packed interpretations)."""
        return 8 if self.is_packed else 8 * self.dtype.itemsize

    @classmethod
    def from_vk(cls, value: int) -> CoopVecType:
        for t in cls:
            if t.vk == value:
                return t
        raise ValueError(f"VkComponentTypeKHR {value} is not a cooperative-vector type ctsgen models")


# the kinds of member, as tuples built once (the oracle asks per node per case)
_COOPVEC_FLOATS = (CoopVecType.float16, CoopVecType.float32, CoopVecType.floate4m3, CoopVecType.floate5m2)
_COOPVEC_PACKED = (CoopVecType.sint8packed, CoopVecType.uint8packed)
_COOPVEC_SIGNED = (CoopVecType.sint8, CoopVecType.sint32, CoopVecType.sint8packed)
_COOPVEC_SLANG = {CoopVecType.float16: "half", CoopVecType.float32: "float", CoopVecType.sint8: "int8_t",
                  CoopVecType.sint32: "int", CoopVecType.uint8: "uint8_t", CoopVecType.floate4m3: "FloatE4M3",
                  CoopVecType.floate5m2: "FloatE5M2"}


def coopvec_combination_feature(inputType: int, inputInterpretation: int, matrixInterpretation: int,
                                biasInterpretation: int, resultType: int, transpose: bool) -> str:
    """The name under which a device profile advertises one VkCooperativeVectorPropertiesNV
    combination as a feature (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10089):
    a shader variant lists it in its requirements' features, so a device that does not
    advertise the combination reports the variant NotSupported."""
    return (f"coopvecCombination({inputType},{inputInterpretation},{matrixInterpretation},"
            f"{biasInterpretation},{resultType},{int(bool(transpose))})")


def coopvec_combination_features(combinations: list[dict[str, int]]) -> dict[str, int]:
    """Feature entries (name -> 1) for every advertised combination; an entry with
    ``transpose`` 1 also allows Transpose false (the VUID's "if Transpose is true")."""
    out: dict[str, int] = {}
    for c in combinations:
        for t in {False, bool(c["transpose"])}:
            out[coopvec_combination_feature(c["inputType"], c["inputInterpretation"], c["matrixInterpretation"],
                                            c["biasInterpretation"], c["resultType"], t)] = 1
    return out


#: The VkCooperativeVectorPropertiesNV members that name a component type.
COOPVEC_TYPE_FIELDS = ("inputType", "inputInterpretation", "matrixInterpretation", "biasInterpretation", "resultType")


def coopvec_component_type_feature(componentType: int) -> str:
    """The name under which a device profile advertises a cooperative-vector component type:
    ``OpTypeCooperativeVectorNV`` must have a Component Type "that is any supported type reported
    by vkGetPhysicalDeviceCooperativeVectorPropertiesNV" (VUID-RuntimeSpirv-OpTypeCooperativeVector-10095),
    so a variant declaring a vector of that type lists this name among its requirements' features."""
    return f"coopvecComponentType({componentType})"


def coopvec_component_type_features(combinations: list[dict[str, int]]) -> dict[str, int]:
    """Feature entries (name -> 1) for every type any member of any advertised combination names."""
    return {coopvec_component_type_feature(c[k]): 1 for c in combinations for k in COOPVEC_TYPE_FIELDS}
