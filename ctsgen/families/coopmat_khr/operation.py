"""The operations of the coopmat-khr family, in SPV_KHR_cooperative_matrix's vocabulary, and the
element-wise instruction (ctsgen.ops.coopvec_elementwise's semantics) each is on floats and integers."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from ctsgen.model.types import ComponentType, CoopVecType, MatrixType, MatrixUse
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp


class Op(str, enum.Enum):
    copy = "copy"
    negate = "negate"
    add = "add"
    sub = "sub"
    mul = "mul"
    div = "div"
    scale = "scale"
    convert = "convert"
    muladd = "muladd"

    @property
    def loads(self) -> int:
        """How many matrices the operation loads."""
        return 3 if self is Op.muladd else 2 if self in BINARY else 1


BINARY = (Op.add, Op.sub, Op.mul, Op.div)
#: the instruction each operation is on floats / integers (ctsgen.ops.coopvec_elementwise's semantics)
FLOAT_OP = {Op.negate: ElementOp.fneg, Op.add: ElementOp.fadd, Op.sub: ElementOp.fsub, Op.mul: ElementOp.fmul,
            Op.div: ElementOp.fdiv, Op.scale: ElementOp.vts}
INT_OP = {Op.negate: ElementOp.ineg, Op.add: ElementOp.iadd, Op.sub: ElementOp.isub, Op.mul: ElementOp.imul,
          Op.div: ElementOp.idiv, Op.scale: ElementOp.imul}
GLSL = {Op.copy: "a", Op.negate: "-a", Op.add: "a + b", Op.sub: "a - b", Op.mul: "a * b", Op.div: "a / b",
        Op.scale: "a * s"}


def element_type(component: ComponentType) -> CoopVecType:
    """The same component type in the element-wise oracle's vocabulary (no bfloat16: GLSL has no
    bfloat16 arithmetic, so no arithmetic variant has one)."""
    return CoopVecType[component.name]


def check_signature(op: Op, operands: Sequence[MatrixType], result: MatrixType, saturating: bool) -> str | None:
    """None if ``op`` may take ``operands`` to ``result``, else why not."""
    if len(operands) != op.loads:
        return f"{op.value} loads {op.loads} matrices, not {len(operands)}"
    if any((m.scope, m.workgroup_size) != (result.scope, result.workgroup_size) for m in operands):
        return "every matrix of an operation shares its scope"
    if saturating and (op is not Op.muladd or result.component.is_float):
        return "SaturatingAccumulation is an operand of an integer OpCooperativeMatrixMulAddKHR only"
    if op is Op.muladd:
        a, b, c = operands
        if (a.use, b.use, c.use, result.use) != (MatrixUse.A, MatrixUse.B, MatrixUse.Accumulator,
                                                 MatrixUse.Accumulator):
            return "MulAdd takes A, B and an Accumulator to an Accumulator"
        if (a.rows, a.cols, b.rows, b.cols, c.rows, c.cols) != (result.rows, b.rows, a.cols, result.cols,
                                                                result.rows, result.cols):
            return "MulAdd is M x K times K x N plus M x N"
        return None
    src = operands[0]
    if op is Op.convert:
        if (src.rows, src.cols, src.use) != (result.rows, result.cols, result.use):
            return "a conversion keeps the Rows, Columns and Use"
        return None if src.component is not result.component else "a conversion changes the component type"
    if any(m != result for m in operands):
        return f"{op.value} keeps the matrix type"
    if op is not Op.copy and result.component is ComponentType.bfloat16:
        return "GLSL has no bfloat16 arithmetic"
    return None
