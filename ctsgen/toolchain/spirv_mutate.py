"""Word-level SPIR-V transforms for the mutant routes (:mod:`ctsgen.toolchain.routes`): planted
compiler bugs that prove the route machinery finds and buckets what a real one would do.

Each takes a module and returns it changed, or unchanged where it holds nothing to change (the
mutant is then absent from that shader). Instructions are read with
:func:`ctsgen.toolchain.spirv_patch.instructions` (SPIR-V 1.6, "2.3 Physical Layout").
"""

from __future__ import annotations

from ctsgen.toolchain.spirv_patch import instructions, to_bytes, to_words

OP_STORE = 62
#: SPV_KHR_cooperative_matrix: OpCooperativeMatrixStoreKHR, OpCooperativeMatrixMulAddKHR.
OP_COOPERATIVE_MATRIX_STORE_KHR = 4458
OP_COOPERATIVE_MATRIX_MUL_ADD_KHR = 4459
#: SPV_NV_cooperative_matrix2: OpCooperativeMatrixStoreTensorNV.
OP_COOPERATIVE_MATRIX_STORE_TENSOR_NV = 5368
STORES = (OP_STORE, OP_COOPERATIVE_MATRIX_STORE_KHR, OP_COOPERATIVE_MATRIX_STORE_TENSOR_NV)


def swap_mul_add_ab(spirv: bytes) -> bytes:
    """The A and B operands of the first OpCooperativeMatrixMulAddKHR swapped (operands: Result
    Type, Result, A, B, C, ...). A and B have different MatrixUse, so the module is invalid:
    the validator must reject it (a toolchain finding)."""
    words = to_words(spirv)
    for pos, opcode, operands in instructions(words):
        if opcode == OP_COOPERATIVE_MATRIX_MUL_ADD_KHR:
            words[pos + 3], words[pos + 4] = words[pos + 4], words[pos + 3]
            break
    return to_bytes(words)


def drop_last_store(spirv: bytes) -> bytes:
    """The module without its last store (OpStore or a cooperative matrix store: none of them has a
    result, so the module stays valid and only its output changes: a route finding on a device)."""
    words = to_words(spirv)
    last = [(pos, len(operands) + 1) for pos, opcode, operands in instructions(words) if opcode in STORES]
    if not last:
        return spirv
    pos, count = last[-1]
    return to_bytes(words[:pos] + words[pos + count:])
