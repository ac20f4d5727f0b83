"""Examples each family mutant needs before the fuzzer kills it, over several seeds, and the
test budget that follows: 10 x the mean, rounded up to 50, at least 150.

A kill is (close to) a geometric trial: each example exposes the fault with some
probability p, so the examples to the first kill average 1/p and the chance of
surviving a budget of 10/p is about e^-10. A budget set this way does not depend
on one Hypothesis version's draw order, as a fixed number of examples does.
Each mutant declares the budget this prints as its ``kill_budget``
(ctsgen/families/<family>/mutants.py).

    python bench/mutant_kill_budgets.py [--seeds 4] [--max-examples 1500] [--family F ...] [--mutant NAME ...]
"""

from __future__ import annotations

import argparse
import functools
import math

from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.supervise import SupervisedBackend
from ctsgen.mutants.catalogue import catalogue


def examples_to_kill(name: str, seed: int, max_examples: int) -> int | None:
    # supervised, as tests/test_mutants_families.py runs it: a mutant that makes the reference raise
    # (a store race it creates) is a kill there, not a crash of this script
    backend = SupervisedBackend(functools.partial(MutantBackend, name), name=f"mutant:{name}")
    try:
        report = Fuzzer(backend, FuzzOptions(families=(catalogue()[name].family,), max_examples=max_examples,
                                             seed=seed, database=None, shrink_time_s=0.1)).run()
    finally:
        backend.close()
    return report.first_failure_example


def budget(mean: float) -> int:
    return max(150, math.ceil(10 * mean / 50) * 50)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--max-examples", type=int, default=1500)
    ap.add_argument("--family", action="append", default=None,
                    help="only this family's mutants (repeatable; default every family but tensor-layout)")
    ap.add_argument("--mutant", action="append", default=None,
                    help="only this mutant (repeatable; default every mutant of the families chosen)")
    args = ap.parse_args()
    keep = (lambda f: f in args.family) if args.family else (lambda f: f != "tensor-layout")
    chosen = [n for n, m in catalogue().items() if keep(m.family) and (not args.mutant or n in args.mutant)]
    unknown = set(args.mutant or ()) - set(catalogue())
    if unknown:
        ap.error(f"unknown mutant {', '.join(sorted(unknown))} -> name one that `ctsgen mutants` lists")
    print("| mutant | examples to kill, per seed | mean | budget |\n|---|---|---|---|")
    for name in sorted(chosen):
        firsts = [examples_to_kill(name, s, args.max_examples) for s in range(args.seeds)]
        mean = sum(f or args.max_examples for f in firsts) / len(firsts)
        print(f"| {name} | {firsts} | {mean:.0f} | {budget(mean)} |", flush=True)


if __name__ == "__main__":
    main()
