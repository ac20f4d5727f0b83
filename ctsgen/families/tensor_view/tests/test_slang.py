"""tensor-view along the slang route: every stratum's drawn variants (each operation, layout and view
dimension count, permutation and clamp mode) compile through Slang and pass spirv-val with the same
signature as the GLSL; a load keeps the GLSL's poisoned matrix as its Object (a clipped element keeps
it); a small slang pack passes on the reference backend."""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.ops.tensor_layout import Operation
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import instructions, to_words
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_CREATE_TENSOR_VIEW = 5377
OP_LOAD_TENSOR, OP_COMPOSITE_CONSTRUCT = 5367, 80


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("tensor-view", OP_CREATE_TENSOR_VIEW, per_stratum=1) >= 100


def test_a_load_keeps_the_poisoned_matrix_as_its_object() -> None:
    fam = get_family("tensor-view")
    for dim in (1, 5):
        v = draw_examples(fam.variants(StrategyOptions(profile=None), operation=Operation.load, Dim=dim), 1, 3)[0]
        got = [(op, o) for _, op, o in instructions(to_words(compile_slang(v.slang(), f"{v.id}.slang")))]
        constructed = {o[1] for op, o in got if op == OP_COMPOSITE_CONSTRUCT}
        (load,) = [o for op, o in got if op == OP_LOAD_TENSOR]
        assert load[3] in constructed, v.id  # result type, id, pointer, Object


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("tensor-view", tmp_path)
