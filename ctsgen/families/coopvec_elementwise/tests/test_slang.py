"""coopvec-elementwise along the slang route: every stratum's drawn variants compile through Slang and
pass spirv-val with the same signature as the GLSL; an instruction Slang's CoopVec lacks is the
instruction itself; an ieee variant declares its execution modes; an unsigned-to-signed conversion of
another width goes through the result width's unsigned type (Slang aborts on it otherwise); a small
slang pack passes on the reference backend."""

from __future__ import annotations

import pytest

from ctsgen.families.coopvec_elementwise.case import ElementwiseVariant
from ctsgen.model.types import CoopVecType as T
from ctsgen.ops.coopvec_elementwise_ops import Op
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import instructions, opcodes, to_words
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_COOPERATIVE_VECTOR_STORE = 5303
OP_EXECUTION_MODE, OP_EXT_INST = 16, 12
SIGNED_ZERO_INF_NAN_PRESERVE, ROUNDING_MODE_RTE = 4461, 4462
NCLAMP = 81  # GLSL.std.450
OP_NOT, OP_SHIFT_RIGHT_LOGICAL, OP_SHIFT_RIGHT_ARITHMETIC, OP_UCONVERT, OP_SCONVERT, OP_BITCAST = \
    200, 194, 195, 113, 114, 124


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("coopvec-elementwise", OP_COOPERATIVE_VECTOR_STORE, per_stratum=1) >= 30


def module(v: ElementwiseVariant) -> list[tuple[int, list[int]]]:
    return [(op, operands) for _, op, operands in instructions(to_words(compile_slang(v.slang(), f"{v.id}.slang")))]


def test_an_ieee_variant_declares_both_execution_modes_for_its_width() -> None:
    got = module(ElementwiseVariant(Op.nclamp, T.float16, T.float16, 5, True))
    modes = {tuple(operands[1:]) for op, operands in got if op == OP_EXECUTION_MODE}
    assert {(SIGNED_ZERO_INF_NAN_PRESERVE, 16), (ROUNDING_MODE_RTE, 16)} <= modes
    assert any(op == OP_EXT_INST and operands[3] == NCLAMP for op, operands in got)
    plain = module(ElementwiseVariant(Op.nclamp, T.float32, T.float32, 5))
    assert not {o[1] for op, o in plain if op == OP_EXECUTION_MODE} & {SIGNED_ZERO_INF_NAN_PRESERVE, ROUNDING_MODE_RTE}


@pytest.mark.parametrize(("op", "t", "want"), [(Op.bnot, T.uint8, OP_NOT), (Op.shr, T.uint32, OP_SHIFT_RIGHT_LOGICAL),
                                               (Op.shr, T.sint8, OP_SHIFT_RIGHT_ARITHMETIC)])
def test_an_instruction_coopvec_lacks_is_written_as_itself(op: Op, t: T, want: int) -> None:
    assert want in opcodes(compile_slang(ElementwiseVariant(op, t, t, 3).slang(), "v.slang"))


@pytest.mark.parametrize(("t", "r"), [(T.uint32, T.sint8), (T.uint8, T.sint32)])
def test_an_unsigned_to_signed_conversion_of_another_width_is_glslangs_two_instructions(t: T, r: T) -> None:
    got = opcodes(compile_slang(ElementwiseVariant(Op.convert, t, r, 7).slang(), "v.slang"))
    assert {OP_UCONVERT, OP_BITCAST} <= got and OP_SCONVERT not in got


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("coopvec-elementwise", tmp_path)
