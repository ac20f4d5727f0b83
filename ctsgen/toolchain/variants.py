"""The one compile step: a family's shader variant -> a validated :class:`ShaderVariant`.

``ctsgen generate`` (pack writing), ``ctsgen fuzz``, ``ctsgen repro``,
:func:`ctsgen.testing.check_case` and the benches compile a variant with
:func:`compile_variant`; pack reading re-validates a module with
:func:`validate_module`. The validator a variant's module needs is chosen
here, from the variant's optional ``validator`` attribute, so a family
that needs its own validator adds it to :data:`VALIDATORS` and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import ctsgen.toolchain as toolchain  # its functions are looked up when called (tests replace them)
from ctsgen.core.shader import ShaderVariant
from ctsgen.toolchain import ToolchainError

if TYPE_CHECKING:
    from ctsgen.core.family import Variant

#: Validators a variant may name in its optional ``validator`` attribute: ``spirv-val``
#: (the default: spirv-val --target-env vulkan1.3) or ``glslang-decode-vector`` (the
#: glslang library's SPIRV-Tools, which knows SPV_NV_cooperative_matrix_decode_vector).
VALIDATORS = ("spirv-val", "glslang-decode-vector")


def variant_validator(v: Variant) -> str:
    """The validator the variant's module needs (optional attribute ``validator``; see VALIDATORS)."""
    name = getattr(v, "validator", "spirv-val")
    if name not in VALIDATORS:
        raise ToolchainError(f"variant {v.id} names validator {name!r} -> use one of {', '.join(VALIDATORS)}")
    return name


def variant_spirv(v: Variant, compile_fn: Callable[[str, str], bytes] | None = None,
                  baked: Sequence[int] | None = None) -> bytes:
    """The variant's module: ``v.spirv(compile_fn, baked)`` where the variant provides one (a
    variant whose shader needs a transformed module, e.g. decode-vector), else
    ``compile_fn(v.glsl(baked), name)`` (default :func:`ctsgen.toolchain.compile_glsl`).
    ``baked``: a repro's parameter record (see Variant.glsl)."""
    compile_fn = compile_fn or toolchain.compile_glsl
    provided = getattr(v, "spirv", None)
    if provided is not None:
        return provided(compile_fn, baked)
    return compile_fn(v.glsl(baked), f"{v.id}.comp")


def validate_module(spirv: bytes, validator: str = "spirv-val", *, required: bool = True) -> bool:
    """Validate ``spirv`` with the named validator (see :data:`VALIDATORS`); True when it was
    validated. ``required=False``: where no validator is installed (a GPU host compiling on
    the fly) return False instead of raising :class:`ToolchainError`; an invalid module
    raises :class:`~ctsgen.errors.SpirvValidationError` either way."""
    if validator not in VALIDATORS:
        raise ToolchainError(f"unknown validator {validator!r} -> use one of {', '.join(VALIDATORS)}")
    decode_vector = validator == "glslang-decode-vector"
    if required:
        toolchain.validate_spirv(spirv, decode_vector=decode_vector)
        return True
    return toolchain.validate_if_installed(spirv, decode_vector=decode_vector)


def compile_variant(v: Variant, family: str, *, baked: Sequence[int] | None = None,
                    require_validator: bool = True) -> ShaderVariant:
    """Compile ``v`` (a variant of ``family``) and validate it with its validator.

    ``baked``: a repro's parameter record, compiled into a standalone one-case shader.
    ``require_validator=False``: a missing validator is not an error (the module is then
    used as compiled); a module the validator rejects always is.
    """
    spirv = variant_spirv(v, baked=baked)
    validate_module(spirv, variant_validator(v), required=require_validator)
    return ShaderVariant(id=v.id, spirv=spirv, local_size_x=v.local_size_x, buffers=v.buffers(),
                         requirements=v.requirements(), family=family, signature=v.to_json())
