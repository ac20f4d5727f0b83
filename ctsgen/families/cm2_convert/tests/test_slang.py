"""cm2-convert along the slang route: every stratum's drawn variants compile through Slang and pass
spirv-val with the same signature as the GLSL, an unsigned-to-signed conversion of another width
goes through the result width's unsigned type (Slang aborts on it otherwise: docs/repros/
slang-unsigned-to-signed), and a small slang pack passes on the reference backend."""

from __future__ import annotations

import pytest

from ctsgen.families.cm2_convert.case import ConvertVariant
from ctsgen.model.types import ComponentType as C, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2_convert import Kind
from ctsgen.toolchain import compile_glsl
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import opcodes
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_COOPERATIVE_MATRIX_STORE = 4458
OP_UCONVERT, OP_SCONVERT, OP_BITCAST = 113, 114, 124


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("cm2-convert", OP_COOPERATIVE_MATRIX_STORE, per_stratum=1) >= 30


@pytest.mark.parametrize(("src", "dst"), [(C.uint32, C.sint8), (C.uint8, C.sint32)])
def test_an_unsigned_to_signed_conversion_of_another_width_is_glslangs_two_instructions(src: C, dst: C) -> None:
    v = ConvertVariant(Kind.convert, MatrixType(src, Scope.Subgroup, 16, 16, MatrixUse.Accumulator),
                       MatrixType(dst, Scope.Subgroup, 16, 16, MatrixUse.A))
    along = opcodes(compile_slang(v.slang(), "v.slang"))
    plain = opcodes(compile_glsl(v.glsl(), "v.comp"))
    assert {OP_UCONVERT, OP_BITCAST} <= along and OP_SCONVERT not in along
    assert {OP_UCONVERT, OP_BITCAST} <= plain


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("cm2-convert", tmp_path)
