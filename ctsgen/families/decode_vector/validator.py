"""The decode-vector family's validator: spirv-val 2025.5 does not know
SPV_NV_cooperative_matrix_decode_vector, so its modules are validated by the glslang library's
SPIRV-Tools (universal SPIR-V 1.6 rules), ``FamilySpec.validator``."""

from __future__ import annotations

from ctsgen import toolchain  # its functions are looked up when called (tests replace them)
from ctsgen.core.family import Validator


def _validate(spirv: bytes, required: bool) -> bool:
    if required:
        toolchain.validate_spirv(spirv, decode_vector=True)
        return True
    return toolchain.validate_if_installed(spirv, decode_vector=True)


#: Recorded by name in a pack's manifest (``validator``), as packs of this family always were.
VALIDATOR = Validator("glslang-decode-vector", _validate)
