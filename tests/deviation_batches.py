"""A family's mutant judged by its own expected deviation in batches of drawn cases (the family tests use it).

The mutant backend runs a whole batch, every case's data in one buffer per binding; the deviation's oracle
(docs/spec-decisions.md, "expected-deviation") computes each case on its own inputs. The two agree only
where a case's reference semantics see its own region of each buffer, never a batch neighbour's data.
"""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.execute.run import drawn_cases, run_cases
from ctsgen.families import get_family
from ctsgen.mutants.backend import MutantBackend
from ctsgen.mutants.deviations import moved, spec_and_under
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.variants import compile_variant


def judged_under_own_deviation(family: str, mutant: str, variants: int, cases: int, **pinned: object
                               ) -> tuple[list[tuple[str, str]], int]:
    """(each case not judged Pass, as (name, detail); how many cases the deviation moved) over ``variants``
    variants of ``family`` drawn with seed 0 (``pinned`` fixes parts of them), each one batch of ``cases``
    of its cases run on ``mutant:MUTANT`` and judged under ``--expect-deviation MUTANT``."""
    spec_family, backend, options = get_family(family), MutantBackend(mutant), StrategyOptions()
    failed, deviated_cases = [], 0
    try:
        for k, variant in enumerate(draw_examples(spec_family.variants(options, **pinned), variants, 0)):
            batch = draw_examples(spec_family.cases_for(variant, options), cases, k)
            spec, deviated = spec_and_under(spec_family, batch, (mutant,))
            deviated_cases += sum(moved(s, d) for s, d in zip(spec, deviated))
            results = run_cases(backend, compile_variant(variant, spec_family.name), drawn_cases(batch, deviated),
                                60).results
            failed += [(r.name, r.detail) for r in results if r.status is not Status.Pass]
    finally:
        backend.close()
    return failed, deviated_cases
