"""The element-wise cooperative-vector instructions in Slang (the ``slang`` route, docs/spec-decisions.md
"compiler-routes"; coopvec-elementwise's instructions, coopvec-program's activations and conversions):
the operators and functions Slang's ``CoopVec`` has, each of which Slang 2026.12 compiles to the one
instruction glslang emits (measured: OpFAdd ... GLSL.std.450 Atan, OpSDiv / OpUDiv, SMin / UMin); the
rest, which ``CoopVec`` lacks (the bit instructions, and NMin / NMax / NClamp, which GLSL lacks too),
written as the instruction itself in a ``spirv_asm`` block."""

from __future__ import annotations

from ctsgen.model.types import CoopVecType
from ctsgen.ops.coopvec_elementwise_ops import OPS, Op, instruction

#: The result expression over operands a, b, c and scalar s, where Slang has one; ``{V}`` the result type.
NATIVE: dict[Op, str] = {
    Op.load_store: "a", Op.convert: "{V}({via}a{close})",
    Op.fneg: "-a", Op.fadd: "a + b", Op.fsub: "a - b", Op.fmul: "a * b", Op.fdiv: "a / b", Op.vts: "a * s",
    Op.fma: "fma(a, b, c)", Op.fmin: "min(a, b)", Op.fmax: "max(a, b)", Op.fclamp: "clamp(a, b, c)",
    Op.step: "step(a, b)", Op.exp: "exp(a)", Op.log: "log(a)", Op.tanh: "tanh(a)", Op.atan: "atan(a)",
    Op.ineg: "-a", Op.iadd: "a + b", Op.isub: "a - b", Op.imul: "a * b", Op.idiv: "a / b",
    Op.imin: "min(a, b)", Op.imax: "max(a, b)", Op.iclamp: "clamp(a, b, c)",
}

_STD450 = "GLSL.std.450 "

#: Slang 2026.12 aborts converting a vector of an unsigned integer type to a signed one of another width
#: ("isSignedType(type)", as for matrices: docs/repros/slang-unsigned-to-signed), so such a conversion goes
#: through the unsigned type of the result's width: OpUConvert then OpBitcast, glslang's instructions.
VIA_UNSIGNED = {CoopVecType.sint8: CoopVecType.uint8, CoopVecType.sint32: CoopVecType.uint32}


def expression(op: Op, t: CoopVecType, r: CoopVecType, n: int) -> str:
    """The Slang expression of ``op`` on ``n``-component vectors of ``t`` giving ``r``."""
    result_type = f"CoopVec<{r.slang}, {n}>"
    if op in NATIVE:
        via = VIA_UNSIGNED.get(r) if not t.is_float and not t.is_signed and t.bits != r.bits else None
        return NATIVE[op].format(V=result_type, via=f"CoopVec<{via.slang}, {n}>(" if via else "",
                                 close=")" if via else "")
    name = instruction(op, t, r)
    args = " ".join(f"${o}" for o in "abc"[:OPS[op].arity])
    spelled = f"OpExtInst glsl450 {name[len(_STD450):]}" if name.startswith(_STD450) else name
    return f"spirv_asm {{ result:$${result_type} = {spelled} {args} }}"
