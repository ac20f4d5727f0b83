"""Compiler routes: the ways a variant's shader becomes SPIR-V, declared in one place.

A route is a name and a recipe: a producer (glslang from the slangpy wheel, at an
``optimizationLevel``, reading the variant's GLSL; or Slang from the same wheel, reading the variant's
Slang source where its family gives one), then optional SPIR-V transforms (``spirv-opt`` passes, or a
word patch of a mutant route). Every family goes through every glslang route without knowing of it:
:func:`ctsgen.toolchain.variants.compile_variant` takes a route, and a new route is one entry of
:data:`ROUTES`. The same case along two routes must give the same result on the same device; a
case that does not is a route finding, and a module a route makes that its family's validator
rejects (or a compiler that fails, crashes or hangs on a module it was given) is a toolchain
finding (docs/spec-decisions.md "compiler-routes").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctsgen import toolchain  # looked up when called (tests replace compile_glsl)
from ctsgen.errors import UnknownNameError
from ctsgen.toolchain import slang, spirv_mutate, spirv_opt
from ctsgen.toolchain.errors import ToolchainError

#: The route of every pack, fuzz and run that names none: glslang at optimization level 0.
DEFAULT_ROUTE = "glslang"

#: The producers: glslang reads a variant's GLSL, Slang its Slang source (``Variant.slang``).
GLSLANG, SLANG = "glslang", "slang"

#: spirv-opt's pass list aimed at loops, SSA and memory (issue 42).
LOOP_PASSES = ("--inline-entry-points-exhaustive", "--eliminate-dead-code-aggressive", "--scalar-replacement",
               "--ssa-rewrite", "--loop-unroll", "--merge-blocks", "--simplify-instructions",
               "--copy-propagate-arrays")


class RouteRefusedError(ToolchainError):
    """A route cannot take a family's modules, or its tool is not installed; the message says why."""


class ToolchainFinding(ToolchainError):
    """A route made a module its family's validator rejects, or its compiler or optimizer failed,
    crashed or hung on a module it was given: a finding about the toolchain, not about ctsgen.

    ``stage``: ``optimizer`` or ``validator``; ``kind``: ``error``, ``crash``, ``hang`` or
    ``invalid``; ``produced``: the module before the route's transforms (its producer's output);
    ``output``: the module the validator rejected (None where the transform made none);
    ``command``: the transform's argument list (empty for a word patch); ``messages``: what the
    failing tool printed; ``glsl``: the variant's source."""

    def __init__(self, message: str, *, route: str, family: str, variant_id: str, stage: str, kind: str,
                 produced: bytes, output: bytes | None, command: list[str], messages: str, glsl: str) -> None:
        super().__init__(message)
        self.route, self.family, self.variant_id, self.stage, self.kind = route, family, variant_id, stage, kind
        self.produced, self.output, self.command, self.messages, self.glsl = produced, output, command, messages, glsl


