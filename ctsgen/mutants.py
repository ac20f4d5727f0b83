"""Mutants: named, plausible driver bugs, injected into the reference semantics.

A :class:`Mutant` replaces one function of the reference semantics with a
faulty twin (C remainder for OpSMod, floor for ceiling, a swapped
coordinate...). :class:`ctsgen.backends.mutant.MutantBackend` is the
reference backend with one mutant applied, so ``ctsgen fuzz --backend
mutant:NAME`` measures whether the suite finds that bug. The same catalogue models *known* driver
deviations: ``--expect-deviation NAME`` (``ctsgen fuzz``, ``ctsgen run``, the
pytest plugin) applies a mutant to the expectation side instead, on the same
inputs (:mod:`ctsgen.deviations`), so a session against a driver with a
documented deviation looks for everything else.

Families contribute mutants from ``ctsgen/families/<family>/mutants.py``
(a module-level ``MUTANTS`` list); nothing here names a family.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from ctsgen.errors import UnknownNameError


@dataclass(frozen=True)
class Mutant:
    """One injected fault: ``factory()`` maps targets to replacements.

    A target is "module:name" (a module-level name, replaced where the
    reference semantics look it up at call time) or "module:Class.attr"
    (an attribute of a class, e.g. one method, replaced on the class itself).

    ``factory`` builds the replacements lazily from the originals, so a
    mutant can wrap the function it replaces. ``killed_by`` describes the
    smallest case that exposes it (for the mutation report).

    ``instructions`` names the SPIR-V instructions (``ctsgen.toolchain.spirv_patch.OPCODES``)
    a module must contain, every one, for the changed semantics to show in it: a driver with
    that deviation gives the cases of any other module what the spec says
    (:func:`ctsgen.deviations.reaching`). setdimension-floor changes OpTensorLayoutSetDimensionNV's
    default strides, which differ from the spec's only where a blockSize is not 1, and only
    OpTensorLayoutSetBlockSizeNV sets one (OpCreateTensorLayoutNV initialises each to one).

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

    @contextmanager
    def applied(self) -> Iterator[None]:
        """Swap the replacements in for the duration of the block."""
        with replaced(self.factory()):
            yield

    def targets(self) -> tuple[str, ...]:
        """The targets the mutant replaces."""
        return _targets(self.name)


@cache
def _targets(name: str) -> tuple[str, ...]:
    return tuple(get_mutant(name).factory())


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


@cache
def catalogue() -> dict[str, Mutant]:
    """Every mutant of every family package that has a ``mutants`` module."""
    import ctsgen.families as fams

    out: dict[str, Mutant] = {}
    for info in pkgutil.iter_modules(fams.__path__):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(f"ctsgen.families.{info.name}.mutants")
        except ModuleNotFoundError as exc:
            if exc.name != f"ctsgen.families.{info.name}.mutants":
                raise
            continue
        for m in getattr(module, "MUTANTS", []):
            if m.name in out:
                raise ValueError(f"two mutants are called {m.name!r}")
            out[m.name] = m
    return out


def get_mutant(name: str) -> Mutant:
    found = catalogue()
    if name not in found:
        raise UnknownNameError(f"unknown mutant {name!r} -> use one of the {len(found)} `ctsgen mutants` lists")
    return found[name]
