"""coopvec along the slang route: every stratum's drawn variants (each instruction, type combination and
layout) compile through Slang and pass spirv-val with the same signature as the GLSL; a RowMajor or
ColumnMajor matrix's stride comes from its run-time word; a small slang pack passes on the reference
backend."""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import instructions, to_words
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_COOPERATIVE_VECTOR_LOAD = 5302
OP_MATRIX_MUL, OP_MATRIX_MUL_ADD, OP_CONSTANT = 5289, 5292, 43


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("coopvec", OP_COOPERATIVE_VECTOR_LOAD, per_stratum=1) >= 20


def test_an_explicit_layouts_stride_is_the_run_time_word_and_an_optimal_ones_is_ignored() -> None:
    """Slang's coopVecMatMul takes MatrixStride as a compile-time constant: a RowMajor or ColumnMajor
    variant writes the instruction itself, with the stride word, where an optimal layout (whose stride
    the instruction ignores) goes through Slang's function with 0."""
    fam = get_family("coopvec")
    seen = set()
    for stratum in fam.strata():
        for v in draw_examples(fam.variants(StrategyOptions(profile=None), **stratum), 1, 3):
            if v.op.value not in ("matmul", "matmuladd"):
                continue
            words = to_words(compile_slang(v.slang(), f"{v.id}.slang"))
            constants = {operands[1] for _, op, operands in instructions(words) if op == OP_CONSTANT}
            (mul,) = [operands for _, op, operands in instructions(words) if op in (OP_MATRIX_MUL, OP_MATRIX_MUL_ADD)]
            stride = mul[11 if v.op.value == "matmul" else 14]  # after the result type and id
            assert (stride in constants) == v.optimal, v.id
            seen.add(v.optimal)
    assert seen == {True, False}


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("coopvec", tmp_path)
