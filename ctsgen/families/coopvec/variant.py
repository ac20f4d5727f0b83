"""The coopvec family's compile-time signature: :class:`CoopVecVariant` (SPV_NV_cooperative_vector).

The instruction's operands, their rules, geometry and buffer readers are
:class:`ctsgen.ops.coopvec_matrix.CoopVecSignature`; the variant adds its id, buffers,
requirements, device layout, shader and reference semantics, with what the case's data
(``data.py``) and the case itself (``case.py``) both need: the parameter words and
:class:`CaseOperands`, the run-time operands the data of a case depend on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ctsgen.core.shader import DEVICE_LAYOUT_KEY, BufferSpec, MatrixConversion
from ctsgen.device.profile import Requirements
from ctsgen.ops import coopvec as oracle
from ctsgen.ops.coopvec_matrix import (
    F16, LAYOUTS, LOCAL, MATMUL_OPS, CoopVecOp, CoopVecSignature, MatrixLayout, outer_terms,
)
from ctsgen.model.types import CoopVecType, coopvec_combination_feature
from ctsgen.templates import render

FAMILY_NAME = "coopvec"


def slang_interpretation(t: CoopVecType) -> str:
    """A component type or interpretation as Slang's ``CoopVecComponentType`` (``SignedInt8Packed``)."""
    return f"CoopVecComponentType::{t.value[1].removesuffix('NV')}"

W_MATRIX_OFFSET, W_STRIDE, W_BIAS_OFFSET = 0, 1, 2
FAMILY_WORDS = 3
VALUE_KINDS = ("random", "edges", "grid", "special")  # how a case's data are drawn (CoopVecCase.values)


