"""The expectation options, declared once for ``ctsgen run``, ``ctsgen report`` and the plugin
(``--ctsgen-baseline`` ...). Imports nothing heavy: the plugin and the command line read it at
start-up."""

from __future__ import annotations

from typing import Any

#: ``add_argument`` keywords of each option, by its name without dashes or prefix (docs/ci.md).
ARGUMENTS: dict[str, dict[str, Any]] = {
    "baseline": dict(action="append", metavar="FILE",
                     help="expected results, deqp-runner style: 'name,Status' lines (a failures.csv as it is), "
                          "or rules 're:REGEX,Status' / 'deviation:NAME,Status' (docs/ci.md); repeatable"),
    "flakes": dict(action="append", metavar="FILE",
                   help="regular expressions, one a line: a case whose name matches and whose status is no success is "
                        "a KnownFlake"),
    "skips": dict(action="append", metavar="FILE",
                  help="regular expressions, one a line: matching cases are not run"),
    "improvements-pass": dict(action="store_true",
                              help="UnexpectedImprovement(Pass|Warn|Fail), a listed failure that did better, does "
                                   "not fail the run (deqp-runner fails it; UnexpectedImprovement(Skip) always "
                                   "fails); failures.csv still lists it"),
}
