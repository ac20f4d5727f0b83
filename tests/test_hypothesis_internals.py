"""ctsgen's reaches into Hypothesis internals, held against the installed Hypothesis.

They all live in ``ctsgen/strategies/hypothesis_reach.py`` (its docstring says why each has no
public equivalent), so pyproject.toml bounds no Hypothesis release above: a release that moves or
changes what one reaches fails the test here that names the function, and what to do is to adapt
that function (each already degrades to public behaviour rather than failing an import). These
tests run on whatever Hypothesis is installed: CI on the newest release sees a change first.
"""

from __future__ import annotations

import ast
from pathlib import Path

import hypothesis
from hypothesis import Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from ctsgen.strategies import hypothesis_reach

REACH = "ctsgen/strategies/hypothesis_reach.py"
ROOT = Path(__file__).resolve().parents[1] / "ctsgen"


def _changed(function: str, internal: str,
             then: str = "tests/test_pack.py and tests/test_cached_strategies.py") -> str:
    return (f"Hypothesis {hypothesis.__version__} changed {internal}, which {REACH} {function} reaches -> adapt "
            f"{function} to it (or to a public API that now does the same), and run {then}")


def test_pinned_constants_empties_the_local_constants_pool() -> None:
    why = _changed("pinned_constants", "hypothesis.internal.conjecture.providers._get_local_constants / "
                   "CONSTANTS_CACHE / hypothesis.internal.constants_ast.Constants")
    assert hypothesis_reach.constants_pool_reachable(), why
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    original = providers._get_local_constants
    with hypothesis_reach.pinned_constants():
        assert providers._get_local_constants() == Constants(), why
    assert providers._get_local_constants is original


def test_fast_integers_is_what_st_integers_wraps() -> None:
    why = _changed("fast_integers", "hypothesis.strategies._internal.numbers.IntegersStrategy")
    assert hypothesis_reach._IntegersStrategy is not None, why
    for lo, hi in [(0, 0), (0, 3), (-1200, 602), (0, 2**32 - 1)]:
        built, public = hypothesis_reach.fast_integers(lo, hi), st.integers(lo, hi).wrapped_strategy
        assert type(built) is type(public) and repr(built) == repr(public), why


def test_set_database_key_is_the_key_examples_are_saved_under() -> None:
    why = _changed("set_database_key", f"the test attribute {hypothesis_reach.DATABASE_KEY_ATTRIBUTE}")
    db = InMemoryExampleDatabase()

    @settings(database=db, max_examples=20, phases=[Phase.generate, Phase.shrink], deadline=None)
    @seed(0)
    @given(st.integers())
    def fails_above_4(x: int) -> None:
        assert x < 5

    hypothesis_reach.set_database_key(fails_above_4, b"ctsgen-fuzz-key")
    try:
        fails_above_4()
    except AssertionError:
        pass
    else:
        raise AssertionError("x < 5 held for every example: the test cannot tell where the failure was saved")
    assert b"ctsgen-fuzz-key" in db.data, why
    assert set(db.data) <= {b"ctsgen-fuzz-key", b"ctsgen-fuzz-key.secondary", b"ctsgen-fuzz-key.pareto"}, why



#: what fuzz's bulk draws (StrategyWalk, drawn_choices, save_for_shrinking) are tested by besides
BULK_TESTS = "tests/test_bulk_draws.py"


class _Counting(hypothesis_reach.StrategyWalk):
    """A walk whose choices cycle through fixed fractions of their range, recorded in order."""

    def __init__(self, phase: int = 0) -> None:
        self.choices: list[int | bool] = []
        self.phase = phase

    def integer(self, lo: int, hi: int) -> int:
        v = lo + ((len(self.choices) + self.phase) * 7 + 3) % (hi - lo + 1)
        self.choices.append(v)
        return v

    def boolean(self) -> bool:
        v = (len(self.choices) + self.phase) % 2 == 1
        self.choices.append(v)
        return v


@st.composite
def _pair(draw: st.DrawFn, hi: int) -> tuple[int, int]:
    a = draw(st.integers(0, hi))
    return a, draw(st.integers(a, hi + 5))


def _replayed(strategy: st.SearchStrategy, choices: list) -> object:
    """What Hypothesis draws from ``strategy`` given exactly ``choices`` (every one consumed)."""
    from hypothesis.control import BuildContext
    from hypothesis.internal.conjecture.data import ConjectureData

    data = ConjectureData.for_choices(choices)
    with BuildContext(data, wrapped_test=None):
        value = data.draw(strategy)
    assert len(data.choices) == len(choices)
    return value


#: one strategy of each kind StrategyWalk walks, as ctsgen's case strategies build them
WALKED = {
    "integers": st.integers(-5, 300), "fast_integers": hypothesis_reach.fast_integers(0, 2**32 - 1),
    "booleans": st.booleans(), "sampled_from": st.sampled_from("abcde"), "just": st.just(7),
    "one_of": st.one_of(st.just(1), st.integers(5, 9), st.booleans()), "one_of one": st.one_of(st.integers(0, 3)),
    "tuples": st.tuples(st.integers(0, 3), st.booleans()), "builds": st.builds(complex, st.integers(0, 4),
                                                                               imag=st.integers(1, 2)),
    "composite": _pair(9), "map": st.integers(0, 9).map(lambda x: x * 3),
    "nested": st.lists(st.none(), max_size=0).flatmap(lambda _: st.just(0)),
}


