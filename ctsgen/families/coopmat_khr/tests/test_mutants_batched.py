"""A coopmat-khr mutant is judged by its own expected deviation the same batched or alone.

A case's loads see its own region of each buffer only (KhrVariant.execute), so a faulty load that
addresses past that region (a ColumnMajor load read as RowMajor, of a matrix with more rows than
columns) reads the same memory on the mutant backend's batch as in the deviation's oracle.
"""

from __future__ import annotations

import pytest

from ctsgen.families.coopmat_khr.mutants import MUTANTS
from ctsgen.families.coopmat_khr.operation import Op
from ctsgen.model.types import ComponentType
from tests.deviation_batches import judged_under_own_deviation

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
    failed, deviated = judged_under_own_deviation("coopmat-khr", name, VARIANTS, CASES, **PINNED.get(name, {}))
    assert not failed, f"{name}: {failed}"
    assert deviated, f"no drawn case shows {name}: draw more variants"
