"""``ctsgen bench``: benchmarks (the mutation score)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctsgen.cli.args import check_plot_path
from ctsgen.core.argtypes import nonneg_int, positive_int
from ctsgen.progress import Progress
from ctsgen.mutants.catalogue import catalogue, get_mutant
from ctsgen.fuzz.mutation import markdown, plot, run_bench


def cmd_bench(args: argparse.Namespace) -> int:
    if args.plot:
        check_plot_path(args.plot, "--plot")
    mutants = [get_mutant(n) for n in args.mutant] if args.mutant else list(catalogue().values())
    seeds = list(range(args.seeds))
    rows = run_bench(mutants, seeds, args.max_examples, reference_budget=args.reference_budget,
                     progress=Progress("mutants"))
    command = "ctsgen bench mutation" + (f" --seeds {args.seeds}" if args.seeds != 3 else "") + \
        (f" --max-examples {args.max_examples}" if args.max_examples != 300 else "") + \
        (f" --reference-budget {args.reference_budget}" if args.reference_budget != 3000 else "") + \
        (f" --out {args.out}" if args.out != ".ctsgen/bench/mutation.md" else "") + \
        (f" --plot {args.plot}" if args.plot != ".ctsgen/bench/mutation.png" else "")
    text = markdown(rows, seeds, args.max_examples, command, args.reference_budget)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    not_run = [name for name in catalogue() if name not in {r.mutant for r in rows}]
    if args.plot and plot(rows, Path(args.plot), args.max_examples, not_run):
        print(f"plot: {args.plot}")
    elif args.plot:
        print("no plot: matplotlib is not installed (pip install 'ctsgen[plot]')")
    return 0 if all(r.killed == r.seeds for r in rows) else 1


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    b = sub.add_parser("bench", help="benchmarks")
    bsub = b.add_subparsers(dest="bench", required=True)
    bm = bsub.add_parser("mutation", help="fuzz every mutant; write the mutation-score table")
    bm.add_argument("--seeds", type=positive_int, default=3, help="seeds per mutant (default: 3)")
    bm.add_argument("--max-examples", type=positive_int, default=300, help="fuzz budget per seed (default: 300)")
    bm.add_argument("--mutant", action="append", help="only these mutants (repeatable)")
    bm.add_argument("--out", default=".ctsgen/bench/mutation.md",
                    help="table to write (default: .ctsgen/bench/mutation.md; docs/mutation.md is the tracked one)")
    bm.add_argument("--plot", default=".ctsgen/bench/mutation.png",
                    help="plot to write (needs matplotlib; default: .ctsgen/bench/mutation.png)")
    bm.add_argument("--reference-budget", type=nonneg_int, default=3000,
                    help="examples for the dedicated minimal-case search per mutant; 0 skips it (default: 3000)")
    bm.set_defaults(func=cmd_bench)
