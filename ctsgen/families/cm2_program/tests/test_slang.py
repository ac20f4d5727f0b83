"""cm2-program along the slang route: every stratum's drawn programs compile through Slang and pass
spirv-val with the same signature as the GLSL, on the H100's profile and on lavapipe's; each module holds
the GLSL module's cooperative-matrix and tensor instructions one for one (every node kind, the debug
re-run's stores too); a small slang pack passes on the reference backend."""

from __future__ import annotations

from collections import Counter

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.spirv_patch import instructions, to_words
from ctsgen.toolchain.variants import compile_variant
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_TYPE_COOPERATIVE_MATRIX, OP_CONVERT_NV = 4456, 5293
OP_TYPE_TENSOR_LAYOUT, OP_TYPE_TENSOR_VIEW = 5370, 5371
#: the KHR matrix instructions (load, store, MulAdd, length) and SPV_NV_cooperative_matrix2's and
#: SPV_NV_tensor_addressing's (5360-5399), less the type declarations, which a module may share or not
COUNTED = ({*range(4457, 4461), *range(5360, 5400), OP_CONVERT_NV}
           - {OP_TYPE_TENSOR_LAYOUT, OP_TYPE_TENSOR_VIEW})
KINDS = {"load", "loadview", "loaddecode", "loaddecodeview", "loadkhr", "store", "storeview", "storekhr",
         "const", "generate", "perelement", "muladd", "convert", "transpose", "reduce", "add", "sub", "mul",
         "scale"}


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("cm2-program", OP_TYPE_COOPERATIVE_MATRIX, per_stratum=2) >= 16


def _counts(spirv: bytes) -> Counter[int]:
    return Counter(op for _, op, _ in instructions(to_words(spirv)) if op in COUNTED)


def test_the_slang_module_runs_the_glsl_modules_instructions_for_every_node_kind() -> None:
    """No node dropped, duplicated or turned into another instruction: the Slang module's count of each
    instruction is glslang's, over programs that hold every kind of node; a debug re-run's too."""
    fam = get_family("cm2-program")
    seen: set[str] = set()
    drawn = draw_examples(fam.variants(StrategyOptions(profile=None)), 150, 11)
    for v in drawn:
        kinds = {n.op.value for n in v.program.nodes}
        if kinds <= seen:
            continue
        seen |= kinds
        along = compile_variant(v, fam.name, route="slang", validator=fam.validator).spirv
        assert _counts(along) == _counts(compile_variant(v, fam.name, validator=fam.validator).spirv), v.id
    assert seen == KINDS
    debug = type(drawn[0])(drawn[0].program, debug=True)
    along = compile_variant(debug, fam.name, route="slang", validator=fam.validator).spirv
    assert _counts(along) == _counts(compile_variant(debug, fam.name, validator=fam.validator).spirv)


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("cm2-program", tmp_path)
