"""Mutants: named, plausible driver bugs, injected into the reference semantics.

A :class:`Mutant` replaces one function of the reference semantics with a
faulty twin (C remainder for OpSMod, floor for ceiling, a swapped
coordinate...). :class:`ctsgen.mutants.backend.MutantBackend` is the
reference backend with one mutant applied, so ``ctsgen fuzz --backend
mutant:NAME`` measures whether the suite finds that bug. The same catalogue models *known* driver
deviations: ``--expect-deviation NAME`` (``ctsgen fuzz``, ``ctsgen run``, the
pytest plugin) applies a mutant to the expectation side instead, on the same
inputs (:mod:`ctsgen.mutants.deviations`), so a session against a driver with a
documented deviation looks for everything else.

A family declares its mutants in its ``FamilySpec.mutants`` (conventionally the ``MUTANTS`` list
of its ``mutants.py``), so a family registered through the ``ctsgen.families`` entry-point group
contributes its mutants as a built-in one does; nothing here names a family.
"""

from __future__ import annotations

from functools import cache

from ctsgen.core.mutant import Mutant
from ctsgen.errors import UnknownNameError
from ctsgen.families import families


@cache
def catalogue() -> dict[str, Mutant]:
    """Every mutant every registered family declares, in registry order."""
    out: dict[str, Mutant] = {}
    for family in families().values():
        for m in family.mutants:
            if m.name in out:
                raise ValueError(f"two mutants are called {m.name!r}")
            out[m.name] = m
    return out


def get_mutant(name: str) -> Mutant:
    found = catalogue()
    if name not in found:
        raise UnknownNameError(f"unknown mutant {name!r} -> use one of the {len(found)} `ctsgen mutants` lists")
    return found[name]
