"""What several commands share: the default pack and the unreached-deviation warning (their shared
options: :mod:`ctsgen.cli.options`)."""

from __future__ import annotations

import sys

from ctsgen.families import DEFAULT_FAMILY


DEFAULT_PACK = f"generated/{DEFAULT_FAMILY}"


def warn_unreached(deviations: tuple[str, ...], what: str) -> None:
    """Name each expected deviation whose replaced semantics no oracle computation ran: it changed nothing."""
    from ctsgen.mutants.deviations import reached

    for name in deviations:
        if name not in reached():
            sys.stderr.write(f"ctsgen: warning: --expect-deviation {name} reached no case of {what} (another "
                             "family's deviation?), so it changed no verdict\n")
