"""ctsgen.toolchain.spirv_patch: DecodeVectorFunc added to a glslang-compiled decode load.

The validator inside the glslang library knows SPV_NV_cooperative_matrix_decode_vector:
it accepts the patched module and rejects DecodeVectorFunc
without DecodeFunc ("DecodeFunc must also be present", 3.49.8)."""

from __future__ import annotations

import pytest

from ctsgen.ops.decode_case import DecodeVariant
from ctsgen.families.decode_vector.case import VECTOR_FUNCTION, DecodeVectorVariant
from ctsgen.ops.tensor_layout_case import LayoutVariant
from ctsgen.ops.tensor_layout import Operation
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.toolchain import SpirvValidationError, compile_glsl, validate_spirv
from ctsgen.toolchain.spirv_patch import (
    CAPABILITY_DECODE_VECTOR, EXTENSION_DECODE_VECTOR, OP_CAPABILITY, OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV,
    OP_EXTENSION, TA_DECODE_FUNC, TA_DECODE_VECTOR_FUNC, SpirvPatchError, add_decode_vector, decode_string,
    encode_instruction, function_id, instructions, tensor_addressing_position, to_bytes, to_words,
)

MATRIX = MatrixType(ComponentType.float32, Scope.Subgroup, 16, 16, MatrixUse.Accumulator)


def variant(V: int = 4) -> DecodeVectorVariant:
    return DecodeVectorVariant(2, ClampMode.ClampToEdge, MATRIX, "probe3", None, V)


def loads(words: list[int]) -> list[list[int]]:
    return [ops for _, op, ops in instructions(words) if op == OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV]


@pytest.mark.parametrize("V", [2, 4, 8])
def test_patched_module_names_both_functions_and_validates(V: int) -> None:
    glslang_module = compile_glsl(variant(V).glsl())
    patched = add_decode_vector(glslang_module, VECTOR_FUNCTION)
    words = to_words(patched)
    ops = [(op, operands) for _, op, operands in instructions(words)]
    assert (OP_CAPABILITY, [CAPABILITY_DECODE_VECTOR]) in ops
    assert any(op == OP_EXTENSION and decode_string(o) == EXTENSION_DECODE_VECTOR for op, o in ops)
    [load] = loads(words)
    at = tensor_addressing_position(load)
    assert load[at] == TA_DECODE_FUNC | TA_DECODE_VECTOR_FUNC
    [before] = loads(to_words(glslang_module))
    assert load[at + 1] == before[at + 1]  # DecodeFunc id kept, DecodeVectorFunc id right after it
    assert load[at + 2] == function_id(words, VECTOR_FUNCTION)
    assert len(load) == len(before) + 1
    validate_spirv(patched, decode_vector=True)
    if V <= 4:  # (V = 8 needs LongVectorEXT, which spirv-val 2025.5 does not know either)
        validate_spirv(glslang_module)  # spirv-val 2025.5 accepts glslang's module ...
    with pytest.raises(SpirvValidationError):
        validate_spirv(patched)  # ... but not capability 5447: hence the variant's "glslang-decode-vector" validator


def test_decode_vector_without_decode_func_is_rejected() -> None:
    """Mask 0x4 alone (DecodeFunc dropped) must fail validation: the validator checks the rule."""
    words = to_words(add_decode_vector(compile_glsl(variant().glsl()), VECTOR_FUNCTION))
    out = words[:5]
    for _, op, ops in instructions(words):
        if op == OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV:
            at = tensor_addressing_position(ops)
            ops = [*ops[:at], TA_DECODE_VECTOR_FUNC, *ops[at + 2:]]  # drop DecodeFunc and its id
        out.extend(encode_instruction(op, ops))
    with pytest.raises(SpirvValidationError, match="DecodeFunc|DecodeVectorFunc"):
        validate_spirv(to_bytes(out), decode_vector=True)


def test_missing_function_name_is_a_clear_error() -> None:
    module = compile_glsl(variant().glsl())
    with pytest.raises(SpirvPatchError, match="exactly one function named 'noSuchFunc'.*decodeVectorFunc"):
        add_decode_vector(module, "noSuchFunc")


def test_module_without_decode_load_is_refused() -> None:
    """A decode family shader has no vector function to point at; a tensor-layout load has
    no DecodeFunc, so it cannot take DecodeVectorFunc."""
    decode = compile_glsl(DecodeVariant(2, ClampMode.Undefined, MATRIX, "probe1").glsl())
    with pytest.raises(SpirvPatchError, match="exactly one function"):
        add_decode_vector(decode, VECTOR_FUNCTION)
    plain = compile_glsl(LayoutVariant(Operation.load, 2, ClampMode.Undefined, MATRIX).glsl())
    with pytest.raises(SpirvPatchError, match="no OpCooperativeMatrixLoadTensorNV with a DecodeFunc"):
        add_decode_vector(plain, "main")


def test_patching_twice_is_refused() -> None:
    once = add_decode_vector(compile_glsl(variant().glsl()), VECTOR_FUNCTION)
    with pytest.raises(SpirvPatchError, match="already has a DecodeVectorFunc"):
        add_decode_vector(once, VECTOR_FUNCTION)
