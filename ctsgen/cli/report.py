"""``ctsgen report``: compare two results files, or judge one against a baseline."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctsgen.cli.options import add_options
from ctsgen.results import ci
from ctsgen.results.expectations import load_expectations
from ctsgen.errors import UserError
from ctsgen.results.report import report


def cmd_report(args: argparse.Namespace) -> int:
    # one run judged against expectation files
    if args.baseline or args.flakes or args.improvements_pass or args.b is None:
        if args.b is not None:
            raise UserError("--baseline/--flakes/--improvements-pass judge one results file -> give only RESULTS, "
                            "or drop them to compare two runs")
        verdict = ci.judge_results_file(Path(args.a), load_expectations(args.baseline or (), args.flakes or (),
                                                                    improvements_pass=args.improvements_pass))
        print("\n".join(verdict.lines()))
        return 0 if verdict.ok else 1
    c, text = report(args.a, args.b)
    print(text)
    return 1 if c.regressions else 0


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    rp = sub.add_parser("report", help="compare two results files: regressions, fixes, new and removed cases")
    rp.add_argument("a", help="results file of the earlier run (JSON lines or CTS-style .txt); with --baseline: "
                    "the JSON-lines results file to judge")
    rp.add_argument("b", nargs="?", help="results file of the later run (left out with --baseline)")
    add_options(rp, "baseline", "flakes", "improvements-pass")
    rp.set_defaults(func=cmd_report)
