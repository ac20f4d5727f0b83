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
from ctsgen.toolchain.errors import SpirvValidationError
from ctsgen.toolchain.routes import (DEFAULT_ROUTE, GLSLANG, SLANG, Route, RouteRefusedError, ToolchainFinding,
                                     get_route)
from ctsgen.toolchain.spirv_opt import OptimizerError
from ctsgen.toolchain.spirv_patch import SpirvPatchError

if TYPE_CHECKING:
    from ctsgen.core.family import FamilySpec, Variant
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


def route_refusal(route: Route, family: FamilySpec) -> str | None:
    """Why ``route`` cannot take ``family``'s modules, or None: its validator's (:meth:`Route.refuses`),
    or, along Slang, a family whose variants give no Slang source (the optional ``slang`` member of
    core/family.py's Variant, absent or None, read here and in :func:`source_of` only: decode-vector's
    variant subclasses decode's and sets it to None)."""
    if route.producer == SLANG and getattr(family.variant_type, "slang", None) is None:
        return (f"route {route.name} reads a family's Slang source, and {family.name} gives none "
                "(docs/spec-decisions.md \"compiler-routes\")")
    return route.refuses((family.validator or SPIRV_VAL).name)


def source_of(v: Variant, family: str, producer: str = GLSLANG, baked: Sequence[int] | None = None) -> str:
    """The source ``producer`` reads: ``v.glsl(baked)``, or for Slang ``v.slang(baked)``, the optional
    member of a family that expresses its variants in Slang (core/family.py Variant); a variant
    without one is refused in one line (:class:`RouteRefusedError`)."""
    if producer != SLANG:
        return v.glsl(baked)
    slang_source = getattr(v, "slang", None)
    if slang_source is None:
        raise RouteRefusedError(f"{family}: the slang route reads a family's Slang source, and {family} gives "
                                "none (docs/spec-decisions.md \"compiler-routes\") -> use another --route for "
                                f"{family}")
    return slang_source(baked)


def variant_spirv(v: Variant, compile_fn: Callable[[str, str], bytes] | None = None,
                  baked: Sequence[int] | None = None, *, producer: str = GLSLANG, family: str = "") -> bytes:
    """The variant's module: along Slang, ``compile_fn(v.slang(baked), name)`` (:func:`source_of`);
    else ``v.spirv(compile_fn, baked)`` where the variant provides one (a variant whose shader
    needs a transformed module, e.g. decode-vector), else ``compile_fn(v.glsl(baked), name)``
    (default :func:`ctsgen.toolchain.compile_glsl`). ``baked``: a repro's parameter record (see
    Variant.glsl)."""
    compile_fn = compile_fn or toolchain.compile_glsl
    if producer == SLANG:
        return compile_fn(source_of(v, family or v.id, SLANG, baked), f"{v.id}.slang")
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
                    times: Breakdown | None = None, route: str | Route = DEFAULT_ROUTE) -> ShaderVariant:
    """Compile ``v`` (a variant of ``family``) along ``route`` (:mod:`ctsgen.toolchain.routes`)
    and validate it as ``validation`` says, with ``validator`` (the family's
    ``FamilySpec.validator``; None: :data:`SPIRV_VAL`) where that is ``required`` or
    ``if-installed``.

    ``baked``: a repro's parameter record, compiled into a standalone one-case shader.
    A module the validator rejects is always an error: along the default route a
    :class:`SpirvValidationError` (ctsgen's shader is wrong), along another route a
    :class:`ToolchainFinding` (the route's optimizer made it wrong), as is an optimizer that
    fails, crashes or hangs. A route that cannot take the family's modules raises
    :class:`RouteRefusedError`. The variant's id carries a non-default route's name
    (``ID~ROUTE``): a backend caches a pipeline by id, and two routes' modules differ.
    ``times`` receives the seconds of the ``compile`` and ``validate`` stages.
    """
    def stage(name: str):  # noqa: ANN202 - a context manager
        return times.stage(name) if times is not None else nullcontext()

    if validation not in get_args(Validation):
        raise ToolchainError(f"unknown validation {validation!r} -> use one of {', '.join(get_args(Validation))}")
    route = get_route(route) if isinstance(route, str) else route
    spirv = b""
    if validation != "no-module":
        refusal = route.refuses((validator or SPIRV_VAL).name)
        if refusal is not None:
            raise RouteRefusedError(f"{family}: {refusal} -> use another --route for {family}")
        with stage("compile"):
            try:
                produced = variant_spirv(v, route.compile_fn(), baked=baked, producer=route.producer, family=family)
            except SpirvPatchError as exc:  # a family rewriting the compiler's module (decode-vector)
                if route.is_default:
                    raise
                raise RouteRefusedError(f"{family}: route {route.name}'s module is not one the family's SPIR-V "
                                        f"rewrite can take ({exc}) -> use another --route for {family}") from None
            try:
                spirv = route.transform(produced)
            except OptimizerError as exc:
                raise _finding(route, v, family, baked, "optimizer", exc.kind, produced, None, exc.command,
                               exc.messages, str(exc)) from None
        with stage("validate"):
            try:
                if validation == "in-process":
                    toolchain.validate_in_process(spirv)
                else:
                    validate_module(spirv, validator, required=validation == "required")
            except SpirvValidationError as exc:
                if route.is_default:
                    raise
                raise _finding(route, v, family, baked, "validator", "invalid", produced, spirv, [],
                               exc.messages, str(exc)) from None
    vid = v.id if route.is_default else f"{v.id}~{route.name}"
    return ShaderVariant(id=vid, spirv=spirv, local_size_x=v.local_size_x, buffers=v.buffers(),
                         requirements=v.requirements(), family=family, signature=v.to_json())


def _finding(route: Route, v: Variant, family: str, baked: Sequence[int] | None, stage: str, kind: str,
             produced: bytes, output: bytes | None, command: list[str], messages: str, what: str
             ) -> ToolchainFinding:
    return ToolchainFinding(f"toolchain finding: route {route.name} on {family} variant {v.id}: {what}",
                            route=route.name, family=family, variant_id=v.id, stage=stage, kind=kind,
                            produced=produced, output=output, command=command, messages=messages,
                            glsl=source_of(v, family, route.producer, baked))
