"""Component counts: vector lengths and matrix sides bounded by a device limit."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hypothesis import strategies as st


def component_counts(usual: Sequence[int], large: Sequence[int], max_count: int,
                     multiple_of: int = 1) -> st.SearchStrategy[int]:
    """A count from ``usual`` (the everyday sizes and their edges) or, less often, also from
    ``large`` (up to a device limit such as maxCooperativeVectorComponents): at most
    ``max_count`` and a multiple of ``multiple_of``. Shrinks toward the first usual size.
    Built once per arguments (a variant draws several): a new strategy is validated on its first draw."""
    return _component_counts(tuple(usual), tuple(large), max_count, multiple_of)


@functools.lru_cache(maxsize=1024)
def _component_counts(usual: tuple[int, ...], large: tuple[int, ...], max_count: int,
                      multiple_of: int) -> st.SearchStrategy[int]:
    sizes = [s for s in (*usual, *large) if s <= max_count and s % multiple_of == 0]
    return st.sampled_from([s for s in sizes if s not in large]) | st.sampled_from(sizes)
