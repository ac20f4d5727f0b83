"""Coverage tables of coopvec-elementwise packs (SPV_NV_cooperative_vector 3.42.8-3.42.14).

* operation (the SPIR-V / GLSL.std.450 instruction; signed and unsigned
  twins share a row) x component type: a float instruction on integer
  vectors, or an integer or bit instruction on float vectors, is ruled out
  (ops.OPS[...].types);
* conversion source x result type (the instruction is ops.instruction());
* component count N in ranges up to maxCooperativeVectorComponents (512 on
  the H100) x operation group (ops.GROUPS);
* float vectors: operation x component type, with the default float controls
  and with SignedZeroInfNanPreserve + RoundingModeRTE (``ieee``): ruled out
  for Fma, Exp, Log, Tanh and Atan, whose Vulkan precision bounds give special
  results no meaning (docs/spec-decisions.md coopvec-elementwise-rules);
* loadOffset x storeOffset (bytes, multiples of 16: VUID-RuntimeSpirv-
  OpCooperativeVectorLoadNV-10099; the strategy draws 0..112);
* data (random, or the op's edge tuples in the first components) x operation group.

Component types: the six GLSL scalars of GL_NV_cooperative_vector, all of
which the embedded H100 profile reports.
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.families.coopvec_elementwise.ops import (
    ELEMENT_TYPES,
    FLOAT_TYPES,
    GROUPS,
    OPS,
    Op,
)
from ctsgen.families.coopvec_elementwise.strategy import MAX_OFFSET_UNITS

TYPES = [t.name for t in ELEMENT_TYPES]
FLOATS = [t.name for t in FLOAT_TYPES]
CONVERSIONS = "conversions (by source type)"
#: Size ranges of N: one component, up to a 16-element granule, up to 128, the large sizes.
RANGES = ((1, 1), (2, 16), (17, 128), (129, 512))
OFFSETS = [16 * k for k in range(MAX_OFFSET_UNITS + 1)]
DATA = ("random", "edges")
GROUP_OF = {op: group for group, ops in GROUPS.items() for op in ops}

FLOAT_ONLY = ("float instructions (OpF*, OpVectorTimesScalar, GLSL.std.450 F/N Min/Max/Clamp, Step, Exp, Log, "
              "Tanh, Atan, Fma) take float components")
INTEGER_ONLY = ("integer arithmetic (OpSNegate, OpIAdd/ISub/IMul, OpSDiv/UDiv, GLSL.std.450 S/U Min/Max/Clamp) "
                "takes integer components")
BITS_ONLY = "bit instructions (3.42.14: shifts, OpBitwiseAnd/Or/Xor, OpNot) take integer components"
SAME_TYPE = "a conversion changes the component type (same type: load/store)"
#: Why a float op's special results have no meaning to test (docs/spec-decisions.md coopvec-elementwise-rules).
#: Conversions are not here: under SignedZeroInfNanPreserve an OpFConvert between float widths may not assume
#: its operand is not NaN or an infinity, so their ieee cells are a gap of the family (OPS[Op.convert].ieee).
NO_IEEE = {
    Op.fma: "Fma's bound is inherited from OpFMul then OpFAdd: with NaN or an infinity as a permitted "
            "intermediate it allows any result, so there is no ieee variant",
    **{op: "Exp, Log, Tanh, Atan: their ULP bounds let +-Inf or +-max stand for a large result, "
           "so there is no ieee variant" for op in GROUPS["transcendental"]},
}


def op_label(op: Op) -> str:
    """The row of ``op``: its instruction, both twins for an integer op whose unsigned form differs."""
    if op is Op.convert:
        return CONVERSIONS
    signed, unsigned = OPS[op].instruction
    if signed == unsigned:
        return signed
    prefix = "GLSL.std.450 "
    return f"{signed} / {unsigned.removeprefix(prefix)}" if signed.startswith(prefix) else f"{signed} / {unsigned}"


def size_range(n: int) -> str:
    """The range of RANGES holding n ('129-512'; a count past them gets its own label)."""
    for lo, hi in RANGES:
        if lo <= n <= hi:
            return str(lo) if lo == hi else f"{lo}-{hi}"
    return f">{RANGES[-1][1]}"


def _type_rule(op: Op) -> str:
    if op in GROUPS["bits"]:
        return BITS_ONLY
    return FLOAT_ONLY if OPS[op].types == FLOAT_TYPES else INTEGER_ONLY


def _float_controls(t: str, ieee: bool) -> str:
    return f"{t} ieee" if ieee else t


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of coopvec-elementwise cases."""
    v = [p["variant"] for p in cases]
    conv = [x for x in v if x["op"] == Op.convert.value]
    floats = [x for x in v if x["componentType"] in FLOATS]
    float_ops = [op for op, info in OPS.items() if set(FLOAT_TYPES) & set(info.types)]
    controls = [_float_controls(t, ieee) for t in FLOATS for ieee in (False, True)]
    return [
        grid("operation x component type", "instruction", "componentType", [op_label(op) for op in OPS], TYPES,
             ((op_label(Op(x["op"])), x["componentType"]) for x in v),
             excluded={(op_label(op), t.name): _type_rule(op) for op, info in OPS.items()
                       for t in ELEMENT_TYPES if t not in info.types}),
        grid(f"conversion source x result type ({len(conv)} cases)", "source", "result", TYPES, TYPES,
             ((x["componentType"], x["resultType"]) for x in conv), partition=False,
             excluded={(t, t): SAME_TYPE for t in TYPES}),
        grid("N (component count ranges) x operation group", "N", "group", [size_range(lo) for lo, _ in RANGES],
             list(GROUPS), ((size_range(x["N"]), GROUP_OF[Op(x["op"])]) for x in v)),
        grid(f"float vectors: operation x component type, default float controls or ieee "
             f"(SignedZeroInfNanPreserve + RoundingModeRTE) ({len(floats)} cases)", "instruction", "componentType",
             [op_label(op) for op in float_ops], controls,
             ((op_label(Op(x["op"])), _float_controls(x["componentType"], x["ieee"])) for x in floats),
             partition=False,
             excluded={(op_label(op), _float_controls(t, True)): NO_IEEE[op] for op in NO_IEEE for t in FLOATS}),
        grid("loadOffset x storeOffset (bytes)", "loadOffset", "storeOffset", OFFSETS, OFFSETS,
             ((p["loadOffset"], p["storeOffset"]) for p in cases)),
        grid("data x operation group", "data", "group", DATA, list(GROUPS),
             ((DATA[p["edges"]], GROUP_OF[Op(p["variant"]["op"])]) for p in cases)),
    ]
