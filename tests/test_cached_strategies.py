"""ctsgen.strategies.cached: its strategies draw what Hypothesis's own do, choice for choice."""

from __future__ import annotations

import random

import pytest
from hypothesis import strategies as st
from hypothesis.internal.conjecture.data import ConjectureData

from ctsgen.strategies.cached import integers


def _draws(strategy: st.SearchStrategy[int], seed: int) -> tuple[list[int], tuple, list[int]]:
    data = ConjectureData(random=random.Random(seed), max_choices=10_000)
    values = [data.draw(strategy) for _ in range(200)]
    data.freeze()
    return values, data.choices, [span.label for span in data.spans]


@pytest.mark.parametrize("lo, hi", [(0, 0), (0, 3), (1, 600), (-1200, 602), (0, 2**32 - 1), (-5, 127)])
def test_integers_draws_the_choices_and_spans_of_st_integers(lo: int, hi: int) -> None:
    for seed in range(3):
        assert _draws(integers(lo, hi), seed) == _draws(st.integers(lo, hi), seed)
    assert repr(integers(lo, hi)) == repr(st.integers(lo, hi).wrapped_strategy)
