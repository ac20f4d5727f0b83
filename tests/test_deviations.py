"""Expected driver deviations (ctsgen.mutants.deviations): the same inputs, the expectation under the mutant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings, strategies as st

from ctsgen.core.shader import ShaderVariant
from ctsgen.mutants.deviations import DeviationError, data_under, expected_under, reaching
from ctsgen.families import families, get_family
from ctsgen.core.family import CaseData, FamilySpec, StrategyOptions
from ctsgen.errors import UnknownNameError
from ctsgen.core.mutant import Mutant
from ctsgen.mutants.catalogue import get_mutant
from ctsgen.toolchain.spirv_patch import OPCODES, opcodes
from ctsgen.toolchain.variants import compile_variant

FIND = settings(max_examples=200, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))

#: A value the toy family's data reads at call time, so a mutant can change it.
SIZE = 4


@dataclass(frozen=True)
class Toy:
    """A case whose input size follows SIZE (as a tensor's extent follows its strides)."""

    family: ClassVar[str] = "toy"

    def name(self) -> str:
        return "toy.case"

    def data(self) -> CaseData:
        n = SIZE
        return CaseData(np.zeros(1, np.uint32), [np.arange(n, dtype=np.float32), np.zeros(n, np.float32)],
                        [None, np.arange(n, dtype=np.float32) * 2])


def _toy_family(expectation: Any = None) -> FamilySpec:
    return FamilySpec(name="toy", case_type=Toy, variant_type=None, strata_fn=list, variants_fn=None,
                      cases_for_fn=None, expectation=expectation)


@pytest.fixture
def size_mutant(monkeypatch: pytest.MonkeyPatch) -> str:
    import ctsgen.mutants.catalogue as mutants

    m = Mutant("toy-size-5", "toy", "SIZE is 5", lambda: {f"{__name__}:SIZE": 5})
    monkeypatch.setattr(mutants, "catalogue", lambda: {m.name: m})
    return m.name


def test_without_deviations_the_data_is_returned_as_it_is() -> None:
    d = Toy().data()
    assert expected_under(_toy_family(), Toy(), d, ()) is d


def test_a_family_without_an_expectation_whose_inputs_move_is_told_to_declare_one(size_mutant: str) -> None:
    with pytest.raises(DeviationError, match=r"changes the inputs of toy case toy.case -> declare "
                                             r"FamilySpec.expectation"):
        expected_under(_toy_family(), Toy(), Toy().data(), (size_mutant,))


def test_the_expectation_runs_under_the_mutant_on_the_given_inputs(size_mutant: str) -> None:
    seen: list[int] = []

    def expectation(case: Toy, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
        seen.append(SIZE)
        initial[0][:] = -1  # a copy: the caller's inputs stay as they were
        return [None, np.arange(4, dtype=np.float32) * SIZE]

    d = Toy().data()
    out = expected_under(_toy_family(expectation), Toy(), d, (size_mutant,))
    assert seen == [5] and SIZE == 4  # applied during the call, restored after
    assert out.initial is d.initial and np.array_equal(d.initial[0], np.arange(4))
    assert out.expected[0] is None and np.array_equal(out.expected[1], np.arange(4) * 5)


def test_an_expectation_of_another_size_is_refused(size_mutant: str) -> None:
    def expectation(case: Toy, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
        return [None, np.zeros(SIZE, np.float32)]

    with pytest.raises(DeviationError, match="buffer 1 expects 4 x float32, the deviated oracle gave 5 x float32"):
        expected_under(_toy_family(expectation), Toy(), Toy().data(), (size_mutant,))


def test_an_unknown_deviation_names_the_catalogue() -> None:
    with pytest.raises(UnknownNameError, match="unknown mutant 'nope'"):
        expected_under(_toy_family(), Toy(), Toy().data(), ("nope",))


@pytest.mark.slow
@pytest.mark.parametrize("family", ["tensor-layout", "tensor-view", "decode"])
def test_a_blocked_load_keeps_its_spec_inputs_and_moves_its_expectation(family: str) -> None:
    """setdimension-floor on a load with a blockSize, default strides and a layoutDimension that is
    not a multiple of its blockSize: the deviated expectation differs from the spec's on the
    spec's own input tensor (the deviated extent is smaller, so data() under the mutant would
    have drawn a shorter one)."""
    fam = get_family(family)

    def blocked(c: Any) -> bool:
        lc = getattr(c, "layout_case", c)
        if lc.blockSize is None or lc.stride is not None or lc.shader.operation.value != "load":
            return False
        d = c.data()
        return not np.array_equal(expected_under(fam, c, d, ("setdimension-floor",)).expected[1], d.expected[1])

    c = find(fam.cases(StrategyOptions()), blocked, settings=FIND)
    d = c.data()
    out = expected_under(fam, c, d, ("setdimension-floor",))
    assert out.initial is d.initial and out.params is d.params
    with get_mutant("setdimension-floor").applied():
        assert c.data().initial[0].size < d.initial[0].size  # what the old fuzz loop dispatched instead


@pytest.mark.slow
def test_a_family_the_deviation_does_not_touch_keeps_its_expectation() -> None:
    fam = get_family("cm2-gemm")
    c = find(fam.cases(StrategyOptions()), lambda c: True, settings=FIND)
    d = c.data()
    out = expected_under(fam, c, d, ("setdimension-floor",))
    assert all((a is None and b is None) or np.array_equal(a, b) for a, b in zip(out.expected, d.expected))


def double(x: np.ndarray) -> np.ndarray:
    """What the Scaled toy case's oracle calls, when it scales (a mutant's target)."""
    return x * 2


DATA_CALLS: list[str] = []


@dataclass(frozen=True)
class Scaled:
    """A case whose expectation calls :func:`double` only when ``scales``."""

    family: ClassVar[str] = "toy"
    scales: bool

    def name(self) -> str:
        return f"toy.scaled_{self.scales}"

    def data(self) -> CaseData:
        DATA_CALLS.append(self.name())
        x = np.arange(4, dtype=np.float32)
        return CaseData(np.zeros(1, np.uint32), [x, np.zeros(4, np.float32)], [None, double(x) if self.scales else x])


@pytest.fixture
def triple_mutant(monkeypatch: pytest.MonkeyPatch) -> str:
    import ctsgen.mutants.catalogue as mutants

    m = Mutant("toy-triple", "toy", "double triples", lambda: {f"{__name__}:double": lambda x: x * 3})
    monkeypatch.setattr(mutants, "catalogue", lambda: {m.name: m})
    return m.name


def test_data_under_recomputes_only_the_cases_that_reach_the_deviation(triple_mutant: str) -> None:
    DATA_CALLS.clear()
    cases = [Scaled(False), Scaled(True), Scaled(False)]
    out = data_under(_toy_family(), cases, (triple_mutant,))
    assert DATA_CALLS == ["toy.scaled_False", "toy.scaled_True", "toy.scaled_False", "toy.scaled_True"]
    assert [list(d.expected[1]) for d in out] == [[0, 1, 2, 3], [0, 3, 6, 9], [0, 1, 2, 3]]
    assert double(np.ones(1))[0] == 2  # the forwarders are gone


def test_data_under_recomputes_every_case_when_a_target_is_not_a_function(size_mutant: str) -> None:
    DATA_CALLS.clear()
    data_under(_toy_family(), [Scaled(False)], (size_mutant,))
    assert DATA_CALLS == ["toy.scaled_False"] * 2


@pytest.mark.parametrize("family, deviation", [
    ("coopvec-elementwise", "setdimension-floor"), ("cm2-gemm", "setdimension-floor"),
    ("coopvec", "setdimension-floor"), ("coopvec", "coopvec-bias-ignored"),
    ("tensor-layout", "setdimension-floor"), ("cm2-reduce", "reduce-2x2-wrong-quad")])
@settings(max_examples=30, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_data_under_gives_what_expected_under_gives(family: str, deviation: str, data: st.DataObject) -> None:
    fam = get_family(family)
    c = data.draw(fam.cases(StrategyOptions()))
    (got,) = data_under(fam, [c], (deviation,))
    want = expected_under(fam, c, c.data(), (deviation,))
    for a, b in zip([got.params, *got.initial, *got.expected, *(got.tolerance or [])],
                    [want.params, *want.initial, *want.expected, *(want.tolerance or [])]):
        assert (a is None and b is None) or (a.dtype == b.dtype and a.shape == b.shape
                                             and a.tobytes() == b.tobytes()), c.name()


def test_fuzz_keeps_its_deviation_check_per_family() -> None:
    """FuzzOptions with an unknown deviation fail when the Fuzzer is made, in one line."""
    from ctsgen.backends.reference import ReferenceBackend
    from ctsgen.fuzz.loop import Fuzzer, FuzzOptions

    with pytest.raises(UnknownNameError):
        Fuzzer(ReferenceBackend(), FuzzOptions(database=None, expect_deviations=("nope",)))



FLOOR = "setdimension-floor"


@pytest.mark.parametrize("family", sorted(families()))
@settings(max_examples=6, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_module_without_the_deviations_instructions_gets_the_spec_expectation(
        family: str, data: st.DataObject, session_spirv_cache: Any) -> None:
    """The gate (Mutant.instructions, deviations.reaching) only skips work: where a variant's
    module lacks OpTensorLayoutSetDimensionNV or OpTensorLayoutSetBlockSizeNV, the oracle
    recomputed under setdimension-floor (no gate applied) gives the spec's expectation anyway."""
    fam = get_family(family)
    v = data.draw(fam.variants(StrategyOptions()))
    sv = compile_variant(v, family, validation="if-installed", validator=fam.validator)
    c = data.draw(fam.cases_for(v, StrategyOptions()))
    d = c.data()
    if reaching((FLOOR,), sv):
        return  # the module can show the deviation: the test below and test_data_under's check it
    full = expected_under(fam, c, d, (FLOOR,))
    assert all((a is None and b is None) or np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
               for a, b in zip(full.expected, d.expected))


def test_cm2_gemm_sets_dimensions_without_block_sizes_so_the_floor_deviation_cannot_reach_it(
        session_spirv_cache: Any) -> None:
    """cm2-gemm's layouts set a dimension (the instruction setdimension-floor changes) and
    never a block size, which alone makes floor and ceiling differ: its cases, 0.85 ms each on
    the H100 to recompute, are judged against the spec's expectation as they are."""
    fam = get_family("cm2-gemm")
    v = find(fam.variants(StrategyOptions()), lambda v: True, settings=FIND)
    sv = compile_variant(v, "cm2-gemm", validation="if-installed")
    present = opcodes(sv.spirv)
    assert OPCODES["OpTensorLayoutSetDimensionNV"] in present
    assert OPCODES["OpTensorLayoutSetBlockSizeNV"] not in present
    assert reaching((FLOOR,), sv) == ()


@pytest.mark.slow
def test_a_module_with_both_instructions_still_gets_the_deviated_expectation(session_spirv_cache: Any) -> None:
    fam = get_family("tensor-layout")

    def moved(c: Any) -> bool:
        d = c.data()
        return not np.array_equal(expected_under(fam, c, d, (FLOOR,)).expected[1], d.expected[1])

    c = find(fam.cases(StrategyOptions()), moved, settings=FIND)
    d = c.data()
    sv = compile_variant(c.variant(), "tensor-layout", validation="if-installed")
    assert reaching((FLOOR,), sv) == (FLOOR,)
    assert not np.array_equal(expected_under(fam, c, d, reaching((FLOOR,), sv)).expected[1], d.expected[1])


def test_a_variant_without_spirv_can_show_every_deviation() -> None:
    """A backend that needs no SPIR-V (the reference backend's own batches) gives no module to
    read, so no deviation is skipped."""
    sv = ShaderVariant("v", b"", 1, ())
    assert reaching((FLOOR, "set-block-size-ignored"), sv) == (FLOOR, "set-block-size-ignored")


def test_every_mutants_instructions_are_known_opcodes() -> None:
    from ctsgen.mutants.catalogue import catalogue

    unknown = {(m.name, i) for m in catalogue().values() for i in m.instructions if i not in OPCODES}
    assert not unknown
