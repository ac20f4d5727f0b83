"""The one module that reaches into Hypothesis's internals: seven things it has no public API for.

Hypothesis releases every few days and keeps no promise about what is not documented, so ctsgen
bounds no Hypothesis version above. Each reach below degrades to plain public behaviour where a
release removes what it reaches (it never fails an import), and ``tests/test_hypothesis_internals.py``
holds each against the installed Hypothesis and fails naming the function here and the internal
it uses, so a release that changes one is seen in CI, not in a user's packs. No other ctsgen
module imports ``hypothesis.internal``, ``hypothesis.strategies._internal`` or sets a
``_hypothesis_internal_*`` attribute (the same test file checks the tree).

* :func:`pinned_constants`: Hypothesis mines constants from the source of every local module
  loaded (``providers._get_local_constants``, pooled in ``providers.CONSTANTS_CACHE``); a seed's
  draws then depend on what the process imported. Public API: none (no setting turns it off).
* :func:`fast_integers`: ``IntegersStrategy(lo, hi)``, the strategy ``st.integers(lo, hi)`` wraps.
  Public API: ``st.integers``, whose lazy wrapper validates its arguments on first use: about
  50 us per new pair of bounds against 0.3 us (Hypothesis 6.170.29, this 2-core machine), and
  fuzz draws keep meeting new pairs (slices between drawn bounds). Without the class:
  ``st.integers``.
* :func:`set_database_key`: the key under which a test's examples are saved and replayed
  (``test._hypothesis_internal_database_key``, which ``hypothesis.core`` reads for every run and
  ``hypothesis.find`` sets). Public API: none; Hypothesis's own key digests the test function's
  source, the same for every fuzzed family and backend.
* :class:`StrategyWalk`: draws a value of a case strategy without Hypothesis, walking the strategy
  objects (``hypothesis.strategies._internal``: ``IntegersStrategy``, ``BooleansStrategy``,
  ``JustStrategy``, ``SampledFromStrategy`` and its private ``_transformations``, ``OneOfStrategy``,
  ``TupleStrategy``, ``BuildsStrategy``, ``CompositeStrategy``, ``MappedStrategy``, ``LazyStrategy``)
  and making each choice where Hypothesis makes one, in its order, so the recorded choices replay
  as the same value (fuzz's bulk draws, :mod:`ctsgen.strategies.bulk`, issue 43). Public API: none
  (a strategy's parts are not exposed). Without the classes :func:`bulk_draws_reachable` is
  False, and fuzz draws every case with Hypothesis.
* :func:`drawn_choices`: the choices the example being drawn has made so far, from a composite's
  ``draw`` (its ``ConjectureData``'s ``choices``). Public API: none. Without it: None (no bulk draws).
* :func:`choices_left` and :func:`end_as_overrun`: the cap on the choices of the example being
  drawn (``ConjectureData.max_choices``, past its replayed ``prefix``) and the end Hypothesis gives
  an example that passes it (``mark_overrun``). Hypothesis's early generation
  (``ConjectureRunner.generate_new_test_cases``, its first ``min(max_examples // 10, 50)`` valid
  examples) caps each new example at five times the choices of its prefix's simplest continuation;
  a bulk batch, a few dozen choices where a full one makes hundreds, would pass under that cap and
  be run and mutated where the full one overruns (issue 43: khr-sdiv-floors took 174 examples to
  kill against 47). Public API: none. Without them: None (no cap seen: the bulk batch is run).
* :func:`save_for_shrinking`: a choice sequence saved under a test's key as Hypothesis saves a
  failure it has not finished shrinking (the key's ``.secondary`` corpus, ``choices_to_bytes``):
  the next run's reuse phase replays it first and shrinks it, where one saved under the key itself
  is taken as minimal and reported as it is. Public API: none. Without ``choices_to_bytes``
  :func:`bulk_draws_reachable` is False (no bulk case to replay).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

try:  # hypothesis.internal.conjecture.providers: the local-constants pool (see pinned_constants)
    from hypothesis.internal.conjecture import providers as _providers
    from hypothesis.internal.constants_ast import Constants as _Constants
except ImportError:  # pragma: no cover - a release that moved them: draws use the pool as is
    _providers = _Constants = None

try:  # hypothesis.strategies._internal.numbers (see fast_integers)
    from hypothesis.strategies._internal.numbers import IntegersStrategy as _IntegersStrategy
except ImportError:  # pragma: no cover - a release that moved it: st.integers (slower)
    _IntegersStrategy = None

try:  # hypothesis.strategies._internal.* (see StrategyWalk)
    from hypothesis.strategies._internal.collections import TupleStrategy as _Tuple
    from hypothesis.strategies._internal.core import BuildsStrategy as _Builds
    from hypothesis.strategies._internal.core import CompositeStrategy as _Composite
    from hypothesis.strategies._internal.lazy import LazyStrategy as _Lazy
    from hypothesis.strategies._internal.misc import BooleansStrategy as _Booleans
    from hypothesis.strategies._internal.misc import JustStrategy as _Just
    from hypothesis.strategies._internal.strategies import MappedStrategy as _Mapped
    from hypothesis.strategies._internal.strategies import OneOfStrategy as _OneOf
    from hypothesis.strategies._internal.strategies import SampledFromStrategy as _SampledFrom
except ImportError:  # pragma: no cover - a release that moved one: no bulk draws
    _Tuple = _Builds = _Composite = _Lazy = _Booleans = _Just = _Mapped = _OneOf = _SampledFrom = None

try:  # undocumented in hypothesis.database (see save_for_shrinking)
    from hypothesis.database import choices_to_bytes as _choices_to_bytes
except ImportError:  # pragma: no cover - a release that moved it: no bulk draws
    _choices_to_bytes = None

#: the attribute hypothesis.core reads a test's database key from (see set_database_key)
DATABASE_KEY_ATTRIBUTE = "_hypothesis_internal_database_key"


def constants_pool_reachable() -> bool:
    """Whether :func:`pinned_constants` finds the pool it empties (else it changes nothing)."""
    return (_providers is not None and callable(getattr(_providers, "_get_local_constants", None))
            and hasattr(getattr(_providers, "CONSTANTS_CACHE", None), "cache"))


@contextmanager
def pinned_constants() -> Iterator[None]:
    """Draws inside the block do not depend on which modules the process has imported.

    Hypothesis (6.13x and later) replaces about one draw in twenty by a constant mined from the
    source of every *local* module loaded so far: not site-packages, not tests. So the same seed
    drew different cases after a user's own module was imported (15 of 300 tensor-layout cases),
    and an editable install (ctsgen's modules are local) drew different packs from a regular one
    (they are in site-packages). Inside the block the local pool is empty, as for a regular
    install; Hypothesis's own global constants (0, +-1, type limits, infinities) stay. Where a
    release moved the pool the block changes nothing (tests/test_hypothesis_internals.py and
    tests/test_pack.py's determinism test say so)."""
    if not constants_pool_reachable():
        yield
        return
    providers = _providers
    original = providers._get_local_constants
    empty = _Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()  # pools built from the mined constants
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


def fast_integers(min_value: int, max_value: int) -> st.SearchStrategy[int]:
    """The strategy ``st.integers(min_value, max_value)`` wraps, built without its lazy wrapper's
    argument checks (the caller passes two ints, ``min_value <= max_value``): the same choices and
    spans (tests/test_cached_strategies.py). ``st.integers`` where a release moved the class."""
    if _IntegersStrategy is None:  # pragma: no cover - see the import
        return st.integers(min_value, max_value)
    return _IntegersStrategy(int(min_value), int(max_value))


def set_database_key(test: Callable[..., Any], key: bytes) -> None:
    """Save and replay ``test``'s examples (a ``@given`` test) under ``key`` in its settings'
    database, instead of the digest of its source Hypothesis uses."""
    setattr(test, DATABASE_KEY_ATTRIBUTE, key)


def bulk_draws_reachable() -> bool:
    """Whether fuzz's bulk draws find what they reach: the strategy classes :class:`StrategyWalk`
    walks and the encoding :func:`save_for_shrinking` saves (else fuzz draws every case with
    Hypothesis)."""
    return None not in (_IntegersStrategy, _Tuple, _Builds, _Composite, _Lazy, _Booleans, _Just, _Mapped,
                        _OneOf, _SampledFrom, _choices_to_bytes)


class StrategyWalk(ABC):
    """``walk(strategy)`` draws a value of ``strategy`` as Hypothesis would, a choice at a time from
    :meth:`integer` and :meth:`boolean` (a subclass's), called exactly where Hypothesis draws an
    integer or a boolean choice and in its order: a ``sampled_from`` its element's index, a
    ``one_of`` of two or more branches its branch's index, a ``just`` and a one-branch ``one_of``
    no choice; ``builds`` its positional arguments, then its keywords. So the subclass's recorded
    choices, replayed by Hypothesis, draw the same value. A composite's definition is given the walk
    as its ``draw``. Kinds: bounded integers, booleans, ``sampled_from``/``just`` without map or
    filter, ``one_of``, ``tuples``, ``builds``, ``@st.composite``, ``.map``, lazily built strategies;
    any other raises TypeError."""

    @abstractmethod
    def integer(self, lo: int, hi: int) -> int:
        """An integer choice in [lo, hi] (Hypothesis's ``draw_integer(lo, hi)``)."""

    @abstractmethod
    def boolean(self) -> bool:
        """A boolean choice (Hypothesis's ``draw_boolean()``)."""

    def __call__(self, strategy: st.SearchStrategy) -> Any:
        kind = type(strategy)
        while kind is _Lazy:  # st.integers(...), st.one_of(...): what they wrap
            strategy = strategy.wrapped_strategy
            kind = type(strategy)
        if kind is _IntegersStrategy and strategy.start is not None and strategy.end is not None:
            return self.integer(strategy.start, strategy.end)  # the commonest choice, without a walk's call
        walk = _WALKS.get(kind)
        if walk is None:
            walk = next((w for k, w in _WALKS.items() if isinstance(strategy, k)), None)
            if walk is None:
                raise TypeError(f"{strategy!r}: a bulk draw walks no {kind.__name__} -> draw this family's cases "
                                "with Hypothesis (leave FamilySpec.bulk_draws off)")
            _WALKS[kind] = walk
        return walk(self, strategy)


def _integers(w: StrategyWalk, s: Any) -> int:
    if s.start is None or s.end is None:
        raise TypeError(f"{s!r}: a bulk draw needs bounded integers")
    return w.integer(s.start, s.end)


def _sampled(w: StrategyWalk, s: Any) -> Any:
    if s._transformations:
        raise TypeError(f"{s!r}: a bulk draw walks sampled_from without map or filter")
    return s.elements[w.integer(0, len(s.elements) - 1)]


def _just(w: StrategyWalk, s: Any) -> Any:
    if s._transformations:
        raise TypeError(f"{s!r}: a bulk draw walks just() without map or filter")
    return s.value  # Hypothesis draws no choice for it


def _one_of(w: StrategyWalk, s: Any) -> Any:
    branches = s.element_strategies
    if len(branches) == 1:  # Hypothesis draws the lone branch without a choice
        return w(branches[0])
    return w(branches[w.integer(0, len(branches) - 1)])


def _builds(w: StrategyWalk, s: Any) -> Any:
    args = [w(a) for a in s.args]  # Hypothesis draws the positional arguments first, then the keywords
    return s.target(*args, **{k: w(v) for k, v in s.kwargs.items()})


#: strategy kind -> how a walk draws it; a subclass found by isinstance is added on first use.
#: JustStrategy is a SampledFromStrategy: listed first, so the lookup by isinstance finds it first.
_WALKS: dict[type, Callable[[StrategyWalk, Any], Any]] = {} if not bulk_draws_reachable() else {
    _IntegersStrategy: _integers, _Booleans: lambda w, s: w.boolean(), _Just: _just, _SampledFrom: _sampled,
    _OneOf: _one_of, _Tuple: lambda w, s: tuple(w(e) for e in s.element_strategies),
    _Composite: lambda w, s: s.definition(w, *s.args, **s.kwargs), _Builds: _builds,
    _Mapped: lambda w, s: s.pack(w(s.mapped_strategy)), _Lazy: lambda w, s: w(s.wrapped_strategy),
}


def drawn_choices(draw: Callable[..., Any]) -> tuple | None:
    """The choices made so far by the example whose composite was given ``draw`` (its family's,
    its variant's, ...), or None where ``draw`` is no ``ConjectureData.draw`` that holds them."""
    choices = getattr(getattr(draw, "__self__", None), "choices", None)
    return None if choices is None else tuple(choices)


def choices_left(draw: Callable[..., Any]) -> int | None:
    """How many more choices the example whose composite was given ``draw`` may make before
    Hypothesis ends it as an overrun, where it makes them anew (past the prefix it replays); None
    where it is replaying a prefix there, where no cap is set, or where ``draw`` holds no
    ``ConjectureData``. A replay's cap is its replayed choices (and a few more): only a new
    example's cap says what Hypothesis's generator chose to allow."""
    data = getattr(draw, "__self__", None)
    cap, prefix, index, nodes = (getattr(data, a, None) for a in ("max_choices", "prefix", "index", "_nodes"))
    if type(cap) is not int or type(index) is not int or nodes is None \
            or not callable(getattr(data, "mark_overrun", None)):
        return None
    if prefix is not None and index < len(prefix):
        return None
    return cap - len(nodes)


def end_as_overrun(draw: Callable[..., Any]) -> NoReturn:
    """End the example whose composite was given ``draw`` as Hypothesis ends one that passed its
    cap on choices (:func:`choices_left`, not None for it): not run, not counted as an example,
    not mutated."""
    draw.__self__.mark_overrun()  # raises StopTest, caught by Hypothesis's engine
    raise AssertionError("mark_overrun returned")  # pragma: no cover - see choices_left


def save_for_shrinking(db: ExampleDatabase, key: bytes, choices: Sequence[int | bool]) -> None:
    """Save ``choices`` in ``db`` for the ``@given`` test whose database key is ``key``
    (:func:`set_database_key`) so that its next run replays them first and shrinks them. Only
    where :func:`bulk_draws_reachable`."""
    db.save(key + b".secondary", _choices_to_bytes(tuple(choices)))
