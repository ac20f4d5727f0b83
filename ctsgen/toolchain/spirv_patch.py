"""A small SPIR-V binary rewriter: add DecodeVectorFunc to glslang-compiled decode loads.

No GLSL compiler here knows GL_NV_cooperative_matrix_decode_vector, so a
decode-vector shader is compiled from GLSL that defines the vector decode
function (kept alive by a call under a run-time condition that never
holds: glslang drops functions nothing calls) and then rewritten here, as
SPV_NV_cooperative_matrix_decode_vector describes:

* ``OpCapability CooperativeMatrixDecodeVectorNV`` (5447), after the last
  capability ("3.31 Capabilities");
* ``OpExtension "SPV_NV_cooperative_matrix_decode_vector"`` ("Extension Name"),
  after the last extension;
* on every ``OpCooperativeMatrixLoadTensorNV`` (opcode 5367) whose Tensor
  Addressing Operands carry DecodeFunc (0x2): the DecodeVectorFunc bit (0x4)
  and, after the DecodeFunc id, the vector function's id ("3.49.8.1 Tensor
  Addressing Operands": extra operands follow in the order of the mask bits).

A module is a header of five words and then instructions, each led by a
word ``word_count << 16 | opcode`` (SPIR-V 1.6, "2.3 Physical Layout").
"""

from __future__ import annotations

from collections.abc import Iterator

from ctsgen.toolchain.errors import ToolchainError

MAGIC = 0x07230203
HEADER_WORDS = 5

OP_NAME = 5
OP_EXTENSION = 10
OP_CAPABILITY = 17
OP_FUNCTION = 54
OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV = 5367

#: Opcodes by instruction name, for what reads a module's instructions by name
#: (SPV_NV_tensor_addressing, "3.X Tensor Layout and View Instructions"; SPV_NV_cooperative_matrix2,
#: "3.X Cooperative Matrix Instructions" for the reduce).
OPCODES = {"OpTensorLayoutSetDimensionNV": 5373, "OpTensorLayoutSetBlockSizeNV": 5384,
           "OpCooperativeMatrixReduceNV": 5366}

CAPABILITY_DECODE_VECTOR = 5447
EXTENSION_DECODE_VECTOR = "SPV_NV_cooperative_matrix_decode_vector"

#: Tensor Addressing Operands bits (SPV_NV_cooperative_matrix2 / _decode_vector), each followed by one id.
TA_TENSOR_VIEW, TA_DECODE_FUNC, TA_DECODE_VECTOR_FUNC = 0x1, 0x2, 0x4
#: Memory Operands bits that are followed by one extra word: Aligned (literal), MakePointerAvailable,
#: MakePointerVisible (scope ids), AliasScopeINTELMask, NoAliasINTELMask (ids).
MEMORY_ACCESS_WITH_OPERAND = (0x2, 0x8, 0x10, 0x10000, 0x20000)


class SpirvPatchError(ToolchainError):
    """The module cannot be rewritten as asked; the message says why."""


def to_words(spirv: bytes) -> list[int]:
    """The module's 32-bit little-endian words (checked: whole words, SPIR-V magic)."""
    if len(spirv) % 4 or len(spirv) < 4 * HEADER_WORDS:
        raise SpirvPatchError(f"{len(spirv)} bytes are not a SPIR-V module (need whole 32-bit words and a header)")
    words = [int.from_bytes(spirv[i:i + 4], "little") for i in range(0, len(spirv), 4)]
    if words[0] != MAGIC:
        raise SpirvPatchError(f"not little-endian SPIR-V: first word 0x{words[0]:08x}, expected 0x{MAGIC:08x}")
    return words


def to_bytes(words: list[int]) -> bytes:
    return b"".join(w.to_bytes(4, "little") for w in words)


def instructions(words: list[int]) -> Iterator[tuple[int, int, list[int]]]:
    """(position, opcode, operand words) of every instruction after the header."""
    pos = HEADER_WORDS
    while pos < len(words):
        count, opcode = words[pos] >> 16, words[pos] & 0xFFFF
        if count == 0 or pos + count > len(words):
            raise SpirvPatchError(f"malformed instruction at word {pos}: word count {count}")
        yield pos, opcode, words[pos + 1:pos + count]
        pos += count


def opcodes(spirv: bytes) -> frozenset[int]:
    """The opcode of every instruction of the module."""
    return frozenset(opcode for _, opcode, _ in instructions(to_words(spirv)))


#: SPV_KHR_cooperative_matrix: OpCooperativeMatrixMulAddKHR; SPIR-V 1.6, 3.52: OpFunctionEnd, OpLine, OpName.
OP_MULADD_KHR, OP_FUNCTION_END, OP_NAME, OP_LINE = 4459, 56, 5, 8


