"""A mutant: one named, plausible driver bug, injected into the reference semantics.

A family declares its mutants beside its code (``FamilySpec.mutants``); the catalogue
(:mod:`ctsgen.mutants.catalogue`) collects them, the mutant backend runs the reference semantics
with one applied, and an expected deviation applies one to the expectation side.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Mutant:
    """One injected fault: ``factory()`` maps targets to replacements.

    A target is "module:name" (a module-level name, replaced in the module
    that defines it, where every caller looks it up at call time: callers
    reach it as ``module.name``, never bind it by ``from module import name``)
    or "module:Class.attr" (an attribute of a class, e.g. one method, replaced
    on the class itself). tests/test_structure.py holds every target to both.

    ``factory`` builds the replacements lazily from the originals, so a
    mutant can wrap the function it replaces. ``killed_by`` describes the
    smallest case that exposes it (for the mutation report).

    ``instructions`` names the SPIR-V instructions (``ctsgen.toolchain.spirv_patch.OPCODES``)
    a module must contain, every one, for the changed semantics to show in it: a driver with
    that deviation gives the cases of any other module what the spec says
    (:func:`ctsgen.mutants.deviations.reaching`). setdimension-floor changes OpTensorLayoutSetDimensionNV's
    default strides, which differ from the spec's only where a blockSize is not 1, and only
    OpTensorLayoutSetBlockSizeNV sets one (OpCreateTensorLayoutNV initialises each to one).

    ``shows_in`` (optional) is a further condition on a module's SPIR-V bytes, for a deviation that
    shows only in some shapes of module: lavapipe's MulAdd changes the variable that held C, which a
    module sees only where it reads C's SSA value again after the MulAdd (Slang's, spirv-opt's), never
    where it loads C from its variable again (glslang's; docs/repros/lavapipe-muladd-accumulator).
    ``route`` then names a compiler route (ctsgen/toolchain/routes.py) whose modules show it, the one
    tests/test_mutants_families.py fuzzes it along (None: the default route).

    ``kill_budget`` bounds the fuzz examples within which the suite must find the mutant
    (tests/test_mutants_families.py): 10 x the mean examples-to-kill over seeds 0-3, rounded up
    to 50, at least 150, as bench/mutant_kill_budgets.py prints it (docs/validation.md, "Mutant
    kill budgets", keeps the measurements).
    """

    name: str
    family: str
    description: str
    factory: Callable[[], dict[str, Any]]
    killed_by: str = ""
    instructions: tuple[str, ...] = ()
    kill_budget: int = 150
    shows_in: Callable[[bytes], bool] | None = None
    route: str | None = None

    @contextmanager
    def applied(self) -> Iterator[None]:
        """Swap the replacements in for the duration of the block."""
        with replaced(self.factory()):
            yield

    def targets(self) -> tuple[str, ...]:
        """The targets the mutant replaces."""
        return _targets_of(self.factory)


@cache
def _targets_of(factory: Callable[[], dict[str, Any]]) -> tuple[str, ...]:
    return tuple(factory())


def resolve(target: str) -> tuple[Any, str, Any]:
    """(owner, attribute, what is there now) of a target: a module and a module-level name, or a
    class and one attribute of its own ``__dict__`` (a method as a plain function)."""
    module_name, path = target.split(":")
    owner: Any = importlib.import_module(module_name)
    *outer, attr = path.split(".")
    for name in outer:
        owner = getattr(owner, name)
    return owner, attr, owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)


@contextmanager
def replaced(replacements: dict[str, Any]) -> Iterator[None]:
    """Each target of ``replacements`` replaced by its value for the ``with`` block."""
    saved = []
    try:
        for target, replacement in replacements.items():
            owner, attr, original = resolve(target)
            saved.append((owner, attr, original))
            setattr(owner, attr, replacement)
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)
