"""Built objects kept for reuse, with a bound on those already used.

A device backend builds one pipeline per shader variant and keeps it, so a
variant seen again costs nothing. A fuzz session draws a new variant with
almost every example, so keeping every pipeline grows a device worker
without bound (docs/validation.md, "A 100,000-case suite", goal 5).

:class:`KeptObjects` keeps at most ``limit`` *used* objects and destroys the
least recently used beyond that when told (:meth:`KeptObjects.evict`). An
object built ahead of its first use (a pack's pipelines, built up front on
a thread pool) is never evicted before that use: evicting it would only
make its dispatch build it again. The owner decides when eviction is safe
(for Vulkan: after a dispatch's fence, when the GPU uses none of them).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class KeptObjects(Generic[T]):
    """Objects by key; :meth:`use` marks one used (most recently), :meth:`evict` destroys the
    least recently used beyond ``limit`` (None: keep everything). Not thread-safe: the owner
    holds its own lock around every call."""

    def __init__(self, limit: int | None, destroy: Callable[[T], None]) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"limit {limit}: keep at least one used object, or None for no bound")
        self.limit, self._destroy = limit, destroy
        self._unused: dict[str, T] = {}
        self._used: OrderedDict[str, T] = OrderedDict()  # least recently used first

    def get(self, key: str) -> T | None:
        return self._used.get(key, self._unused.get(key))

    def add(self, key: str, obj: T) -> None:
        """Keep a newly built ``obj``, not yet used."""
        if key in self._used or key in self._unused:
            raise KeyError(f"{key!r} is already kept")
        self._unused[key] = obj

    def use(self, key: str) -> None:
        """``key``'s object is used now: it becomes the most recently used."""
        if key in self._unused:
            self._used[key] = self._unused.pop(key)
        else:
            self._used.move_to_end(key)

    def evict(self) -> int:
        """Destroy the least recently used objects beyond ``limit``; returns how many."""
        gone = 0
        while self.limit is not None and len(self._used) > self.limit:
            _, obj = self._used.popitem(last=False)
            self._destroy(obj)
            gone += 1
        return gone

    def values(self) -> Iterator[T]:
        yield from self._unused.values()
        yield from self._used.values()

    def clear(self) -> None:
        """Forget every object without destroying it (the owner destroyed them or their device)."""
        self._unused.clear()
        self._used.clear()

    def __len__(self) -> int:
        return len(self._unused) + len(self._used)
