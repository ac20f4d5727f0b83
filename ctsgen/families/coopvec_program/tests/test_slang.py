"""coopvec-program along the slang route: every stratum's drawn programs (seeds, 1-4 layers, per-invocation
branches and loops, partial subgroups) compile through Slang and pass spirv-val with the same signature as
the GLSL; each holds the GLSL module's cooperative-vector instructions and loops, one for one, every
MatMulAdd's MatrixStride being its run-time word; a small slang pack passes on the reference backend."""

from __future__ import annotations

from collections import Counter

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.families.coopvec_program.program import Ctl
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.spirv_patch import instructions, to_words
from ctsgen.toolchain.variants import compile_variant
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_LOOP_MERGE, OP_CONSTANT = 246, 43
OP_OUTER_PRODUCT, OP_REDUCE_SUM, OP_MATRIX_MUL_ADD = 5290, 5291, 5292
OP_VECTOR_LOAD, OP_VECTOR_STORE = 5302, 5303
COUNTED = (OP_LOOP_MERGE, OP_OUTER_PRODUCT, OP_REDUCE_SUM, OP_MATRIX_MUL_ADD, OP_VECTOR_LOAD, OP_VECTOR_STORE)


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("coopvec-program", OP_MATRIX_MUL_ADD, per_stratum=2) >= 16


def _counts(words: list[int]) -> Counter[int]:
    return Counter(op for _, op, _ in instructions(words) if op in COUNTED)


def test_the_slang_module_runs_the_glsl_modules_instructions_with_run_time_strides() -> None:
    """Each program's Slang module holds as many loads, stores, MatMulAdds, training instructions and
    loops as glslang's (a node neither dropped nor duplicated, a loop not unrolled), and no MatMulAdd's
    MatrixStride is a constant (the word is run-time, which Slang's own function cannot take)."""
    fam = get_family("coopvec-program")
    seen: set[str] = set()
    for stratum in fam.strata():
        for v in draw_examples(fam.variants(StrategyOptions(profile=None), **stratum), 3, 2):
            words = to_words(compile_variant(v, fam.name, route="slang", validator=fam.validator).spirv)
            glsl = to_words(compile_variant(v, fam.name, validator=fam.validator).spirv)
            assert _counts(words) == _counts(glsl), v.id
            constants = {operands[1] for _, op, operands in instructions(words) if op == OP_CONSTANT}
            strides = [operands[14] for _, op, operands in instructions(words) if op == OP_MATRIX_MUL_ADD]
            assert strides and not constants.intersection(strides), v.id
            p = v.program
            seen.update({n.ctl.value for n in p.nodes if n.ctl is not None})
            seen.update(name for name, held in (("training", p.training), ("partial", p.partial)) if held)
    assert seen == {"training", "partial", Ctl.branch.value, Ctl.loop.value}


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("coopvec-program", tmp_path)
