"""Every family's catalogued driver bugs are found by the fuzzer within a small budget.

Each mutant below patches one function of a family's reference semantics
(ctsgen/families/<family>/mutants.py); the fuzzer, restricted to that
family, must produce a failing case (and shrink it) within the mutant's
``kill_budget`` (declared beside it; docs/validation.md has the rule). A
mutant the fuzzer cannot kill measures nothing, so a regression here means
either the family's strategy stopped drawing the cases that expose the
fault or the patch no longer reaches the code execute() runs.
"""

from __future__ import annotations

import functools

import pytest

from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.toolchain.routes import DEFAULT_ROUTE
from ctsgen.mutants.backend import MutantBackend
from ctsgen.mutants.catalogue import catalogue
from ctsgen.backends.supervise import SupervisedBackend

#: the tensor-layout mutants are measured by `ctsgen bench mutation` and tests/test_fuzz.py (shrinking)
FUZZED_HERE = sorted(n for n, m in catalogue().items() if m.family != "tensor-layout")


def test_the_catalogue_covers_every_family() -> None:
    mutants = catalogue()
    families = {m.family for m in mutants.values()}
    assert len(mutants) >= 30 and len(families) >= 6
    odd = {n: m.kill_budget for n, m in mutants.items() if m.kill_budget < 150 or m.kill_budget % 50}
    assert not odd, f"{odd}: a kill budget is a multiple of 50 examples, at least 150 (docs/validation.md)"
    for fam in ("tensor-view", "decode", "cm2-reduce", "cm2-elementwise", "cm2-convert", "cm2-gemm", "coopvec"):
        assert sum(m.family == fam for m in mutants.values()) >= (3 if fam == "tensor-view" else
                                                                   2 if fam in ("decode", "coopvec") else 1)


def test_applying_a_mutant_restores_the_original_afterwards() -> None:
    from ctsgen.oracle import addressing
    from ctsgen.ops.coopvec_matrix import CoopVecSignature

    # a module-level name, and a method patched on its class ("module:Class.attr")
    before = (addressing.view_matrix_linear_index, CoopVecSignature.__dict__["read_matrix"])
    with catalogue()["clip-row-col-swapped"].applied():
        assert addressing.view_matrix_linear_index is not before[0]
    with catalogue()["coopvec-e4m3-as-fnuz"].applied():
        assert CoopVecSignature.__dict__["read_matrix"] is not before[1]
    assert (addressing.view_matrix_linear_index, CoopVecSignature.__dict__["read_matrix"]) == before


@pytest.mark.slow
@pytest.mark.parametrize("name", FUZZED_HERE)
def test_the_fuzzer_kills_the_mutant(name: str, session_spirv_cache: object) -> None:
    m = catalogue()[name]
    budget = m.kill_budget
    backend = SupervisedBackend(functools.partial(MutantBackend, name), name=f"mutant:{name}")
    try:
        # finding it is what is measured here; tests/test_fuzz.py checks how far cases shrink
        report = Fuzzer(backend, FuzzOptions(families=(m.family,), max_examples=budget, database=None,
                                             shrink_time_s=0.5, routes=(m.route or DEFAULT_ROUTE,))).run()
    finally:
        backend.close()
    assert report.case is not None, f"{name} ({m.family}) survived {budget} examples"
    assert report.case.family == m.family and report.result.status.value == "Fail"


@pytest.mark.slow
def test_a_deviation_that_shows_along_one_route_is_expected_along_that_route_only(session_spirv_cache: object) -> None:
    """lavapipe-muladd-accumulator shows only in modules that read C's SSA id again (glslang-O1's), not
    in glslang's: a device with it, fuzzed along both routes, gives route findings along glslang-O1, and
    none once the deviation is expected, each route's cases judged by the deviations its own module can
    show (a session along every route on lavapipe judged slang's and spirv-opt's cases by glslang's)."""
    name = "lavapipe-muladd-accumulator"
    found = []
    for expected in ((), (name,)):
        backend = SupervisedBackend(functools.partial(MutantBackend, name), name=f"mutant:{name}")
        try:
            report = Fuzzer(backend, FuzzOptions(families=("coopmat-kernel",), max_examples=150, database=None,
                                                 shrink_time_s=0.5, seed=3, keep_going=True,
                                                 routes=(DEFAULT_ROUTE, "glslang-O1"),
                                                 expect_deviations=expected)).run()
        finally:
            backend.close()
        assert report.case is None  # along glslang the device gives the spec's values
        found.append({b.route for b in report.route_findings.buckets.values()})
    assert found == [{"glslang-O1"}, set()]
