"""How much coopvec-program's float domain sees (docs/spec-decisions.md "program-float-domain").

Draws a default sample of cases (the fuzzer's distribution), prints the share in each data domain,
then for each perturbation of the chain interpreter the float-domain cases whose output it changes,
those whose verdict (within the propagated bound) it fails, and the largest |error| / bound:
every coopvec-program composition mutant, and two small numeric faults that are not mutants:
per-product float16 accumulation in every MatMulAdd (a rounding after each product instead of each
16) and a MatMulAdd after another layer whose bias is scaled by 1 - 2^-8.

    python bench/cvprogram_float_sensitivity.py [--cases 600] [--seed 7]
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np

from ctsgen.families.base import StrategyOptions
from ctsgen.families.coopvec_program import FAMILY
from ctsgen.families.coopvec_program import oracle as program_oracle
from ctsgen.mutants import catalogue
from ctsgen.oracle.numeric import accumulate_blocks_f16
from ctsgen.execute.judge import judge_buffer
from ctsgen.strategies.sampling import draw_examples


@contextmanager
def replaced(fn: Callable[[Any, int], np.ndarray]) -> Iterator[None]:
    """eval_matmuladd replaced by ``fn(original, run, i)``."""
    original = program_oracle.eval_matmuladd
    program_oracle.eval_matmuladd = lambda run, i: fn(original, run, i)
    try:
        yield
    finally:
        program_oracle.eval_matmuladd = original


def per_product_f16(original: Callable, run: Any, i: int) -> np.ndarray:
    L = run.program.nodes[i].layer
    x = program_oracle.matmul_oracle.convert_input(run.arg(i), L.inputType, L.inputInterpretation)
    w, b = program_oracle.layer_operands(run, i)
    return accumulate_blocks_f16(x, w, b, 1).astype(L.resultType.dtype)


def chained_bias_scaled(original: Callable, run: Any, i: int) -> np.ndarray:
    if i == run.program.layer_nodes()[0]:
        return original(run, i)
    L = run.program.nodes[i].layer
    x = program_oracle.matmul_oracle.convert_input(run.arg(i), L.inputType, L.inputInterpretation)
    w, b = program_oracle.layer_operands(run, i)
    return program_oracle.matmul_oracle.matmul(x, w, b * (1 - 2.0**-8), L.resultType)


def measure(cases: list, applied: Callable[[], AbstractContextManager]) -> tuple[int, int, float]:
    changed = killed = 0
    worst = 0.0
    for c in cases:
        d = c.data()
        k = c.shader.program.buffer_index("output")
        bufs = [b.copy() for b in d.initial]
        with applied(), np.errstate(all="ignore"):
            c.variant().execute(d.params[None, :], np.zeros((1, len(bufs)), np.int64), bufs)
        j = judge_buffer(bufs[k], d.expected[k], c.compare_rule().to_json(), d.tolerance[k])
        changed += not np.array_equal(bufs[k], d.expected[k])
        killed += j.bad.size > 0
        worst = max(worst, j.max_ratio)
    return changed, killed, worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    sample = draw_examples(FAMILY.cases(StrategyOptions()), args.cases, args.seed)
    print(f"domains of {len(sample)} drawn cases: {dict(Counter(c.domain for c in sample))}")
    floats = [c for c in sample if c.domain == "float"]
    faults = {n: m.applied for n, m in sorted(catalogue().items()) if m.family == "coopvec-program"}
    faults["per-product float16 accumulation"] = lambda: replaced(per_product_f16)
    faults["chained bias x (1 - 2^-8)"] = lambda: replaced(chained_bias_scaled)
    print(f"| fault | float cases changed | failed | largest error / bound |\n|---|---|---|---|")
    for name, applied in faults.items():
        changed, killed, worst = measure(floats, applied)
        print(f"| {name} | {changed} of {len(floats)} | {killed} | {worst:.3g} |", flush=True)


if __name__ == "__main__":
    main()
