"""coopmat-khr along the slang route: every stratum's drawn variants (each operation, pointee and layout)
compile through Slang and pass spirv-val with the same signature as the GLSL; no load or store claims an
alignment (a drawn offset need not be 16-byte aligned, which Slang's CoopMat.Load/Store would claim);
a small slang pack passes on the reference backend."""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import ProfileLacksError
from ctsgen.families import get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import instructions, to_words
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_LOAD_KHR, OP_STORE_KHR = 4457, 4458


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("coopmat-khr", OP_STORE_KHR, per_stratum=1) >= 60


def test_no_load_or_store_claims_an_alignment_and_a_vector_pointee_is_read_as_itself() -> None:
    fam = get_family("coopmat-khr")
    vectors = 0
    drawn = draw_examples(fam.variants(StrategyOptions(profile=None)), 20, 11)  # vector pointees among them
    for stratum in fam.strata():
        try:
            drawn += draw_examples(fam.variants(StrategyOptions(profile=None), **stratum), 1, 11)
        except ProfileLacksError:  # a stratum the H100 profile has no matrix type for
            continue
    for v in drawn:
        source = v.slang()
        vectors += "RWStructuredBuffer<vector<" in source
        got = [(op, o) for _, op, o in instructions(to_words(compile_slang(source, f"{v.id}.slang")))]
        assert all(len(o) == 5 for op, o in got if op == OP_LOAD_KHR), v.id  # no memory operand
        assert all(len(o) == 4 for op, o in got if op == OP_STORE_KHR), v.id
    assert vectors >= 1


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("coopmat-khr", tmp_path)
