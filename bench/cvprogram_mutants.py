"""The coopvec-program composition mutants: their test budgets, and what the single-operation
coopvec families see of them (docs/mutation.md, "Composition mutants (family coopvec-program)").

1. Examples to kill each mutant by fuzzing coopvec-program, seeds 0-3, and the budget by
   bench/mutant_kill_budgets.py's rule (10 x the mean, rounded up to 50, at least 150), the
   numbers the mutants' ``kill_budget`` carry (ctsgen/families/coopvec_program/mutants.py).
2. With ``--single-op``: each mutant fuzzed against coopvec and coopvec-elementwise for those
   families' largest own budgets (seed 0); a composition mutant must survive them.

    python bench/cvprogram_mutants.py [--seeds 4] [--max-examples 1500] [--single-op]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from mutant_kill_budgets import budget, examples_to_kill  # noqa: E402

from ctsgen.backends.mutant import MutantBackend  # noqa: E402
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions  # noqa: E402
from ctsgen.mutants import catalogue  # noqa: E402

#: the single-operation families and the largest kill budget of their own mutants when measured
SINGLE_OP = {"coopvec": 1150, "coopvec-elementwise": 1500}


def survives(name: str, family: str, max_examples: int) -> bool:
    backend = MutantBackend(name)
    try:
        report = Fuzzer(backend, FuzzOptions(families=(family,), max_examples=max_examples, seed=0,
                                             database=None, shrink_time_s=0.1)).run()
    finally:
        backend.close()
    return report.case is None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--max-examples", type=int, default=1500)
    ap.add_argument("--single-op", action="store_true", help="also fuzz the single-operation families")
    args = ap.parse_args()
    names = sorted(n for n, m in catalogue().items() if m.family == "coopvec-program")
    cols = [f"{f}, {b}" for f, b in SINGLE_OP.items()] if args.single_op else []
    print("| mutant | examples to kill (seeds) | budget |" + "".join(f" {c} |" for c in cols))
    print("|---|---|---|" + "---|" * len(cols))
    for name in names:
        firsts = [examples_to_kill(name, s, args.max_examples) for s in range(args.seeds)]
        mean = sum(f or args.max_examples for f in firsts) / len(firsts)
        row = f"| `{name}` | {', '.join(str(f) if f else f'>{args.max_examples}' for f in firsts)} | {budget(mean)} |"
        if args.single_op:
            row += "".join(f" {'survives' if survives(name, f, b) else 'killed'} |" for f, b in SINGLE_OP.items())
        print(row, flush=True)


if __name__ == "__main__":
    main()
