"""``ctsgen coverage``: tables (and a plot) of what a pack samples."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctsgen.cli.args import check_plot_path
from ctsgen.cli.common import DEFAULT_PACK
from ctsgen.core.coverage import plot_coverage
from ctsgen.pack.read import load_pack
from ctsgen.errors import UserError
from ctsgen.pack.coverage import coverage_tables, format_tables


def cmd_coverage(args: argparse.Namespace) -> int:
    if args.plot:
        check_plot_path(args.plot, "--plot")
        target = Path(args.plot).resolve()  # a link followed: the file the plot would replace
        if target.exists() and target.is_relative_to(Path(args.pack).resolve()):
            raise UserError(f"--plot {args.plot} is {target}, a file of the pack {args.pack} this reads -> name a "
                            "new file outside the pack, e.g. coverage.png")
    pack = load_pack(args.pack)
    tables = coverage_tables(pack)
    print(format_tables(tables, pack))
    if args.plot:
        if plot_coverage(tables, Path(args.plot), title=f"{args.pack}: {len(pack.cases)} cases"):
            print(f"plot: {args.plot}")
        else:
            print("no plot: matplotlib is not installed (pip install 'ctsgen[plot]')")
    return 0


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    cv = sub.add_parser("coverage", help="tables (and a plot) of what a pack samples; lists empty cells")
    cv.add_argument("pack", nargs="?", default=DEFAULT_PACK, help=f"pack directory (default: {DEFAULT_PACK})")
    cv.add_argument("--plot", help="write a heat-map PNG here (needs matplotlib: pip install 'ctsgen[plot]')")
    cv.set_defaults(func=cmd_coverage)