def muladd_accumulator_reused(spirv: bytes) -> bool:
    """Whether some OpCooperativeMatrixMulAddKHR's C operand (its fifth operand word: Result Type,
    Result, A, B, C) is an operand again of a later instruction of the same function: the module reads
    the value C had after the MulAdd from the SSA id itself (Slang's modules, spirv-opt's), where
    glslang at optimization level 0 loads it from its variable again. Literal operands are words too,
    so a literal equal to C's id counts as a use (over-approximation, never a missed one)."""
    live: set[int] = set()
    for _, opcode, operands in instructions(to_words(spirv)):
        if opcode == OP_FUNCTION_END:
            live.clear()
        elif opcode in (OP_NAME, OP_LINE):
            continue
        elif live.intersection(operands):
            return True
        if opcode == OP_MULADD_KHR:
            live.add(operands[4])
    return False


def encode_instruction(opcode: int, operands: list[int]) -> list[int]:
    return [(len(operands) + 1) << 16 | opcode, *operands]


def encode_string(text: str) -> list[int]:
    """A literal string: UTF-8, NUL-terminated, padded with NULs to whole words."""
    raw = text.encode("utf-8") + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]


def decode_string(operands: list[int]) -> str:
    raw = b"".join(w.to_bytes(4, "little") for w in operands)
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def tensor_addressing_position(operands: list[int]) -> int:
    """Index (in a LoadTensorNV's operands) of the Tensor Addressing Operands mask word.

    Operands: Result Type, Result, Pointer, Object, TensorLayout, Memory Operand
    mask and its extra words, then the Tensor Addressing Operands mask."""
    memory_mask = operands[5]
    return 6 + sum(1 for bit in MEMORY_ACCESS_WITH_OPERAND if memory_mask & bit)


def function_id(words: list[int], name: str) -> int:
    """The result id of the OpFunction whose OpName is ``name`` (glslang writes a mangled
    ``name(params;`` form: the part before ``(`` is compared)."""
    functions = {ops[1] for _, op, ops in instructions(words) if op == OP_FUNCTION}
    found = [ops[0] for _, op, ops in instructions(words)
             if op == OP_NAME and ops[0] in functions and decode_string(ops[1:]).split("(", 1)[0] == name]
    if len(found) != 1:
        named = sorted(decode_string(ops[1:]) for _, op, ops in instructions(words)
                       if op == OP_NAME and ops[0] in functions)
        raise SpirvPatchError(
            f"expected exactly one function named {name!r}, found {len(found)}; the module's functions are "
            f"{named}. Define it in the GLSL and keep it alive with a call under a run-time condition "
            "(glslang drops functions that nothing calls).")
    return found[0]


def add_decode_vector(spirv: bytes, vector_function_name: str) -> bytes:
    """Make every DecodeFunc load of ``spirv`` also name ``vector_function_name`` as its
    DecodeVectorFunc, and declare the capability and extension that allows it.

    Raises :class:`SpirvPatchError` if the function is missing or ambiguous, if no load
    has a DecodeFunc, or if a load already has a DecodeVectorFunc.
    """
    words = to_words(spirv)
    vector_id = function_id(words, vector_function_name)
    out = words[:HEADER_WORDS]
    patched = 0
    last_capability = last_extension = None
    has_capability = has_extension = False
    for pos, opcode, operands in instructions(words):
        if opcode == OP_CAPABILITY:
            has_capability |= operands[0] == CAPABILITY_DECODE_VECTOR
        elif opcode == OP_EXTENSION:
            has_extension |= decode_string(operands) == EXTENSION_DECODE_VECTOR
        elif opcode == OP_COOPERATIVE_MATRIX_LOAD_TENSOR_NV:
            at = tensor_addressing_position(operands)
            mask = operands[at] if at < len(operands) else 0
            if mask & TA_DECODE_VECTOR_FUNC:
                raise SpirvPatchError(f"the load at word {pos} already has a DecodeVectorFunc; patch a module once")
            if mask & TA_DECODE_FUNC:
                decode_at = at + 1 + (1 if mask & TA_TENSOR_VIEW else 0)
                operands = [*operands[:at], mask | TA_DECODE_VECTOR_FUNC, *operands[at + 1:decode_at + 1],
                            vector_id, *operands[decode_at + 1:]]
                patched += 1
        out.extend(encode_instruction(opcode, operands))
        if opcode == OP_CAPABILITY:
            last_capability = len(out)
        elif opcode == OP_EXTENSION:
            last_extension = len(out)
    if patched == 0:
        raise SpirvPatchError("no OpCooperativeMatrixLoadTensorNV with a DecodeFunc operand in the module; "
                              "DecodeVectorFunc is only allowed beside DecodeFunc")
    if last_capability is None:
        raise SpirvPatchError("the module declares no OpCapability; is it a glslang-compiled shader?")
    if not has_extension:
        at = last_extension if last_extension is not None else last_capability
        out[at:at] = encode_instruction(OP_EXTENSION, encode_string(EXTENSION_DECODE_VECTOR))
    if not has_capability:
        out[last_capability:last_capability] = encode_instruction(OP_CAPABILITY, [CAPABILITY_DECODE_VECTOR])
    return to_bytes(out)
