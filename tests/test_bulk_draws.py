"""Cases drawn in bulk (FamilySpec.bulk_draws, ctsgen.strategies.bulk): the family's own strategy
walked without Hypothesis, so valid by the same bounds; each case's recorded choices are the ones
Hypothesis would have made for it, and a failing bulk case is replayed and shrunk from them to the
same smallest case as the same failure drawn by Hypothesis."""

from __future__ import annotations

from random import Random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.internal.conjecture.data import ConjectureData

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.device.profile import ProfileLacksError, drawing_profile
from ctsgen.errors import BuildTimeout
from ctsgen.families import families, get_family
from ctsgen.execute.run import drawn, run_cases
from ctsgen.fuzz import loop
from ctsgen.fuzz.loop import DrawnBatch, Fuzzer, FuzzOptions
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.strategies.bulk import BulkDraw
from ctsgen.strategies.sampling import draw_examples

BULK = sorted(name for name, f in families().items() if f.bulk_draws)
OPTIONS = StrategyOptions(profile=drawing_profile(ReferenceBackend().profile()))


def test_the_costliest_single_operation_families_draw_in_bulk() -> None:
    assert {"tensor-layout", "cm2-gemm", "tensor-view"} <= set(BULK)
    # each killed every mutant of its family in no more examples with bulk draws than without
    # (docs/validation.md, "Host cost per case (issue 43)")
    assert {"coopmat-khr", "cm2-elementwise", "decode"} <= set(BULK)


def _replayed(strategy: st.SearchStrategy, choices: list) -> object:
    """What Hypothesis draws from ``strategy`` given exactly ``choices``."""
    data = ConjectureData.for_choices(choices)
    with BuildContext(data, wrapped_test=None):
        value = data.draw(strategy)
    assert len(data.choices) == len(choices)  # every recorded choice consumed, none invented
    return value


def _stratum_variants(family: str) -> list:
    """A variant of each stratum of ``family`` the profile draws: every path of its case strategy."""
    fam, out = get_family(family), []
    for stratum in fam.strata():
        try:
            out += draw_examples(fam.variants(OPTIONS, **stratum), 1, 0)
        except ProfileLacksError:
            continue
    return out


@pytest.mark.parametrize("family", BULK)
def test_bulk_cases_of_every_stratum_are_the_cases_hypothesis_draws_from_their_choices(family: str) -> None:
    fam = get_family(family)
    variants = _stratum_variants(family)
    assert len(variants) >= len(fam.strata()) // 2
    for i, variant in enumerate(variants):
        strategy, walk = fam.cases_for(variant, OPTIONS), BulkDraw(i)
        for _ in range(8):
            walk.start()
            case = walk(strategy)  # the case's own __post_init__ validated it
            assert case.variant() == variant
            assert _replayed(strategy, walk.choices).name() == case.name()


@pytest.mark.parametrize("family", BULK)
def test_bulk_cases_pass_on_the_reference(family: str) -> None:
    fam = get_family(family)
    fuzzer = Fuzzer(ReferenceBackend(), FuzzOptions(families=(family,), database=None))
    for i, variant in enumerate(_stratum_variants(family)[::7]):
        strategy, walk = fam.cases_for(variant, OPTIONS), BulkDraw(i)
        cases = [walk(strategy) for _ in range(12)]
        results = run_cases(fuzzer.backend, fuzzer.shader(variant, family), [drawn(c, c.data()) for c in cases],
                            60.0).results
        assert [r.status.value for r in results] == ["Pass"] * len(cases)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), lo=st.integers(-2**40, 2**40), width=st.integers(0, 2**33))
def test_a_bulk_integer_stays_within_its_bounds_and_reaches_both(seed: int, lo: int, width: int) -> None:
    walk = BulkDraw(seed)
    drawn = [walk.integer(lo, lo + width) for _ in range(400)]
    assert all(lo <= v <= lo + width for v in drawn) and walk.choices == drawn
    assert {lo, lo + width} <= set(drawn)


LAYOUT_VARIANTS = draw_examples(get_family("tensor-layout").variants(OPTIONS), 20, 5)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**64 - 1), which=st.integers(0, len(LAYOUT_VARIANTS) - 1))
def test_tensor_layout_bulk_cases_over_seeds_round_trip_through_hypothesis(seed: int, which: int) -> None:
    variant = LAYOUT_VARIANTS[which]
    strategy, walk = get_family("tensor-layout").cases_for(variant, OPTIONS), BulkDraw(seed)
    for _ in range(20):
        walk.start()
        case = walk(strategy)
        assert _replayed(strategy, walk.choices) == case