class CoopVecVariant(CoopVecSignature):
    """Compile-time signature: the instruction's operands (:class:`CoopVecSignature`, whose
    checks, geometry and readers it keeps) and the shader that runs it."""

    @property
    def id(self) -> str:
        t = (f"{self.inputType.name}_as_{self.inputInterpretation.name}.m_{self.matrixInterpretation.name}"
             f".b_{self.biasInterpretation.name}.r_{self.resultType.name}")
        if self.op is CoopVecOp.reduce_sum:
            return f"coopvec.reduce_sum.float16.k{self.K}{self.workgroup_suffix}"
        return (f"coopvec.{self.op}.{t}.{LAYOUTS[self.layout].lower()}"
                f"{'.transpose' if self.transpose else ''}.m{self.M}_k{self.K}{self.workgroup_suffix}")

    @property
    def workgroup_suffix(self) -> str:
        return "" if self.invocations == LOCAL else f".wg{self.invocations}"

    @property
    def local_size_x(self) -> int:
        return self.invocations

    def buffers(self) -> tuple[BufferSpec, ...]:
        if self.op in MATMUL_OPS:
            out = [BufferSpec(1, "input", self.inputType.dtype.name), BufferSpec(2, "matrix", "uint8"),
                   BufferSpec(3, "bias", "uint8"), BufferSpec(4, "output", self.resultType.dtype.name)]
            if self.optimal:
                out.append(BufferSpec(5, "optimal", "uint8"))
            return tuple(out)
        if self.op is CoopVecOp.outer_product:
            return (BufferSpec(1, "a", "float16"), BufferSpec(2, "matrix", "float16"),
                    BufferSpec(3, "b", "float16"), BufferSpec(4, "optimal", "uint8"))
        return (BufferSpec(1, "v", "float16"), BufferSpec(2, "sum", "float16"))

    def requirements(self) -> Requirements:
        feats = ["cooperativeVector"]
        if self.op in MATMUL_OPS:
            feats.append(coopvec_combination_feature(self.inputType.vk, self.inputInterpretation.vk,
                                                     self.matrixInterpretation.vk, self.biasInterpretation.vk,
                                                     self.resultType.vk, self.transpose))
        else:
            feats.append("cooperativeVectorTraining")
        return Requirements(extensions=("VK_NV_cooperative_vector",), features=tuple(feats))

    def device_layout(self) -> dict[str, Any]:
        """Placement the runner and backends honour (ctsgen.backends.base.DEVICE_LAYOUT_KEY)."""
        n = len(self.buffers())
        if self.op in MATMUL_OPS:
            out: dict[str, Any] = {"bufferAlign": {"2": 64}}
            if self.optimal:
                rows, cols = self.stored_shape
                out["matrixConversions"] = [MatrixConversion(
                    2, 5, rows, cols, self.source_type.vk, self.matrixInterpretation.vk, int(self.layout),
                    n + W_MATRIX_OFFSET).to_json()]
            return out
        if self.op is CoopVecOp.outer_product:
            return {"matrixConversions": [MatrixConversion(2, 4, self.M, self.K, F16.vk, F16.vk,
                                                           int(MatrixLayout.TrainingOptimal),
                                                           n + W_MATRIX_OFFSET, write_back=True).to_json()]}
        return {}

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        return render(Path(__file__).parent, "shader.comp.j2",
                      layout_enum=f"gl_CooperativeVectorMatrixLayout{self.layout.name}NV", **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): ``coopVecMatMul(Add)Packed`` for an optimal
        layout, ``coopVecOuterProductAccumulate``, ``coopVecReduceSumAccumulate``; a RowMajor or
        ColumnMajor matrix's instruction in ``spirv_asm``, as Slang's function takes MatrixStride as a
        compile-time constant (docs/spec-decisions.md "compiler-routes")."""
        flags = [f for f, signed in (("MatrixBSignedComponentsKHR", self.inputType.is_signed),
                                      ("MatrixResultSignedComponentsKHR", self.resultType.is_signed)) if signed]
        return render(Path(__file__).parent, "shader.slang.j2", interp=slang_interpretation,
                      signedness=" " + "|".join(flags) if flags else "", **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        n = len(self.buffers())
        return dict(v=self, H=n, words=n + FAMILY_WORDS, baked=None if baked is None else [int(w) for w in baked],
                    W=dict(MOFF=W_MATRIX_OFFSET, STRIDE=W_STRIDE, BOFF=W_BIAS_OFFSET),
                    in_es=self.inputType.dtype.itemsize,
                    res_es=(self.resultType if self.op in MATMUL_OPS else F16).dtype.itemsize)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op.value, "inputType": self.inputType.name, "inputInterpretation": self.inputInterpretation.name,
                "matrixInterpretation": self.matrixInterpretation.name,
                "biasInterpretation": self.biasInterpretation.name, "resultType": self.resultType.name,
                "layout": int(self.layout), "transpose": self.transpose, "M": self.M, "K": self.K,
                "invocations": self.invocations, DEVICE_LAYOUT_KEY: self.device_layout()}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> CoopVecVariant:
        T = CoopVecType
        return cls(CoopVecOp(o["op"]), T[o["inputType"]], T[o["inputInterpretation"]], T[o["matrixInterpretation"]],
                   T[o["biasInterpretation"]], T[o["resultType"]], MatrixLayout(int(o["layout"])), bool(o["transpose"]),
                   int(o["M"]), int(o["K"]), int(o.get("invocations", LOCAL)))

    # -- reference semantics ----------------------------------------------
    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Decode each case's words and run the instruction on host buffers (optimal layouts
        are ignored: the reference reads the row-major source, see MatrixConversion)."""
        for words, offs in zip(params.astype(np.int64), offsets):
            if self.op in MATMUL_OPS:
                x = self.input_vectors(buffers[0], int(offs[0]))
                w = self.read_matrix(buffers[1][offs[1]:], int(words[W_MATRIX_OFFSET]), int(words[W_STRIDE]))
                b = self.read_bias(buffers[2][offs[2]:], int(words[W_BIAS_OFFSET]))
                y = oracle.matmul(x, w, b, self.resultType)
                self.write_rows(buffers[3], int(offs[3]), y)
            elif self.op is CoopVecOp.outer_product:
                a = self.rows_of(buffers[0], int(offs[0]), self.M)
                bv = self.rows_of(buffers[2], int(offs[2]), self.K)
                c = buffers[1][offs[1]:offs[1] + self.M * self.K].reshape(self.M, self.K)
                c[:] = oracle.accumulate_f16(c, outer_terms(a, bv))
            else:
                v = self.rows_of(buffers[0], int(offs[0]), self.K)
                start = int(offs[1]) + int(words[W_BIAS_OFFSET]) // 2
                acc = buffers[1][start:start + self.K]
                acc[:] = oracle.accumulate_f16(acc, v)

class CaseOperands(Protocol):
    """The run-time operands and data seed of a case (a :class:`~ctsgen.families.coopvec.case.CoopVecCase`),
    what its data are drawn from."""

    shader: CoopVecVariant
    matrixOffset: int
    matrixStride: int
    biasOffset: int
    seed: int
    values: str

    def params(self) -> np.ndarray: ...
