"""pytest-xdist scheduling of a pack's items: whole shader variants per worker, decided up front.

Each item's group (its shader variant) comes from a ``group_of`` function of
its node id that the pytest plugin derives from the pack's manifest, on the
controller and on every worker alike. Node ids are not rewritten for this:
xdist's own ``loadgroup`` marks groups by appending ``@group`` to node ids,
which pytest 9.2's structured node ids silently ignore (pytest-xdist issue
#1386), so nothing here depends on that suffix. :func:`assign_groups` is a
pure function of the collected node ids, ``group_of`` and the worker count:
the controller's :class:`VariantScheduling` uses it to send each worker all
of its items at once, and each worker evaluates it on its own (identical)
collection to learn which pipelines it will need, so it can build them all
in parallel before its first item. No message carries the plan, so the two
sides cannot disagree about it.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Sequence

import pytest
from xdist.remote import Producer
from xdist.report import report_collection_diff
from xdist.workermanage import WorkerController, parse_tx_spec_config

#: workerinput key under which the controller gives a worker its slot in the plan.
SLOT_KEY = "ctsgen_slot"

#: node id -> the group (shader variant) whose items one worker runs together.
GroupOf = Callable[[str], str]


def assign_groups(nodeids: Sequence[str], workers: int, group_of: GroupOf) -> dict[str, int]:
    """Each group of ``nodeids`` -> the worker index (0 .. workers-1) that runs all of it.

    Greedy, largest group first (ties: the group seen first in ``nodeids``)
    onto the worker with the fewest items so far (ties: the lower index), so
    no worker holds more items than another plus the largest group.
    """
    if workers < 1:
        raise ValueError(f"cannot plan for {workers} workers; need at least 1")
    sizes = Counter(group_of(n) for n in nodeids)  # insertion order: first seen first
    loads = [(0, w) for w in range(workers)]
    plan: dict[str, int] = {}
    for group in sorted(sizes, key=lambda g: -sizes[g]):  # stable: ties keep first-seen order
        load, worker = heapq.heappop(loads)
        plan[group] = worker
        heapq.heappush(loads, (load + sizes[group], worker))
    return plan


class VariantScheduling:
    """xdist scheduler (``xdist.scheduler.protocol.Scheduling``) running each group on its planned worker.

    Once every initial worker has collected (the same items), worker slot K
    (``workerinput[SLOT_KEY]``) gets every item :func:`assign_groups` plans
    for K, in collection order, and then its shutdown: no further
    scheduling. Items planned for a slot whose worker is gone go to the
    worker with the fewest items. A crashed worker's unfinished items go to
    its replacement, which prepares nothing up front (its slot is past the
    plan) and builds each pipeline at the variant's first dispatch.
    """

    def __init__(self, config: pytest.Config, group_of: GroupOf, log: Producer | None = None) -> None:
        self.config = config
        self.group_of = group_of
        self.numnodes = len(parse_tx_spec_config(config))
        self.log = log.ctsgensched if log is not None else Producer("ctsgensched")
        self.collection: list[str] | None = None
        self._collections: dict[WorkerController, list[str]] = {}
        self._pending: dict[WorkerController, list[int]] = {}
        self._started: set[WorkerController] = set()
        self._orphans: list[int] = []  # items of crashed workers, waiting for a replacement

    @property
    def nodes(self) -> list[WorkerController]:
        return list(self._pending)

    @property
    def collection_is_completed(self) -> bool:
        return len(self._collections) >= self.numnodes

    @property
    def tests_finished(self) -> bool:
        if not self.collection_is_completed or self._orphans:
            return False
        return all(len(p) < 2 for p in self._pending.values())

    @property
    def has_pending(self) -> bool:
        return bool(self._orphans) or any(self._pending.values())

    def add_node(self, node: WorkerController) -> None:
        assert node not in self._pending
        self._pending[node] = []

    def add_node_collection(self, node: WorkerController, collection: Sequence[str]) -> None:
        """Record a worker's collection; a replacement worker takes the crashed workers' items."""
        assert node in self._pending
        if self.collection is not None:
            if list(collection) != self.collection:
                self.log(report_collection_diff(self.collection, list(collection), "scheduled", node.gateway.id))
                return
            self._pending[node], self._orphans = self._orphans, []
        self._collections[node] = list(collection)

    def mark_test_complete(self, node: WorkerController, item_index: int, duration: float = 0) -> None:
        self._pending[node].remove(item_index)

    def mark_test_pending(self, item: str) -> None:
        raise NotImplementedError("ctsgen's variant scheduling never re-queues an item")

    def remove_pending_tests_from_node(self, node: WorkerController, indices: Sequence[int]) -> None:
        raise NotImplementedError("ctsgen's variant scheduling never steals items")

    def remove_node(self, node: WorkerController) -> str | None:
        """Forget a worker; its first unfinished item is the crash culprit, the rest wait for a replacement."""
        pending = self._pending.pop(node)
        if not pending:
            return None
        assert self.collection is not None
        self._orphans += pending[1:]
        return self.collection[pending[0]]

    def schedule(self) -> None:
        """Send the plan (first call) or a replacement's inherited items (later calls)."""
        assert self.collection_is_completed
        if self.collection is None:
            if not self._same_collections():
                return
            self.collection = next(iter(self._collections.values()))
            self._plan()
        for node, pending in self._pending.items():
            if node not in self._started and node in self._collections:
                self._started.add(node)
                if pending:
                    node.send_runtest_some(pending)
                node.shutdown()

    def _plan(self) -> None:
        assert self.collection is not None
        plan = assign_groups(self.collection, self.numnodes, self.group_of)
        by_slot: dict[int, list[int]] = {}
        for i, nodeid in enumerate(self.collection):
            by_slot.setdefault(plan[self.group_of(nodeid)], []).append(i)
        slots = {node.workerinput.get(SLOT_KEY): node for node in self._pending}
        for slot, items in sorted(by_slot.items()):
            node = slots[slot] if slot in slots else min(self._pending, key=lambda n: len(self._pending[n]))
            self._pending[node] += items
            self._pending[node].sort()

    def _same_collections(self) -> bool:
        """Whether every worker collected the same items (a collection error per difference)."""
        (first, col), *rest = self._collections.items()
        same = True
        for node, other in rest:
            msg = report_collection_diff(col, other, first.gateway.id, node.gateway.id)
            if msg:
                same = False
                self.log(msg)
                self.config.hook.pytest_collectreport(
                    report=pytest.CollectReport(nodeid=node.gateway.id, outcome="failed", longrepr=msg, result=[]))
        return same