@pytest.mark.parametrize("strategy", [st.floats(0, 1), st.lists(st.integers(0, 3)), st.integers(0, 3).filter(bool),
                                      st.sampled_from([1, 2]).map(str), st.integers()])
def test_a_strategy_kind_the_bulk_draw_does_not_walk_is_refused_by_name(strategy: st.SearchStrategy) -> None:
    with pytest.raises(TypeError, match="bulk draw"):
        BulkDraw(0)(strategy)


def test_a_family_without_bulk_draws_draws_every_case_with_hypothesis() -> None:
    assert not get_family("coopvec-elementwise").bulk_draws  # its operands are floats: no walk draws them
    seen: list = []

    class Recording(Fuzzer):
        def check(self, batch) -> None:
            seen.append(batch[1])

    Recording(ReferenceBackend(), FuzzOptions(families=("coopvec-elementwise",), max_examples=15, database=None)).run()
    assert seen and not any(isinstance(b, DrawnBatch) and b.bulk for b in seen)


def test_a_bulk_families_batches_hold_bulk_cases_after_the_full_ones() -> None:
    seen: list = []

    class Recording(Fuzzer):
        def check(self, batch) -> None:
            seen.append(batch[1])

    Recording(ReferenceBackend(), FuzzOptions(max_examples=30, database=None)).run()
    big = [b for b in seen if len(b) > loop.FULL_CASES]
    assert big and all(isinstance(b, DrawnBatch) for b in big)
    for b in big:
        assert len(b.bulk) == len(b) - loop.FULL_CASES
        assert all(b.replay(c) is None for c in b[:loop.FULL_CASES])
    sizes = [len(b) for b in seen]
    assert 15 <= np.mean(sizes) <= 120  # about the ~50 cases a batch has when every case is drawn by Hypothesis


def test_a_bulk_batch_overruns_where_the_batch_drawn_in_full_would() -> None:
    """Hypothesis's early generation caps a new example's choices (five times its prefix's simplest
    continuation, a one-case batch): a batch drawn in full past the cap overruns, is not run and
    is not mutated. A bulk batch counts its bulk cases' choices and each unit's "another?" against
    the cap: it ran and was mutated instead, and khr-sdiv-floors (coopmat-khr) took 174 examples to
    kill against 47 (docs/validation.md, "Host cost per case (issue 43)"). A replay is never cut."""
    from hypothesis.errors import StopTest
    from hypothesis.internal.conjecture.data import Status

    batches = loop._case_batch(st.tuples(st.integers(0, 9), st.integers(0, 99), st.booleans()), 1, 200, bulk=True)
    cap, overruns, kept = 60, 0, 0
    for s in range(60):
        data = ConjectureData(random=Random(s), max_choices=cap)
        try:
            with BuildContext(data, wrapped_test=None):
                (batch,) = data.draw(batches)
        except StopTest:
            assert data.status is Status.OVERRUN
            overruns += 1
            continue
        if isinstance(batch, DrawnBatch) and batch.bulk:
            kept += 1  # its Hypothesis choices (the seed's among them) and its units' in place of the seed
            assert len(data.choices) - 1 + sum(len(c) + 1 for c in batch.bulk) <= cap
    assert overruns >= 10 and kept >= 3
    replayed = 0
    for s in range(30):  # a long batch uncapped, then replayed under the cap of its own choices: the same batch
        data = ConjectureData(random=Random(s))
        with BuildContext(data, wrapped_test=None):
            (batch,) = data.draw(batches)
        if len(batch) > 20:
            again = ConjectureData.for_choices(data.choices)
            with BuildContext(again, wrapped_test=None):
                assert again.draw(batches) == [batch]
            replayed += 1
    assert replayed >= 3


