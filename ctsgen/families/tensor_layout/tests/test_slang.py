"""tensor-layout along the slang route: every stratum's drawn variants (each operation, dimension count and
clamp mode) compile through Slang and pass spirv-val with the same signature as the GLSL; a 5-dimension
layout, which this Slang build gives no TensorLayout method, is updated by the instructions themselves;
a small slang pack passes on the reference backend."""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import opcodes
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_CREATE_TENSOR_LAYOUT, OP_SET_BLOCK_SIZE = 5372, 5384


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("tensor-layout", OP_CREATE_TENSOR_LAYOUT, per_stratum=1) >= 50


def test_every_dimension_count_sets_each_piece_of_the_layout() -> None:
    fam = get_family("tensor-layout")
    for dim in range(1, 6):
        v = draw_examples(fam.variants(StrategyOptions(profile=None), Dim=dim), 1, 3)[0]
        source = v.slang()
        assert ("spirv_asm" in source) == (dim == 5), dim
        assert OP_SET_BLOCK_SIZE in opcodes(compile_slang(source, f"{v.id}.slang")), dim


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("tensor-layout", tmp_path)
