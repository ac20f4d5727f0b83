"""The cm2-convert family's case model: component conversions, Use conversions, transpose.

A :class:`ConvertVariant` is the compile-time signature (kind, source and
result matrix types); a :class:`ConvertCase` adds the data seed. The shader
loads the source row-major from binding 1, converts (``RESULT(source)``,
which glslang emits as Op{F,S,U}Convert / OpConvert* when the component type
changes and as OpCooperativeMatrixConvertNV when only the Use does), or
transposes (``coopMatTransposeNV``), and stores row-major to binding 2
(poisoned first). No run-time family words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops.cm2_convert import Kind, source_values
from ctsgen.ops import cm2_convert as cm2_convert_ops
from ctsgen.ops.cm2 import (check_slang_tiles, check_subgroups, requirements_for, subgroups_from_json, subgroups_json,
                            subgroups_label, tiles_extensions)
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse
from ctsgen.oracle.values import from_bits, sentinel_bits
from ctsgen.templates import render
from ctsgen.oracle.models import h100

#: Slang 2026.12 aborts converting a matrix of an unsigned integer type to a signed one of another width
#: (an internal error, "assert failure: slang-ir-util.cpp(2969): isSignedType(type)"; docs/repros/
#: slang-unsigned-to-signed), so its source converts to the unsigned type of the result's width first:
#: OpUConvert then OpBitcast, the instructions glslang emits for the one conversion.
SLANG_VIA_UNSIGNED = {ComponentType.sint8: ComponentType.uint8, ComponentType.sint32: ComponentType.uint32}

FAMILY_NAME = "cm2-convert"
N_BUFFERS = 2
FAMILY_WORDS = 0


def check_pair(kind: Kind, s: MatrixType, r: MatrixType) -> str | None:
    """None if ``kind`` may turn ``s`` into ``r`` (SPV_NV_cooperative_matrix2), else why not."""
    if (s.scope, s.workgroup_size) != (r.scope, r.workgroup_size):
        return "source and result share their scope"
    if kind is Kind.transpose:
        if (s.use, r.use) != (MatrixUse.Accumulator, MatrixUse.B) or (r.rows, r.cols) != (s.cols, s.rows) \
                or s.component is not r.component:
            return "transpose takes an M x N Accumulator to an N x M B matrix of the same component type"
        return None
    if (s.rows, s.cols) != (r.rows, r.cols):
        return "conversions keep the shape"
    if s.use is not r.use and s.use is not MatrixUse.Accumulator:
        return "a Use change goes from Accumulator to A or B"
    if kind is Kind.use:
        if s.component is not r.component or s.use is r.use:
            return "OpCooperativeMatrixConvertNV changes the Use only"
        return None
    if s.component is r.component:
        return "a component conversion changes the component type"
    if not s.component.is_float and not r.component.is_float and s.component.size == r.component.size:
        return "a same-width signedness change is a bitcast, which keeps the Use restriction"
    return None


@dataclass(frozen=True)
class ConvertVariant:
    kind: Kind
    source: MatrixType
    result: MatrixType
    #: subgroups per workgroup, each converting its own tile (Subgroup scope; ctsgen.ops.cm2.in_subgroups)
    subgroups: int = 1

    def __post_init__(self) -> None:
        why = check_pair(self.kind, self.source, self.result) or check_subgroups(self.subgroups, self.source)
        if why:
            raise ValueError(f"{self.kind.value} {self.source.glsl} -> {self.result.glsl}: {why}")

    @property
    def id(self) -> str:
        return (f"cm2_convert.{self.kind.value}.{self.source.label}.to.{self.result.label}"
                f"{subgroups_label(self.subgroups)}")

    @property
    def local_size_x(self) -> int:
        return self.source.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        return (BufferSpec(1, "source", self.source.component.dtype.name),
                BufferSpec(2, "result", self.result.component.dtype.name))

    def requirements(self) -> Requirements:
        feats = ["cooperativeMatrixConversions"] if self.kind is not Kind.convert \
            or self.source.use is not self.result.use else []
        return requirements_for(feats, [self.source, self.result])

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        s, r = self.source, self.result
        return render(Path(__file__).parent, "shader.comp.j2", bfloat16=ComponentType.bfloat16 in (s.component, r.component),
                      tiles=tiles_extensions(self.subgroups), **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): the same bindings and tiles; the result type's
        constructor, ``convertUse`` or ``Transpose`` (docs/spec-decisions.md "compiler-routes")."""
        check_slang_tiles(self.subgroups, self.source, self.result)
        return render(Path(__file__).parent, "shader.slang.j2", **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        s, r = self.source, self.result
        via = None
        if (self.kind is Kind.convert and not s.component.is_float and s.component.dtype.kind == "u"
                and r.component in SLANG_VIA_UNSIGNED and s.component.size != r.component.size):
            via = replace(r, component=SLANG_VIA_UNSIGNED[r.component])
        return dict(v=self, src=s, dst=r, via=via, words=N_BUFFERS + FAMILY_WORDS,
                    baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "source": self.source.to_json(), "result": self.result.to_json(),
                **subgroups_json(self.subgroups)}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ConvertVariant:
        return cls(Kind(o["kind"]), MatrixType.from_json(o["source"]), MatrixType.from_json(o["result"]),
                   subgroups_from_json(o))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: convert / transpose each tile of each case's source on host buffers."""
        src, dst = buffers
        s, r, n = self.source, self.result, self.subgroups
        for in_off, out_off in offsets:
            m = src[in_off:in_off + n * s.elements].reshape(n, s.rows, s.cols)
            out, _ = cm2_convert_ops.expected_result(self.kind, m, s.component, r.component)
            dst[out_off:out_off + n * r.elements] = out.ravel()


@dataclass(frozen=True)
class ConvertCase:
    family: ClassVar[str] = FAMILY_NAME

    shader: ConvertVariant
    seed: int = 0

    def variant(self) -> ConvertVariant:
        return self.shader

    def source(self) -> np.ndarray:
        s, r = self.shader.source, self.shader.result
        return source_values(s.component, r.component, self.shader.subgroups * s.elements, self.seed)

    def _float_result(self) -> bool:
        """A component conversion to a float type: judged by value within its tolerance (0 where the
        conversion is exact), as coopvec-elementwise judges the same instructions (decision
        "cm2-conversion-rules"): the shader does not declare SignedZeroInfNanPreserve, so a
        conversion may give either sign of zero (decision "signed-zero")."""
        return self.shader.kind is Kind.convert and self.shader.result.component.is_float

    def data(self) -> CaseData:
        s, r, n = self.shader.source, self.shader.result, self.shader.subgroups
        src = self.source()
        exp, tol = cm2_convert_ops.expected_result(self.shader.kind, src.reshape(n, s.rows, s.cols), s.component,
                                                   r.component)
        poison = np.full(n * r.elements, from_bits(sentinel_bits(r.component), r.component), dtype=r.component.dtype)
        return CaseData(np.zeros(FAMILY_WORDS, np.uint32), [src, poison], [None, exp.ravel()],
                        [None, tol.reshape(2, -1)] if self._float_result() else None)

    def compare_rule(self) -> CompareRule:
        return CompareRule("tolerance") if self._float_result() else CompareRule("bitwise")

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(), "seed": self.seed}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ConvertCase:
        return cls(ConvertVariant.from_json(o["variant"]), int(o["seed"]))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """Result element -> (subgroup, row, col) and the source element it comes from."""
        if buffer != 1:
            return {}
        v = self.shader
        tile, at = divmod(element, v.result.elements)
        row, col = divmod(at, v.result.cols)
        src = (col, row) if v.kind is Kind.transpose else (row, col)
        s = self.source()[tile * v.source.elements + src[0] * v.source.cols + src[1]]
        where = {"subgroup": tile} if v.subgroups > 1 else {}
        return {**where, "row": row, "col": col, "sourceRowCol": list(src), "sourceValue": float(s) if
                self.shader.source.component.is_float else int(s)}


def h100_model(case: ConvertCase, params: Any) -> list[np.ndarray | None] | None:
    """The result under a device model: conversions to bfloat16 truncate on the H100
    (docs/validation.md), the others round to nearest even; Transpose and ConvertNV move bits
    (nothing to model)."""
    v = case.shader
    if v.kind is not Kind.convert or not v.result.component.is_float:
        return None
    out = h100.convert_values(case.source(), v.source.component, v.result.component, params)
    return [None, out.ravel()]
