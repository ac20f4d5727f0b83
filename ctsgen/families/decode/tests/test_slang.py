"""decode along the slang route: every stratum's drawn variants (each decoder, dimension count and clamp
mode) compile through Slang and pass spirv-val with the same signature as the GLSL; each tensor load names
a decode function whose block pointer steps by the format's block bytes (the probe's words), as the GLSL's
buffer_reference block does; a small slang pack passes on the reference backend."""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.ops.decode import FORMATS
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV, instructions, to_words
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_DECORATE, OP_TYPE_FUNCTION, OP_FUNCTION, OP_TYPE_POINTER, OP_TYPE_ARRAY, OP_CONSTANT = 71, 33, 54, 32, 28, 43
ARRAY_STRIDE, PHYSICAL_STORAGE_BUFFER = 6, 5349


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("decode", OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV, per_stratum=1) >= 40


def decode_function_shape(words: list[int]) -> tuple[int, int]:
    """(the ArrayStride of the decode function's block pointer, the length of its coordinate arrays) of
    the module's one tensor load, its DecodeFunc operand being the last."""
    ins = [(op, operands) for _, op, operands in instructions(words)]
    (load,) = [operands for op, operands in ins if op == OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV]
    (fn_type,) = [operands[3] for op, operands in ins if op == OP_FUNCTION and operands[1] == load[-1]]
    (params,) = [operands[2:] for op, operands in ins if op == OP_TYPE_FUNCTION and operands[0] == fn_type]
    (storage,) = [operands[1] for op, operands in ins if op == OP_TYPE_POINTER and operands[0] == params[0]]
    assert storage == PHYSICAL_STORAGE_BUFFER and params[1] == params[2]
    (stride,) = [operands[2] for op, operands in ins
                 if op == OP_DECORATE and operands[:2] == [params[0], ARRAY_STRIDE]]
    (length_id,) = [operands[2] for op, operands in ins if op == OP_TYPE_ARRAY and operands[0] == params[1]]
    (length,) = [operands[2] for op, operands in ins if op == OP_CONSTANT and operands[1] == length_id]
    return stride, length


def test_the_decode_function_steps_by_the_block_and_takes_dim_coordinates() -> None:
    fam = get_family("decode")
    seen = set()
    for stratum in fam.strata():
        v = draw_examples(fam.variants(StrategyOptions(profile=None), **stratum), 1, 2)[0]
        block = FORMATS[v.decoder].block_bytes if v.format else 4 * v.probe_words
        assert decode_function_shape(to_words(compile_slang(v.slang(), f"{v.id}.slang"))) == (block, v.Dim), v.id
        seen.add(v.decoder)
    assert seen == {"probe1", "probe3", *FORMATS}


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("decode", tmp_path)
