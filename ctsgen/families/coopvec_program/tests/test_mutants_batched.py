"""A coopvec-program mutant is judged by its own expected deviation the same batched or alone.

Each case's program sees its own region of each buffer only (ProgramVariant.execute), so a faulty read
past the case's data (a later MatMulAdd walking its matrix with the first layer's larger MatrixStride)
reads the batch's zero padding, as the deviation's oracle on the case alone reads zeros past its data.
"""

from __future__ import annotations

import pytest

from ctsgen.families.coopvec_program.mutants import MUTANTS
from tests.deviation_batches import judged_under_own_deviation

#: variants drawn per mutant and cases per variant (one batch of each variant)
VARIANTS, CASES = 6, 4


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.name for m in MUTANTS])
def test_a_batch_on_the_mutant_backend_passes_under_the_mutants_own_deviation(name: str) -> None:
    failed, _ = judged_under_own_deviation("coopvec-program", name, VARIANTS, CASES)
    assert not failed, f"{name}: {failed}"
