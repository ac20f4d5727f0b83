"""The element-wise cooperative-vector operations of SPV_NV_cooperative_vector, in spec vocabulary.

One :class:`Op` per instruction the extension allows on cooperative vectors
(the signed/unsigned twins of an integer instruction share one ``Op``; the
vector's component type picks the instruction, as glslang does):

* 3.42.8 Memory Instructions: OpCooperativeVectorLoadNV / StoreNV (``load_store``);
* 3.42.11 Conversion Instructions: OpFConvert, OpConvertFToS/FToU,
  OpConvertSToF/UToF, OpSConvert/UConvert and same-width OpBitcast (``convert``;
  GLSL constructor ``coopvecNV<R, N>(a)``);
* 3.42.13 Arithmetic Instructions: OpFNegate/SNegate, OpFAdd/IAdd, OpFSub/ISub,
  OpFMul/IMul, OpFDiv/SDiv/UDiv, OpVectorTimesScalar, and GLSL.std.450
  FMin/UMin/SMin/NMin, FMax/UMax/SMax/NMax, FClamp/UClamp/SClamp/NClamp,
  Step, Exp, Log, Tanh, Atan, Fma;
* 3.42.14 Bit Instructions: OpShiftLeftLogical, OpShiftRightLogical /
  OpShiftRightArithmetic, OpBitwiseAnd/Or/Xor, OpNot.

GLSL has no NMin/NMax/NClamp; the shader declares them with
GL_EXT_spirv_intrinsics as GLSL.std.450 instructions 79/80/81 (``EXT_INST``),
so glslang emits them as they are, no SPIR-V rewriting.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ctsgen.model.types import CoopVecType

T = CoopVecType
#: Component types a cooperative vector of a GLSL shader can have (GL_NV_cooperative_vector scalars).
FLOAT_TYPES = (T.float16, T.float32)
INT_TYPES = (T.sint8, T.uint8, T.sint32, T.uint32)
ELEMENT_TYPES = FLOAT_TYPES + INT_TYPES


class Op(str, enum.Enum):
    load_store = "load_store"
    convert = "convert"
    fneg = "fneg"
    fadd = "fadd"
    fsub = "fsub"
    fmul = "fmul"
    fdiv = "fdiv"
    vts = "vts"
    fma = "fma"
    fmin = "fmin"
    fmax = "fmax"
    fclamp = "fclamp"
    nmin = "nmin"
    nmax = "nmax"
    nclamp = "nclamp"
    step = "step"
    exp = "exp"
    log = "log"
    tanh = "tanh"
    atan = "atan"
    ineg = "ineg"
    iadd = "iadd"
    isub = "isub"
    imul = "imul"
    idiv = "idiv"
    imin = "imin"
    imax = "imax"
    iclamp = "iclamp"
    band = "band"
    bor = "bor"
    bxor = "bxor"
    bnot = "bnot"
    shl = "shl"
    shr = "shr"


@dataclass(frozen=True)
class OpInfo:
    """``glsl``: the result expression over operands a, b, c and scalar s; ``instruction``:
    (signed or float, unsigned) SPIR-V names; ``types``: component types it applies to;
    ``ieee``: NaN / infinity / overflow results are defined for it once the shader declares
    SignedZeroInfNanPreserve and RoundingModeRTE (docs/spec-decisions.md coopvec-elementwise-rules)."""

    glsl: str
    arity: int
    instruction: tuple[str, str]
    types: tuple[CoopVecType, ...]
    ieee: bool = False


def _f(glsl: str, arity: int, instruction: str, ieee: bool = False) -> OpInfo:
    return OpInfo(glsl, arity, (instruction, instruction), FLOAT_TYPES, ieee)


def _i(glsl: str, arity: int, signed: str, unsigned: str | None = None) -> OpInfo:
    return OpInfo(glsl, arity, (signed, unsigned or signed), INT_TYPES)


OPS: dict[Op, OpInfo] = {
    Op.load_store: OpInfo("a", 1, ("OpCooperativeVectorLoadNV/StoreNV",) * 2, ELEMENT_TYPES, True),
    Op.convert: OpInfo("coopvecNV<{R}, {N}>(a)", 1, ("a conversion (see instruction())",) * 2, ELEMENT_TYPES),
    Op.fneg: _f("-a", 1, "OpFNegate", True),
    Op.fadd: _f("a + b", 2, "OpFAdd", True),
    Op.fsub: _f("a - b", 2, "OpFSub", True),
    Op.fmul: _f("a * b", 2, "OpFMul", True),
    Op.fdiv: _f("a / b", 2, "OpFDiv", True),
    Op.vts: _f("a * s", 1, "OpVectorTimesScalar", True),
    Op.fma: _f("fma(a, b, c)", 3, "GLSL.std.450 Fma"),
    Op.fmin: _f("min(a, b)", 2, "GLSL.std.450 FMin", True),
    Op.fmax: _f("max(a, b)", 2, "GLSL.std.450 FMax", True),
    Op.fclamp: _f("clamp(a, b, c)", 3, "GLSL.std.450 FClamp", True),
    Op.nmin: _f("nminNV(a, b)", 2, "GLSL.std.450 NMin", True),
    Op.nmax: _f("nmaxNV(a, b)", 2, "GLSL.std.450 NMax", True),
    Op.nclamp: _f("nclampNV(a, b, c)", 3, "GLSL.std.450 NClamp", True),
    Op.step: _f("step(a, b)", 2, "GLSL.std.450 Step", True),
    Op.exp: _f("exp(a)", 1, "GLSL.std.450 Exp"),
    Op.log: _f("log(a)", 1, "GLSL.std.450 Log"),
    Op.tanh: _f("tanh(a)", 1, "GLSL.std.450 Tanh"),
    Op.atan: _f("atan(a)", 1, "GLSL.std.450 Atan"),
    Op.ineg: _i("-a", 1, "OpSNegate"),
    Op.iadd: _i("a + b", 2, "OpIAdd"),
    Op.isub: _i("a - b", 2, "OpISub"),
    Op.imul: _i("a * b", 2, "OpIMul"),
    Op.idiv: _i("a / b", 2, "OpSDiv", "OpUDiv"),
    Op.imin: _i("min(a, b)", 2, "GLSL.std.450 SMin", "GLSL.std.450 UMin"),
    Op.imax: _i("max(a, b)", 2, "GLSL.std.450 SMax", "GLSL.std.450 UMax"),
    Op.iclamp: _i("clamp(a, b, c)", 3, "GLSL.std.450 SClamp", "GLSL.std.450 UClamp"),
    Op.band: _i("a & b", 2, "OpBitwiseAnd"),
    Op.bor: _i("a | b", 2, "OpBitwiseOr"),
    Op.bxor: _i("a ^ b", 2, "OpBitwiseXor"),
    Op.bnot: _i("~a", 1, "OpNot"),
    Op.shl: _i("a << b", 2, "OpShiftLeftLogical"),
    Op.shr: _i("a >> b", 2, "OpShiftRightArithmetic", "OpShiftRightLogical"),
}

#: GLSL.std.450 numbers of the instructions GLSL cannot spell (declared with spirv_instruction).
EXT_INST = {Op.nmin: ("nminNV", 79), Op.nmax: ("nmaxNV", 80), Op.nclamp: ("nclampNV", 81)}

#: Groups the unpinned strategy draws from first, so every kind of operation is drawn as often.
GROUPS: dict[str, tuple[Op, ...]] = {
    "memory": (Op.load_store,),
    "convert": (Op.convert,),
    "float arithmetic": (Op.fneg, Op.fadd, Op.fsub, Op.fmul, Op.fdiv, Op.vts, Op.fma),
    "float min/max": (Op.fmin, Op.fmax, Op.fclamp, Op.nmin, Op.nmax, Op.nclamp, Op.step),
    "transcendental": (Op.exp, Op.log, Op.tanh, Op.atan),
    "integer arithmetic": (Op.ineg, Op.iadd, Op.isub, Op.imul, Op.idiv, Op.imin, Op.imax, Op.iclamp),
    "bits": (Op.band, Op.bor, Op.bxor, Op.bnot, Op.shl, Op.shr),
}


def instruction(op: Op, t: CoopVecType, r: CoopVecType) -> str:
    """The SPIR-V instruction ``op`` is on vectors of ``t`` with result type ``r`` (unsigned
    integers pick the U form; a conversion the instruction glslang emits for the constructor:
    integer -> integer converts by the source's signedness, then bitcasts if the result's differs)."""
    if op is Op.convert:
        if t.is_float:
            return "OpFConvert" if r.is_float else f"OpConvertFTo{'S' if r.is_signed else 'U'}"
        if r.is_float:
            return f"OpConvert{'S' if t.is_signed else 'U'}ToF"
        cast = "" if t.bits == r.bits else f"Op{'S' if t.is_signed else 'U'}Convert"
        bitcast = "OpBitcast" if t.is_signed != r.is_signed else ""
        return " + ".join(x for x in (cast, bitcast) if x)
    signed, unsigned = OPS[op].instruction
    return unsigned if t in INT_TYPES and not t.is_signed else signed


def conversions() -> list[tuple[CoopVecType, CoopVecType]]:
    """Every (source, result) pair of distinct component types."""
    return [(s, d) for s in ELEMENT_TYPES for d in ELEMENT_TYPES if s is not d]