def _planted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tensor-layout load of two or more axes whose last side is at least 30 and that sets a
    clamp value fails: its expected output has a bit flipped. (Loads only: from a store the shrinker,
    Hypothesis's as ever, may stop at a store, a local minimum whichever way the failure was drawn.)"""
    data = TensorLayoutCase.data

    def wrong(self: TensorLayoutCase):
        d = data(self)
        if self.shader.operation.value == "load" and self.shader.Dim >= 2 and self.layoutDimension[-1] >= 30 \
                and self.clampValue is not None:
            expected = d.expected[1].copy()
            expected.view(np.uint8)[0] ^= 1
            d.expected = [d.expected[0], expected]
        return d

    monkeypatch.setattr(TensorLayoutCase, "data", wrong)


class _Replays(Fuzzer):
    """Counts the rounds that replay a bulk case's choices."""

    replays = 0

    def _one_round(self, round_seed: int, use_database: bool = True, replay: tuple | None = None) -> None:
        self.replays += replay is not None
        super()._one_round(round_seed, use_database, replay)


def _shrunk(seed: int) -> tuple[Fuzzer, object]:
    f = _Replays(ReferenceBackend(), FuzzOptions(max_examples=200, seed=seed, database=None))
    report = f.run()
    assert report.case is not None and report.result.status.is_failure
    return f, report.case


@pytest.mark.slow
def test_a_planted_failure_in_a_bulk_case_shrinks_to_the_case_hypothesis_shrinks_it_to(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _planted(monkeypatch)
    for seed in range(10):  # the first seed whose first failure is a bulk case
        bulk, from_bulk = _shrunk(seed)
        if bulk.replays:
            break
    assert bulk.replays == 1  # found in a bulk case, re-expressed as a Hypothesis example
    monkeypatch.setattr(loop, "FULL_CASES", 10**6)  # every case a Hypothesis draw, as before bulk draws
    full, from_hypothesis = _shrunk(seed)
    assert full.replays == 0
    assert from_bulk == from_hypothesis
    assert from_bulk.layoutDimension == (1, 30) and from_bulk.clampValue == 0 and from_bulk.stride is None


def test_a_bulk_cases_replay_is_the_one_case_batch_of_that_case() -> None:
    """The choices fuzz replays for a failing bulk case (DrawnBatch.replay) draw, through the fuzz
    loop's own batch strategy, the batch of that one case (its family and variant included)."""
    seen: list = []

    class Recording(Fuzzer):
        def check(self, batch) -> None:
            seen.append(batch)

    f = Recording(ReferenceBackend(), FuzzOptions(families=("tensor-layout", "cm2-gemm"), max_examples=20,
                                                  database=None))
    f.run()
    checked = 0
    for variant, cases in seen:
        if isinstance(cases, DrawnBatch) and cases.bulk:
            for case in (cases[-1], cases[loop.FULL_CASES]):
                data = ConjectureData(prefix=cases.replay(case), random=Random(0))
                with BuildContext(data, wrapped_test=None):
                    again, batch = data.draw(f.batches())
                assert again == variant and batch == [case]
                checked += 1
    assert checked >= 4


def test_bulk_cases_run_along_every_route_of_the_run() -> None:
    """``fuzz --routes``: a batch's bulk cases run along each route, as its full ones do."""
    along: list[list] = []

    class Recording(Fuzzer):
        def _along(self, route, variant, cases, inputs, baseline) -> None:  # noqa: ANN001 - Fuzzer's
            along.append(cases)
            super()._along(route, variant, cases, inputs, baseline)

    f = Recording(ReferenceBackend(), FuzzOptions(families=("tensor-layout",), max_examples=12, seed=3,
                                                  database=None, routes=("glslang", "glslang-O1")))
    report = f.run()
    assert report.case is None
    assert report.route_cases["glslang-O1"] == report.route_cases["glslang"] > 0
    assert any(len(cases) > loop.FULL_CASES for cases in along)


class _OverBudget(ReferenceBackend):
    """A build past its budget (``--build-budget``), planted where a dispatch holds bulk cases (more
    than FULL_CASES, a workgroup a case): each case of it is BuildTimeout."""

    runs = 0

    def run(self, dispatch, timeout_s):  # noqa: ANN001, ANN201 - the Backend signature
        self.runs += 1
        if dispatch.workgroups > loop.FULL_CASES:
            raise BuildTimeout(dispatch.variant.id, 0.0, 1.0)
        return super().run(dispatch, timeout_s)


def test_a_build_timeout_of_a_bulk_batch_is_its_first_full_case_and_no_bulk_replay() -> None:
    """A BuildTimeout is the variant's (every case of the batch has it): reported as the batch's first
    case, a Hypothesis draw, so no bulk case is re-expressed and replayed (it would wait out the
    budget again), and no case of it is run again by itself."""
    batches: list = []

    class Counting(_Replays):
        def check(self, batch) -> None:  # noqa: ANN001 - Fuzzer's
            batches.append(batch[1])
            super().check(batch)

    f = Counting(_OverBudget(), FuzzOptions(families=("tensor-layout",), max_examples=30, seed=0, database=None,
                                            min_batch=loop.FULL_CASES + 4, shrink_time_s=5.0))
    report = f.run()
    assert report.result is not None and report.result.status is Status.BuildTimeout
    assert f.replays == 0
    assert any(isinstance(b, DrawnBatch) and b.bulk for b in batches)
    assert f.backend.runs == len(batches)  # one dispatch a batch: none by itself