@dataclass(frozen=True)
class Route:
    """One route: ``producer`` (glslang at ``optimization``, or Slang), then ``passes`` through
    spirv-opt, then ``patch``.

    ``mutant``: a planted compiler bug proving the machinery (never in ``--routes all``)."""

    name: str
    description: str
    optimization: int = 0
    passes: tuple[str, ...] = ()
    patch: Callable[[bytes], bytes] | None = None
    mutant: bool = False
    producer: str = GLSLANG

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_ROUTE

    @property
    def recipe(self) -> str:
        """The route's steps as one line (``doctor``, REPORT.md)."""
        steps = [f"slang ({slang.COMPILE_OPTIONS.split(';', 1)[1]})" if self.producer == SLANG
                 else f"glslang (optimizationLevel {self.optimization})"]
        if self.passes:
            steps.append("spirv-opt " + " ".join(self.passes))
        if self.patch is not None:
            steps.append(f"{self.patch.__module__}.{self.patch.__name__}")
        return " | ".join(steps)

    def compile_fn(self) -> Callable[[str, str], bytes] | None:
        """The source -> SPIR-V step a variant's module is made with (None: the default compile):
        ``compile_fn(source, name)`` of the variant's GLSL, or of its Slang source along a Slang route
        (:func:`ctsgen.toolchain.variants.variant_spirv` picks the source)."""
        if self.producer == SLANG:
            return slang.compile_slang
        if self.optimization == 0:
            return None
        return lambda source, name: toolchain.compile_glsl(source, name, optimization=self.optimization)

    def missing(self) -> str | None:
        """Why this machine cannot take the route (its tool is not installed), or None."""
        if self.producer == SLANG:
            try:
                slang.library_path()
            except ToolchainError as exc:
                return str(exc)
        if not self.passes:
            return None
        try:
            spirv_opt.executable()
        except ToolchainError as exc:
            return str(exc)
        return None

    def refuses(self, validator_name: str) -> str | None:
        """Why the route cannot take the modules of a family validated by ``validator_name``, or None.

        spirv-opt is the standalone SPIRV-Tools that ``spirv-val`` is: a family that declares its
        own validator does so because those tools do not know its extension (decode-vector's
        SPV_NV_cooperative_matrix_decode_vector: spirv-opt 2025.5 stops at "Invalid capability
        operand: 5447"), so an optimizer route does not read its modules."""
        if self.passes and validator_name != "spirv-val":
            return (f"route {self.name} runs spirv-opt, which does not read this family's modules (they need "
                    f"the {validator_name} validator: the standalone SPIRV-Tools do not know their extension)")
        return None

    def transform(self, spirv: bytes) -> bytes:
        """The producer's module through the route's transforms (:class:`spirv_opt.OptimizerError`
        where spirv-opt fails)."""
        if self.passes:
            spirv = spirv_opt.optimize(spirv, self.passes)
        if self.patch is not None:
            spirv = self.patch(spirv)
        return spirv


#: Every route, by name. The first is the default; a new route is one more line.
ROUTES: dict[str, Route] = {r.name: r for r in (
    Route(DEFAULT_ROUTE, "glslang from the slangpy wheel, no optimization (ctsgen's route since its start)"),
    Route("glslang-O1", "glslang's own SPIRV-Tools optimizer at optimizationLevel 1 (levels 2 and 3 give "
                        "spirv-opt -O's instructions, issue 42)", optimization=1),
    Route("slang", "Slang from the slangpy wheel: a second front end and code generator, reading the Slang "
                   "source of a family that gives one (docs/spec-decisions.md \"compiler-routes\")",
          producer=SLANG),
    Route("opt-O", "spirv-opt -O (performance passes)", passes=("-O",)),
    Route("opt-Os", "spirv-opt -Os (size passes)", passes=("-Os",)),
    Route("opt-loops", "spirv-opt's loop, SSA and memory passes", passes=LOOP_PASSES),
    Route("mutant-swap-ab", "planted: swaps A and B of the first OpCooperativeMatrixMulAddKHR (an invalid "
                            "module: a toolchain finding)", patch=spirv_mutate.swap_mul_add_ab, mutant=True),
    Route("mutant-drop-store", "planted: drops the module's last store (a valid module with a wrong output: "
                               "a route finding on a device)", patch=spirv_mutate.drop_last_store, mutant=True),
)}

#: ``--routes all``: every route but the mutants.
ALL = "all"


def get_route(name: str) -> Route:
    """The route called ``name``; :class:`UnknownNameError` naming the known ones."""
    try:
        return ROUTES[name]
    except KeyError:
        raise UnknownNameError(f"unknown route {name!r} -> choose one of {', '.join(ROUTES)}") from None


def real_routes() -> list[Route]:
    """The routes ``--routes all`` takes: every one but the mutant routes."""
    return [r for r in ROUTES.values() if not r.mutant]


def parse_routes(text: str) -> list[Route]:
    """``--routes``: ``all`` or names separated by commas (each once); :class:`UnknownNameError`
    for an unknown one. The default route comes first where it is named, as the baseline."""
    if text == ALL:
        return real_routes()
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UnknownNameError(f"--routes {text!r} names no route -> give 'all' or names from {', '.join(ROUTES)}")
    routes = list(dict.fromkeys(get_route(n) for n in names))
    return sorted(routes, key=lambda r: not r.is_default)


def check_available(routes: list[Route]) -> None:
    """Refuse, in one line, a route this machine lacks the tool of."""
    for r in routes:
        why = r.missing()
        if why is not None:
            raise RouteRefusedError(f"route {r.name} is not available here: {why}")
