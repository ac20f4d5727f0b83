"""The one compile step: a family's shader variant -> a validated :class:`ShaderVariant`.

``ctsgen generate`` (pack writing), ``ctsgen fuzz``, ``ctsgen repro``,
:func:`ctsgen.testing.check_case`, fuzz buckets, the mutation bench, the
debug re-run and the benches compile a variant with :func:`compile_variant`;
pack reading re-validates a module with :func:`validate_module`. The
validator a module needs is its family's (``FamilySpec.validator``, a
:class:`~ctsgen.core.family.Validator` the family declares; :data:`SPIRV_VAL`
where it declares none), which the caller passes; how strictly a path
validates is its :data:`Validation`, named once where the path compiles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Literal, get_args

from ctsgen import toolchain  # its functions are looked up when called (tests replace them)
from ctsgen.core.family import Validator
from ctsgen.core.shader import ShaderVariant
from ctsgen.toolchain import ToolchainError

if TYPE_CHECKING:
    from ctsgen.core.family import Variant
    from ctsgen.timing import Breakdown


def _spirv_val(spirv: bytes, required: bool) -> bool:
    if required:
        toolchain.validate_spirv(spirv)
        return True
    return toolchain.validate_if_installed(spirv)


#: The validator of a family that declares none: spirv-val --target-env vulkan1.3.
SPIRV_VAL = Validator("spirv-val", _spirv_val)

#: How :func:`compile_variant` validates, one per path:
#:
#: * ``required``: the family's validator, which must be installed
#:   (pack writing, CI);
#: * ``if-installed``: the same where it is installed, else the module is used as compiled (a GPU
#:   host compiling on the fly: ``ctsgen repro``, ``check_case``, the debug re-run);
#: * ``in-process``: the glslang library's SPIRV-Tools in this process, each module once
#:   (:func:`ctsgen.toolchain.validate_in_process`: universal SPIR-V 1.6 rules, about 1 ms a module
#:   against 9 ms for a ``spirv-val`` subprocess): ``ctsgen fuzz``, where each example may bring a
#:   new variant; packs and CI keep ``spirv-val --target-env vulkan1.3``;
#: * ``no-module``: neither compiled nor validated, the variant as a backend that runs no SPIR-V
#:   takes it (the reference backend and its mutants in this process: fuzz buckets explaining a
#:   failure, the mutation bench's search for the smallest exposing case).
Validation = Literal["required", "if-installed", "in-process", "no-module"]


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


def validate_module(spirv: bytes, validator: Validator | None = None, *, required: bool = True) -> bool:
    """Validate ``spirv`` with ``validator`` (None: :data:`SPIRV_VAL`); True when it was
    validated. ``required=False``: where no validator is installed (a GPU host compiling on
    the fly) return False instead of raising :class:`ToolchainError`; an invalid module
    raises :class:`~ctsgen.toolchain.errors.SpirvValidationError` either way."""
    return (validator or SPIRV_VAL).validate(spirv, required)


def compile_variant(v: Variant, family: str, *, baked: Sequence[int] | None = None,
                    validation: Validation = "required", validator: Validator | None = None,
                    times: Breakdown | None = None) -> ShaderVariant:
    """Compile ``v`` (a variant of ``family``) and validate it as ``validation`` says, with
    ``validator`` (the family's ``FamilySpec.validator``; None: :data:`SPIRV_VAL`) where that
    is ``required`` or ``if-installed``.

    ``baked``: a repro's parameter record, compiled into a standalone one-case shader.
    A module the validator rejects is always an error. ``times`` receives the seconds of
    the ``compile`` and ``validate`` stages.
    """
    def stage(name: str):  # noqa: ANN202 - a context manager
        return times.stage(name) if times is not None else nullcontext()

    if validation not in get_args(Validation):
        raise ToolchainError(f"unknown validation {validation!r} -> use one of {', '.join(get_args(Validation))}")
    spirv = b""
    if validation != "no-module":
        with stage("compile"):
            spirv = variant_spirv(v, baked=baked)
        with stage("validate"):
            if validation == "in-process":
                toolchain.validate_in_process(spirv)
            else:
                validate_module(spirv, validator, required=validation == "required")
    return ShaderVariant(id=v.id, spirv=spirv, local_size_x=v.local_size_x, buffers=v.buffers(),
                         requirements=v.requirements(), family=family, signature=v.to_json())
