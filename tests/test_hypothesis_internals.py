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


def _changed(function: str, internal: str) -> str:
    return (f"Hypothesis {hypothesis.__version__} changed {internal}, which {REACH} {function} reaches -> adapt "
            f"{function} to it (or to a public API that now does the same), and run tests/test_pack.py and "
            "tests/test_cached_strategies.py")


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
