"""What several commands share: the default pack, batch options, and the unreached-deviation warning."""

from __future__ import annotations

import sys

from ctsgen.core.argtypes import int_between, positive_int
from ctsgen.families import DEFAULT_FAMILY


DEFAULT_PACK = f"generated/{DEFAULT_FAMILY}"


#: ``--max-batch`` and ``--min-batch``, declared once for ``fuzz`` and ``campaign start``.
BATCH_ARGUMENTS: dict[str, dict] = {
    "max-batch": dict(type=positive_int, default=256,
                      help="largest batch of cases per example, one compiled shader and one dispatch (default: 256)"),
    "min-batch": dict(type=positive_int,
                      help="cases an example of more than one carries at least, so that each shader's pipeline "
                           "build serves many (default: 1 on the reference backend and mutants, 128 elsewhere)"),
}


def warn_unreached(deviations: tuple[str, ...], what: str) -> None:
    """Name each expected deviation whose replaced semantics no oracle computation ran: it changed nothing."""
    from ctsgen.mutants.deviations import reached

    for name in deviations:
        if name not in reached():
            sys.stderr.write(f"ctsgen: warning: --expect-deviation {name} reached no case of {what} (another "
                             "family's deviation?), so it changed no verdict\n")


def worker_count(text: str) -> int:
    """``--workers``: a whole number from 1 to the cores this process may run on. Each worker is a
    process holding its own backend and oracle: more than the cores only crowd them, and an unbounded
    count is the OOM killer (``--jobs``, docs/commands.md)."""
    from ctsgen.fuzz.workers import default_workers

    return int_between(1, default_workers())(text)
