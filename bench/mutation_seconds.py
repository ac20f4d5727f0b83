"""Seconds to kill, for comparing two checkouts: the median seconds (not examples) from a fuzz
run's start to its first kill of each mutant.

    python bench/mutation_seconds.py [--mutant NAME ...] [--seeds 0 1 2] [--max-examples 300]

Run it with the same arguments from each checkout (PYTHONPATH=<checkout>); it uses only what
every version of the fuzzer has (``Fuzzer.on_failure``), so an older commit needs no patch. Per
mutant and seed: the wall seconds from the fuzz run's start to its first failing verdict (the
mutant backend, supervised, as ``ctsgen bench mutation`` runs it), the examples, and the median
over the seeds; a seed that does not kill within the budget counts as missing. Also the smallest
repro over the seeds (elements over all buffers of the shrunk case, as the bench counts them).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time

from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.supervise import SupervisedBackend
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.mutants.catalogue import get_mutant

#: one or two mutants per single-operation family, the program families' own excluded (they
#: did not exist at the baseline)
DEFAULT = ["repeat-as-clamp-to-edge", "mirror-period-off-by-one", "decode-operands-swapped",
           "gemm-alpha-scales-c", "coopvec-last-product-dropped", "reduce-column-reads-transposed",
           "convert-int-narrowing-saturates", "coopvec-elementwise-vts-drops-last"]


def seconds_to_kill(name: str, seed: int, max_examples: int) -> tuple[float | None, int | None, int | None]:
    mutant = get_mutant(name)
    backend = SupervisedBackend(functools.partial(MutantBackend, name), name=f"mutant:{name}")
    found: list[float] = []
    try:
        fuzzer = Fuzzer(backend, FuzzOptions(families=(mutant.family,), max_examples=max_examples, seed=seed,
                                             database=None))
        start = time.monotonic()
        fuzzer.on_failure = lambda failure: found.append(time.monotonic() - start)
        report = fuzzer.run()
    finally:
        backend.close()
    if not found:
        return None, None, None
    size = int(sum(a.size for a in report.case.data().initial))  # the repro's elements, as the bench counts them
    return found[0], report.first_failure_example, size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutant", action="append", help="mutants (default: eight across the families)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--max-examples", type=int, default=300)
    args = ap.parse_args()
    print("| mutant | seconds per seed | examples per seed | median seconds | smallest repro |\n"
          "|---|---|---|---:|---:|")
    for name in args.mutant or DEFAULT:
        runs = [seconds_to_kill(name, s, args.max_examples) for s in args.seeds]
        secs = [s for s, _, _ in runs if s is not None]
        sizes = [n for _, _, n in runs if n is not None]
        print(f"| {name} | {', '.join('-' if s is None else f'{s:.2f}' for s, _, _ in runs)} | "
              f"{', '.join('-' if e is None else str(e) for _, e, _ in runs)} | "
              f"{statistics.median(secs):.2f} | {min(sizes)} |" if secs else f"| {name} | - | - | - | - |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
