"""cm2-gemm along the slang route: every stratum's drawn variants (both routes to memory) compile through
Slang and pass spirv-val with the same signature as the GLSL; the tensor route reaches memory through
OpCooperativeMatrixLoadTensorNV, the khr route through OpCooperativeMatrixLoadKHR with no Aligned operand
(a drawn offset or stride need not be 16-byte aligned); a small slang pack passes on the reference."""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.families.cm2_gemm.case import Route
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import instructions, to_words
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_MUL_ADD = 4459  # OpCooperativeMatrixMulAddKHR
OP_LOAD_KHR, OP_STORE_KHR, OP_LOAD_TENSOR = 4457, 4458, 5367


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("cm2-gemm", OP_MUL_ADD, per_stratum=3) >= 12


def test_each_route_to_memory_keeps_its_instructions_and_the_khr_loads_claim_no_alignment() -> None:
    fam = get_family("cm2-gemm")
    routes = set()
    for stratum in fam.strata():
        for v in draw_examples(fam.variants(StrategyOptions(profile=None), **stratum), 2, 5):
            ops = [(op, operands) for _, op, operands in instructions(to_words(compile_slang(v.slang(), "v.slang")))]
            codes = {op for op, _ in ops}
            if v.route is Route.khr:
                assert {OP_LOAD_KHR, OP_STORE_KHR} <= codes and OP_LOAD_TENSOR not in codes, v.id
                loads = [o for op, o in ops if op == OP_LOAD_KHR]
                assert all(len(o) == 5 for o in loads), v.id  # type, id, pointer, layout, stride: no memory operand
            else:
                assert OP_LOAD_TENSOR in codes and OP_LOAD_KHR not in codes, v.id
            routes.add(v.route)
    assert routes == set(Route)


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("cm2-gemm", tmp_path)
