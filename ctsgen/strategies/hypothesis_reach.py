"""The one module that reaches into Hypothesis's internals: three things it has no public API for.

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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st

try:  # hypothesis.internal.conjecture.providers: the local-constants pool (see pinned_constants)
    from hypothesis.internal.conjecture import providers as _providers
    from hypothesis.internal.constants_ast import Constants as _Constants
except ImportError:  # pragma: no cover - a release that moved them: draws use the pool as is
    _providers = _Constants = None

try:  # hypothesis.strategies._internal.numbers (see fast_integers)
    from hypothesis.strategies._internal.numbers import IntegersStrategy as _IntegersStrategy
except ImportError:  # pragma: no cover - a release that moved it: st.integers (slower)
    _IntegersStrategy = None

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
