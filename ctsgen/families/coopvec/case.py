"""The coopvec family's case model (SPV_NV_cooperative_vector through GL_NV_cooperative_vector).

A :class:`CoopVecVariant` is the compile-time signature: the operation, the
type combination (Input type, Input/Matrix/Bias interpretations, Result type),
MemoryLayout, Transpose and the vector sizes M, K (constant operands of
OpCooperativeVectorMatrixMulAddNV). A :class:`CoopVecCase` adds the run-time
operands (MatrixOffset, MatrixStride, BiasOffset) and a data seed. Every
workgroup of ``invocations`` threads runs one case; each invocation has its
own input vector(s), so one case checks that many matrix-vector products.
The spec puts no condition on the workgroup size: a full subgroup (32 on the
H100) is the default, and 1, 8 and 64 invocations (partial subgroups and
several subgroups) are drawn too (docs/validation.md, coopvec run 1).

Operations: ``matmul`` (OpCooperativeVectorMatrixMulNV), ``matmuladd``
(...MulAddNV), ``outer_product`` (OpCooperativeVectorOuterProductAccumulateNV,
M x K fp16 matrix, TrainingOptimal), ``reduce_sum``
(OpCooperativeVectorReduceSumAccumulateNV, K fp16 components).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.families.coopvec.data import case_data
from ctsgen.model.types import CoopVecType
from ctsgen.families.coopvec.variant import (
    FAMILY_NAME, FAMILY_WORDS, VALUE_KINDS, W_BIAS_OFFSET, W_MATRIX_OFFSET, W_STRIDE, CoopVecVariant,
)
from ctsgen.ops.coopvec_matrix import LOCAL, MATMUL_OPS
from ctsgen.oracle.models import h100


@dataclass(frozen=True)
class CoopVecCase:
    """One case: run-time operands in the spec's vocabulary and the data seed.

    ``values`` names how the data are drawn (ctsgen/families/coopvec/data.py):
    ``random`` (full-mantissa values, the tolerance model), ``edges`` (plus
    saturation boundaries, fp8/fp16 max normals paired with min subnormals, min
    normals, int32 wrapping), ``grid`` (every partial sum exact in the Result
    Type in any order: compared bit for bit) or ``special`` (infinities and
    overflow to infinity, float matmuls only)."""

    family: ClassVar[str] = FAMILY_NAME

    shader: CoopVecVariant
    matrixOffset: int = 0
    matrixStride: int = 0
    biasOffset: int = 0
    seed: int = 0
    values: str = "random"

    def __post_init__(self) -> None:
        if self.values not in VALUE_KINDS:
            raise ValueError(f"values {self.values!r}: use one of {VALUE_KINDS}")
        if self.values == "special" and not self.shader.takes_special_values:
            raise ValueError(f"values 'special' needs a float MatMul with a float InputInterpretation; "
                             f"{self.shader.id} has none")

    def variant(self) -> CoopVecVariant:
        return self.shader

    def params(self) -> np.ndarray:
        w = np.zeros(FAMILY_WORDS, dtype=np.uint32)
        w[W_MATRIX_OFFSET], w[W_STRIDE], w[W_BIAS_OFFSET] = self.matrixOffset, self.matrixStride, self.biasOffset
        return w

    def data(self) -> CaseData:
        return case_data(self)

    def compare_rule(self) -> CompareRule:
        v = self.shader
        if v.op in MATMUL_OPS and not v.resultType.is_float:
            return CompareRule("bitwise")
        return CompareRule("tolerance")

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(), "matrixOffset": self.matrixOffset,
                "matrixStride": self.matrixStride, "biasOffset": self.biasOffset, "seed": self.seed,
                "values": self.values}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> CoopVecCase:
        values = o["values"] if "values" in o else ("edges" if o.get("edges") else "random")  # packs before "values"
        return cls(CoopVecVariant.from_json(o["variant"]), int(o["matrixOffset"]), int(o["matrixStride"]),
                   int(o["biasOffset"]), int(o["seed"]), str(values))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def hazards(self) -> list[str]:
        """Known ways this case can take a driver down (the opt-in "hazardous" group):
        "partial-subgroup-row-column-major", a RowMajor / ColumnMajor MatMul in a workgroup
        smaller than the H100's subgroup of 32, which hangs that driver (docs/validation.md)."""
        v = self.shader
        if v.op in MATMUL_OPS and not v.optimal and v.invocations < LOCAL:
            return ["partial-subgroup-row-column-major"]
        return []

    def describe(self) -> dict[str, Any]:
        v = self.shader
        return {"layout": v.layout.name, "transpose": v.transpose, "M": v.M, "K": v.K, "values": self.values,
                "toleranceModel": "docs/spec-decisions.md#coopvec-numeric-model"}



def h100_model(case: CoopVecCase, params: Any) -> list[np.ndarray | None] | None:
    """The output under a device model (ctsgen.oracle.models.h100): fp16-result MatMul /
    MatMulAdd with fp16, E4M3 or E5M2 inputs and matrix, as measured on the H100 (an fp16
    accumulator starting at the bias takes fused steps of 16 products: h100.coopvec_f16).
    Other paths (fp32 results, integers, the special-value cases) are not modelled."""
    v = case.shader
    fp16 = CoopVecType.float16
    fp8 = (CoopVecType.floate4m3, CoopVecType.floate5m2)
    interp = (v.inputInterpretation, v.matrixInterpretation)
    if v.op not in MATMUL_OPS or case.values == "special" or v.resultType is not fp16 or \
            interp not in ((fp16, fp16),) + tuple((t, t) for t in fp8):
        return None
    d = case.data()
    x = v.input_vectors(d.initial[0], 0)
    w = v.read_matrix(d.initial[1], case.matrixOffset, case.matrixStride)
    if v.matrixInterpretation in fp8:  # an optimal-layout fp8 matrix is stored as its fp16 source
        w = w.astype(v.matrixInterpretation.dtype).astype(np.float64)
    b = v.read_bias(d.initial[2], case.biasOffset)
    out = np.array(d.initial[3], copy=True)
    fp8_type = None if v.matrixInterpretation is fp16 else np.dtype(v.matrixInterpretation.dtype)
    v.write_rows(out, 0, h100.coopvec_f16(x, w, b, params, fp8_type).astype(np.float16))
    return [None, None, None, out]