def test_a_strategy_walks_choices_draw_the_same_value_in_hypothesis() -> None:
    why = _changed("StrategyWalk", "the strategy classes of hypothesis.strategies._internal (their attributes, "
                   "and the choices Hypothesis draws for each)", BULK_TESTS)
    assert hypothesis_reach.bulk_draws_reachable(), why
    for name, strategy in WALKED.items():
        if name == "nested":  # flatmap is no kind a walk knows: refused by name, not walked wrongly
            try:
                _Counting()(strategy)
            except TypeError as e:
                assert "FamilySpec.bulk_draws" in str(e)
                continue
            raise AssertionError("a walk drew a flatmap")
        for phase in range(3):
            walk = _Counting(phase)
            value = walk(strategy)
            assert _replayed(strategy, walk.choices) == value, f"{name}: {why}"


def test_drawn_choices_are_the_examples_choices_so_far() -> None:
    why = _changed("drawn_choices", "a composite's draw (ConjectureData.draw) and ConjectureData.choices",
                   BULK_TESTS)
    seen: list[tuple | None] = []

    @st.composite
    def two(draw: st.DrawFn) -> int:
        a = draw(st.integers(0, 9))
        seen.append(hypothesis_reach.drawn_choices(draw))
        return a

    assert _replayed(two(), [4]) == 4
    assert seen == [(4,)], why
    assert hypothesis_reach.drawn_choices(lambda s: 0) is None


def test_choices_left_is_a_new_examples_cap_and_an_overrun_ends_it() -> None:
    from random import Random

    from hypothesis.control import BuildContext
    from hypothesis.errors import StopTest
    from hypothesis.internal.conjecture.data import ConjectureData, Status

    why = _changed("choices_left / end_as_overrun", "ConjectureData's max_choices, prefix, index, _nodes or "
                   "mark_overrun", BULK_TESTS)
    left: list[int | None] = []

    @st.composite
    def probe(draw: st.DrawFn, end: bool) -> int:
        draw(st.integers(0, 9))
        draw(st.integers(0, 9))
        left.append(hypothesis_reach.choices_left(draw))
        if end:
            hypothesis_reach.end_as_overrun(draw)
        return draw(st.integers(0, 9))

    capped = ConjectureData(random=Random(0), max_choices=10)  # a new example, capped as early generation caps it
    replayed = ConjectureData.for_choices([1, 2, 3])  # a replay: its cap is its own choices
    free = ConjectureData(random=Random(0))  # no cap
    for data in (capped, replayed, free):
        with BuildContext(data, wrapped_test=None):
            data.draw(probe(False))
    assert left == [8, None, None], why
    ended = ConjectureData(random=Random(0), max_choices=10)
    try:
        with BuildContext(ended, wrapped_test=None):
            ended.draw(probe(True))
    except StopTest:
        pass
    assert ended.status is Status.OVERRUN, why
    assert hypothesis_reach.choices_left(lambda s: 0) is None


def test_choices_saved_for_shrinking_are_replayed_first_and_shrunk() -> None:
    why = _changed("save_for_shrinking", "the key's .secondary corpus and hypothesis.database.choices_to_bytes",
                   BULK_TESTS)
    db = InMemoryExampleDatabase()
    hypothesis_reach.save_for_shrinking(db, b"k", (3, 907))
    seen: list[tuple[int, int]] = []

    @settings(database=db, max_examples=10, phases=[Phase.reuse, Phase.shrink], deadline=None)
    @given(st.integers(0, 9), st.integers(0, 1000))
    def fails_from_500(a: int, b: int) -> None:
        seen.append((a, b))
        assert b < 500

    hypothesis_reach.set_database_key(fails_from_500, b"k")
    try:
        fails_from_500()
    except AssertionError:
        pass
    else:
        raise AssertionError("the saved choices were not replayed: no failure")
    assert seen[0] == (3, 907), why
    assert seen[-1] == (0, 500), why


def _reaches(tree: ast.AST) -> list[str]:
    """What a module's source reaches of Hypothesis's internals: imports and attribute names."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hypothesis") and \
                ("internal" in node.module or "._" in node.module):
            out.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Import):
            out += [f"import {a.name}" for a in node.names
                    if a.name.startswith("hypothesis") and ("internal" in a.name or "._" in a.name)]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_hypothesis_internal"):
            out.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.startswith("_hypothesis_internal"):
            out.append(node.value)
    return out


def test_no_other_module_reaches_into_hypothesis() -> None:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).as_posix()
        if rel == REACH or "/tests/" in rel:
            continue
        hits = _reaches(ast.parse(path.read_text(encoding="utf-8")))
        if hits:
            found[rel] = hits
    assert not found, f"Hypothesis internals reached outside {REACH} -> move each reach there: {found}"


def test_the_reach_check_finds_a_planted_reach() -> None:
    planted = ("from hypothesis.internal.conjecture import providers\n"
               "import hypothesis.strategies._internal.numbers\n"
               "def f(t):\n    t._hypothesis_internal_database_key = b''\n")
    assert len(_reaches(ast.parse(planted))) == 3
    assert _reaches(ast.parse("from hypothesis import strategies as st\nimport hypothesis.database\n")) == []
