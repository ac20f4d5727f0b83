"""Strategies built once per argument, for draws on a hot path.

``st.integers(0, 3)`` called inside a composite returns a cached strategy, but
Hypothesis's cache key for the call costs about as much as the draw itself; a
strategy built per case is also validated per case. These are looked up in a
plain ``functools`` cache instead.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

from hypothesis import strategies as st

from ctsgen.strategies.hypothesis_reach import fast_integers


@functools.lru_cache(maxsize=8192)
def integers(min_value: int, max_value: int) -> st.SearchStrategy[int]:
    """``st.integers(min_value, max_value)``, built once per bounds.

    Built as the strategy ``st.integers`` builds for two int bounds (a ``LazyStrategy`` around
    an ``IntegersStrategy``, which ``ConjectureData.draw`` unwraps for its span label and its
    draw): the same choices and spans, without the lazy wrapper's argument checks and first-draw
    validation (:func:`ctsgen.strategies.hypothesis_reach.fast_integers`). Slices draw offsets between bounds that
    follow the drawn sides, so a fuzz run keeps meeting new pairs (tests/test_cached_strategies.py
    holds the two alike)."""
    return fast_integers(min_value, max_value)


@functools.lru_cache(maxsize=1024)
def sampled(values: tuple[Hashable, ...]) -> st.SearchStrategy:
    """``st.sampled_from(values)``, built once per tuple of values (shrinks to the first)."""
    return st.sampled_from(values)


#: a 32-bit data seed
SEEDS = integers(0, 2**32 - 1)
