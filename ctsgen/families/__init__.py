"""The registry of test families.

Every sub-package of ``ctsgen.families`` that exports ``FAMILY`` is a
family, and so is every object registered under the ``ctsgen.families``
entry-point group by another distribution. Nothing here names a family but
the default one.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from ctsgen.errors import UnknownNameError

if TYPE_CHECKING:
    from ctsgen.core.family import Family

#: The family a command works on when none is named (``--family``, ``given_cases``, the default pack).
DEFAULT_FAMILY = "tensor-layout"


@cache
def families() -> dict[str, Family]:
    """All known families by name (built-in packages first, then entry points)."""
    found: dict[str, Family] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        fam = getattr(module, "FAMILY", None)
        if fam is not None:
            found[fam.name] = fam
    for ep in entry_points(group="ctsgen.families"):
        fam = ep.load()
        found.setdefault(fam.name, fam)
    return found


def get_family(name: str) -> Family:
    """The family called ``name``; the error lists the known ones."""
    fams = families()
    if name not in fams:
        raise UnknownNameError(f"unknown family {name!r} -> use one of: {', '.join(sorted(fams)) or 'none'}")
    return fams[name]
