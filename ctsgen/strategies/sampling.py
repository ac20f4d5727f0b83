"""Deterministic draws from a strategy, for packs (same seed, same cases)."""

from __future__ import annotations

from typing import TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from ctsgen.strategies.hypothesis_reach import pinned_constants

T = TypeVar("T")


def draw_examples(strategy: st.SearchStrategy[T], n: int, random_seed: int) -> list[T]:
    """Up to ``n`` examples of ``strategy``, the same ones for the same seed
    (and Hypothesis version). Fewer come back only when the strategy has
    fewer distinct values. Hypothesis's generation phase is used as is, so
    its bias toward small and boundary values carries into packs."""
    if n <= 0:
        return []
    out: list[T] = []

    @settings(database=None, max_examples=n, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @seed(random_seed)
    @given(strategy)
    def collect(value: T) -> None:
        out.append(value)

    with pinned_constants():
        collect()
    return out[:n]


def draw_many(strategy: st.SearchStrategy[T], n: int, random_seed: int, per_example: int = 16) -> list[T]:
    """Up to ``n`` values of ``strategy``, drawn ``per_example`` at a time, the same ones for the same seed.

    Each Hypothesis example costs a few milliseconds beyond its draws, so a pack's cases are
    drawn as fixed-size lists: about 1 ms a tensor-layout case against about 10 ms one per
    example (bench/throughput.py). Hypothesis's first example is its simplest (every element
    minimal); it is kept as one value, not ``per_example`` copies of it.
    """
    if n <= 0:
        return []
    lists = draw_examples(st.lists(strategy, min_size=per_example, max_size=per_example),
                          1 + -(-n // per_example), random_seed)
    out = lists[0][:1] + [v for chunk in lists[1:] for v in chunk]
    return out[:n]
