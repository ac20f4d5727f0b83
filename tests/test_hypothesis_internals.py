"""ctsgen reaches into Hypothesis internals in three places, none with a public equivalent:

* ``ctsgen/strategies/sampling.py`` (``pinned_constants``) empties the pool of constants Hypothesis
  mines from local modules (``providers._get_local_constants``, ``providers.CONSTANTS_CACHE``,
  ``constants_ast.Constants``), so a seed draws the same pack whatever the process imported;
* ``ctsgen/strategies/cached.py`` builds ``IntegersStrategy`` directly, without ``st.integers``'s
  per-call validation, on fuzz's hot path;
* ``ctsgen/fuzz/loop.py`` sets ``_hypothesis_internal_database_key`` on its seeded test, so a rerun
  replays the failures stored for what is fuzzed and on which backend.

They were checked on the Hypothesis versions below (README, "Tested with", and 6.170.17 with the
tests WHAT_TO_CHECK names; pyproject.toml bounds Hypothesis to them). On any other version these tests fail, naming what to check before the range
is widened.
"""

from __future__ import annotations

import hypothesis
import pytest
from hypothesis import Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

#: The oldest and the newest Hypothesis the whole suite ran on with these reaches.
CHECKED = ((6, 155, 2), (6, 170, 17))

WHAT_TO_CHECK = ("run tests/test_pack.py (packs drawn the same whatever is imported), "
                 "tests/test_cached_strategies.py (cached integers draw as st.integers does) and this file on it, "
                 "then widen CHECKED here, the bound in pyproject.toml and README's \"Tested with\"")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def test_hypothesis_is_a_version_the_internals_were_checked_on() -> None:
    oldest, newest = (".".join(map(str, v)) for v in CHECKED)
    assert CHECKED[0] <= _version(hypothesis.__version__) <= CHECKED[1], (
        f"Hypothesis {hypothesis.__version__} is not one ctsgen's reaches into Hypothesis internals were "
        f"checked on ({oldest} to {newest}) -> install one of those, or {WHAT_TO_CHECK}")


def test_the_local_constants_pool_is_where_sampling_replaces_it() -> None:
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    from ctsgen.strategies.sampling import pinned_constants

    assert callable(getattr(providers, "_get_local_constants", None)), WHAT_TO_CHECK
    assert hasattr(providers.CONSTANTS_CACHE, "cache"), WHAT_TO_CHECK
    original = providers._get_local_constants
    with pinned_constants():
        assert providers._get_local_constants() == Constants()
    assert providers._get_local_constants is original


def test_cached_integers_are_hypothesis_integers_strategy() -> None:
    from hypothesis.strategies._internal.numbers import IntegersStrategy

    from ctsgen.strategies import cached

    assert cached.IntegersStrategy is IntegersStrategy, WHAT_TO_CHECK
    assert isinstance(st.integers(0, 3).wrapped_strategy, IntegersStrategy), WHAT_TO_CHECK


def test_a_seeded_tests_database_key_is_the_one_fuzz_sets() -> None:
    db = InMemoryExampleDatabase()

    @settings(database=db, max_examples=20, phases=[Phase.generate, Phase.shrink], deadline=None)
    @seed(0)
    @given(st.integers())
    def fails_above_4(x: int) -> None:
        assert x < 5

    fails_above_4._hypothesis_internal_database_key = b"ctsgen-fuzz-key"
    with pytest.raises(AssertionError):
        fails_above_4()
    assert b"ctsgen-fuzz-key" in db.data, WHAT_TO_CHECK


def test_a_choice_sequence_in_the_secondary_corpus_is_replayed_and_shrunk() -> None:
    """fuzz replays a bulk-drawn failing case (ctsgen/fuzz/loop.py, ``Reexpress``) by saving its
    choices under the test's key + ``.secondary`` with ``choices_to_bytes``: Hypothesis replays them
    first and shrinks them (one found exactly under the primary key it would report unshrunk)."""
    from hypothesis.database import choices_to_bytes

    db = InMemoryExampleDatabase()
    db.save(b"k.secondary", choices_to_bytes((3, 907)))
    seen: list[tuple[int, int]] = []

    @settings(database=db, max_examples=10, phases=[Phase.reuse, Phase.shrink], deadline=None)
    @given(st.integers(0, 9), st.integers(0, 1000))
    def fails_from_500(a: int, b: int) -> None:
        seen.append((a, b))
        assert b < 500

    fails_from_500._hypothesis_internal_database_key = b"k"
    with pytest.raises(AssertionError):
        fails_from_500()
    assert seen[0] == (3, 907), WHAT_TO_CHECK
    assert seen[-1] == (0, 500), WHAT_TO_CHECK
