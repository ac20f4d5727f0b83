"""How a pack or a fuzz session runs its dispatches, and the command-line options that set it.

:class:`RunOptions` holds the defaults; :data:`ARGUMENTS` declares the
options once, for ``ctsgen run``, ``ctsgen fuzz`` and the pytest plugin
(``--ctsgen-timeout``, ``--ctsgen-expect-deviation`` ...), so their defaults and help cannot drift apart.
This module imports nothing heavy: the pytest plugin reads it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctsgen.core.argtypes import int_between, positive_int, wait_seconds

#: ``--isolation``: ``process`` runs the backend in a supervised worker process, ``none`` in
#: this one, ``auto`` in a worker for every backend but the reference (see ``open_backend``).
ISOLATION_CHOICES = ("auto", "process", "none")


@dataclass
class RunOptions:
    """Cases per dispatch, and the bounded wait for a dispatch: ``timeout_base_s`` plus
    ``timeout_per_case_s`` per case (past it a dispatch is a Timeout)."""

    batch_size: int = 512
    timeout_base_s: float = 10.0
    timeout_per_case_s: float = 0.01
    #: a device numeric model (ctsgen.oracle.models, ``ctsgen run --numerics``): ModelMismatch verdicts
    numerics: str | None = None
    #: documented driver deviations (mutant names, ``--expect-deviation``): each case is judged
    #: against its oracle under them, on its own inputs (ctsgen.mutants.deviations)
    expect_deviations: tuple[str, ...] = ()
    #: documented deviations a baseline names (``deviation:NAME`` rules, ctsgen.results.expectations): a
    #: failing case records those whose oracle its outputs satisfy (``explained_by``); its verdict stays
    explain_deviations: tuple[str, ...] = ()

    def timeout_for(self, n_cases: int) -> float:
        """The bounded wait for a dispatch of ``n_cases`` cases."""
        return self.timeout_base_s + self.timeout_per_case_s * n_cases


_DEFAULTS = RunOptions()

#: The most re-runs ``--flake-retries`` asks of a failing case: a failure that fails this many times
#: again is no flake, and each round is a run of its own.
MAX_FLAKE_RETRIES = 10

#: ``add_argument`` keywords of each option, by its name without dashes or prefix.
ARGUMENTS: dict[str, dict[str, Any]] = {
    "batch-size": dict(type=positive_int, default=_DEFAULTS.batch_size,
                       help=f"cases per dispatch (default: {_DEFAULTS.batch_size})"),
    "timeout": dict(type=wait_seconds, default=_DEFAULTS.timeout_base_s,
                    help=f"seconds to wait for a dispatch, plus {_DEFAULTS.timeout_per_case_s:g} s per case "
                         f"(default: {_DEFAULTS.timeout_base_s:g}); a supervised worker gets 20 s more to "
                         "report the timeout itself before it is killed"),
    "isolation": dict(choices=list(ISOLATION_CHOICES), default="auto",
                      help="run the backend in a supervised worker process (auto: all but the reference)"),
    "flake-retries": dict(type=int_between(0, MAX_FLAKE_RETRIES), default=0, metavar="N",
                          help="re-run each unexpected failure up to N times (at most "
                               f"{MAX_FLAKE_RETRIES}); one that works on a re-run is a Flake (default: 0)"),
    "expect-deviation": dict(action="append", metavar="NAME",
                             help="expect a documented driver deviation (a mutant name, see ctsgen mutants) "
                                  "instead of the spec: each case must give what its oracle gives under it, "
                                  "on the same inputs (repeatable)"),
}
