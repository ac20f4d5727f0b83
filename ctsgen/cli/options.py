"""The options several commands share, each declared once: a command takes them with
:func:`add_options`, so their type, choices and help cannot drift apart between commands.

Those the pytest plugin also reads (``--ctsgen-timeout`` ...) keep their one declaration below the
plugin (:mod:`ctsgen.runner.options`, :mod:`ctsgen.results.options`, :mod:`ctsgen.runner.select`) and
are gathered here; the rest are declared here. A command's own options stay in its module.
"""

from __future__ import annotations

import argparse
from typing import Any

from ctsgen.backends.base import BUILD_BUDGET_S
from ctsgen.toolchain.routes import real_routes
from ctsgen.core.argtypes import device_list, nonneg_float, nonneg_int, positive_int, wait_seconds
from ctsgen.results.options import ARGUMENTS as EXPECTATION_ARGUMENTS
from ctsgen.runner.options import ARGUMENTS as RUN_ARGUMENTS
from ctsgen.runner.select import ARGUMENTS as SELECT_ARGUMENTS

#: ``add_argument`` keywords of each shared option, by its name without dashes. A help text that
#: states a default reads it with ``%(default)s``, so a command may set its own default.
SHARED: dict[str, dict[str, Any]] = {
    "backend": dict(default="reference",
                    help="the backend: reference, vulkan, mutant:NAME or MODULE:CLASS (default: reference; "
                         "repro: the one the --results file names, else vulkan)"),
    "device": dict(type=nonneg_int, help="the Vulkan device, by index (default: 0)"),
    "devices": dict(type=device_list, help="GPU indices for the worker processes: worker K uses device K mod "
                                           "their number"),
    "shrink-time": dict(type=nonneg_float,
                        help="stop shrinking this many seconds after a new failure (default: %(default)s)"),
    "include-hazardous": dict(action="store_true",
                              help="also draw each family's hazardous group: cases known to hang drivers "
                                   "(docs/spec-decisions.md names them)"),
    "route": dict(help=f"the compiler route: {', '.join(r.name for r in real_routes())} (the first is the "
                       "default), or a mutant route (ctsgen doctor lists those this machine has; docs/commands.md)"),
    "max-batch": dict(type=positive_int, default=256,
                      help="largest batch of cases per example, one compiled shader and one dispatch (default: 256)"),
    "min-batch": dict(type=positive_int,
                      help="cases an example of more than one carries at least, so that each shader's pipeline "
                           "build serves many (default: 1 on the reference backend and mutants, 128 elsewhere)"),
    "build-budget": dict(type=wait_seconds, default=BUILD_BUDGET_S, metavar="SECONDS",
                         help="seconds one shader variant's pipeline build may take (its creation, and the "
                              "compile of a driver that compiles at the first dispatch, as lavapipe does) "
                              "before its cases are BuildTimeout, a verdict of their own (default: "
                              "%(default)g); it bounds builds in the supervised worker"),
    **RUN_ARGUMENTS,
    **EXPECTATION_ARGUMENTS,
    **SELECT_ARGUMENTS,
}


def add_options(parser: argparse.ArgumentParser, *names: str, **defaults: Any) -> None:
    """Add the shared options ``names`` to ``parser``; ``defaults`` (by dest, ``shrink_time=60.0``)
    gives a command its own default of one."""
    for name in names:
        parser.add_argument(f"--{name}", **SHARED[name])
    if defaults:
        parser.set_defaults(**defaults)
