"""Deterministic draws from a strategy, for packs (same seed, same cases)."""

from __future__ import annotations

from typing import TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

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

    collect()
    return out[:n]
