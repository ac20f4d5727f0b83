"""cm2-reduce along the slang route: every stratum's drawn variants (each mode and CombineFunc) compile
through Slang to OpCooperativeMatrixReduceNV and pass spirv-val with the same signature as the GLSL,
and a small slang pack passes on the reference backend."""

from __future__ import annotations

from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_REDUCE = 5366  # OpCooperativeMatrixReduceNV


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("cm2-reduce", OP_REDUCE) >= 40


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("cm2-reduce", tmp_path)
