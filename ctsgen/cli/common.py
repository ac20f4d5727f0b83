"""What several commands share: the default pack and the unreached-deviation warning (their shared
options: :mod:`ctsgen.cli.options`)."""

from __future__ import annotations

import sys

from ctsgen.core.argtypes import int_between
from ctsgen.families import DEFAULT_FAMILY
from ctsgen.mutants.deviations import reached
from ctsgen.fuzz import workers as fuzz_workers


DEFAULT_PACK = f"generated/{DEFAULT_FAMILY}"


def warn_unreached(deviations: tuple[str, ...], what: str) -> None:
    """Name each expected deviation whose replaced semantics no oracle computation ran: it changed nothing."""
    for name in deviations:
        if name not in reached():
            sys.stderr.write(f"ctsgen: warning: --expect-deviation {name} reached no case of {what} (another "
                             "family's deviation?), so it changed no verdict\n")


def worker_count(text: str) -> int:
    """``--workers``: a whole number from 1 to the cores this process may run on. Each worker is a
    process holding its own backend and oracle: more than the cores only crowd them, and an unbounded
    count is the OOM killer (``--jobs``, docs/commands.md)."""
    return int_between(1, fuzz_workers.default_workers())(text)
