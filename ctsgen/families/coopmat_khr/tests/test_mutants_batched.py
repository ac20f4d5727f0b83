"""A coopmat-khr mutant is judged by its own expected deviation the same batched or alone.

The mutant backend runs a whole batch (every case's data in one buffer per binding); the deviation's
oracle (docs/spec-decisions.md, "expected-deviation") computes each case on its own inputs. A case's
loads therefore see its own region of each buffer only (KhrVariant.execute), so a faulty load that
addresses past that region (a ColumnMajor load read as RowMajor, of a matrix with more rows than
columns) reads the same memory in both.
"""

from __future__ import annotations

import pytest

from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.execute.run import drawn_cases, run_cases
from ctsgen.families import get_family
from ctsgen.families.coopmat_khr.mutants import MUTANTS
from ctsgen.families.coopmat_khr.operation import Op
from ctsgen.model.types import ComponentType
from ctsgen.mutants.backend import MutantBackend
from ctsgen.mutants.deviations import moved, spec_and_under
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.variants import compile_variant

FAMILY = get_family("coopmat-khr")
#: variants drawn per mutant and cases per variant (one batch of each variant); with these, seed 0
#: reaches a ColumnMajor load of a matrix with more rows than columns, the case that failed batched.
VARIANTS, CASES = 8, 4
#: the variants each mutant's semantics reach (its ``killed_by``), pinned where a random variant rarely is one
PINNED: dict[str, dict[str, object]] = {
    "khr-sdiv-floors": {"op": Op.div, "component": ComponentType.sint32},
    "khr-muladd-a-zero-extended": {"op": Op.muladd, "component": ComponentType.sint32},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.name for m in MUTANTS])
def test_a_batch_on_the_mutant_backend_passes_under_the_mutants_own_deviation(name: str) -> None:
    backend = MutantBackend(name)
    options = StrategyOptions()
    deviated_cases = 0
    try:
        for k, variant in enumerate(draw_examples(FAMILY.variants(options, **PINNED.get(name, {})), VARIANTS, 0)):
            cases = draw_examples(FAMILY.cases_for(variant, options), CASES, k)
            spec, deviated = spec_and_under(FAMILY, cases, (name,))
            deviated_cases += sum(moved(s, d) for s, d in zip(spec, deviated))
            results = run_cases(backend, compile_variant(variant, FAMILY.name), drawn_cases(cases, deviated),
                                60).results
            failed = [(r.name, r.detail) for r in results if r.status is not Status.Pass]
            assert not failed, f"{name}, batch of {len(cases)}: {failed}"
    finally:
        backend.close()
    assert deviated_cases, f"no drawn case shows {name}: draw more variants"
