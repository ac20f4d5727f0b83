"""ctsgen's property tests (``ctsgen.given_cases``) as HypoFuzz sees them (docs/hypofuzz.md).

    hypothesis fuzz -n 1 --no-dashboard -- bench/hypofuzz/test_given_cases.py

The backend is the mutant ``CTSGEN_HYPOFUZZ_MUTANT`` (default
``setdimension-floor``) so that there is a bug to find; HypoFuzz cannot
hand a pytest fixture such as ``ctsgen_backend`` to a test, so the backend
is made at import.
"""

from __future__ import annotations

import os

from ctsgen.mutants.backend import MutantBackend
from ctsgen.testing import check_case, given_cases

BACKEND = MutantBackend(os.environ.get("CTSGEN_HYPOFUZZ_MUTANT", "setdimension-floor"))


@given_cases(family="tensor-layout")
def test_tensor_layout(case) -> None:
    result = check_case(BACKEND, case)
    assert not result.status.is_failure, result.detail


@given_cases(family="cm2-gemm")
def test_cm2_gemm(case) -> None:
    result = check_case(BACKEND, case)
    assert not result.status.is_failure, result.detail
