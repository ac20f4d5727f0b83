"""Bisecting a dispatch that fails as a whole (a hang, a lost device, a dead worker) to its culprit.

Each step runs one half, so a single culprit in a batch of n is isolated in
ceil(log2(n)) dispatches plus one that confirms it alone; the other halves
are then run as ordinary batches. After MAX_CULPRITS_PER_VARIANT culprits in
one variant, its remaining failing batches are recorded whole (the failure
is then variant-wide). A BuildTimeout is the variant's, whatever its cases: never
bisected, and the variant's later batches are not dispatched (each would wait out
the build budget again): they get the same verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from ctsgen.errors import BackendError, BuildTimeout
from ctsgen.execute.judge import describe, status_of
from ctsgen.execute.run import Dispatched
from ctsgen.core.verdict import CaseResult

#: Culprits isolated per variant before the rest of its failing batches are
#: recorded as they are: beyond that the failure looks variant-wide (a
#: pipeline that cannot be built), and bisecting every case would cost O(n).
MAX_CULPRITS_PER_VARIANT = 4

T = TypeVar("T")


class Bisection(Generic[T]):
    """Runs groups of one variant's cases (``dispatch(group)``: one dispatch, judged), reporting
    each case's verdict to ``record`` and bisecting a group whose dispatch fails as a whole.
    ``name(case)``: the case's name; ``steps``: the dispatches spent bisecting."""

    def __init__(self, dispatch: Callable[[list[T]], Dispatched], name: Callable[[T], str],
                 record: Callable[[CaseResult], None]) -> None:
        self.dispatch, self.name, self.record = dispatch, name, record
        self.culprits = 0
        self.steps = 0
        self.build_timeout: BuildTimeout | None = None  # the variant's build exceeded its budget

    def run(self, group: list[T]) -> None:
        if self.build_timeout is not None:
            exc = self.build_timeout
            for c in group:
                self.record(CaseResult(self.name(c), status_of(exc), f"{describe(exc)}; not dispatched again: its "
                                       "variant's build already exceeded the budget", build_s=exc.seconds))
            return
        done = self.dispatch(group)
        exc = done.error
        if isinstance(exc, BuildTimeout):
            self.build_timeout = exc
        if exc is None or isinstance(exc, BuildTimeout):
            for r in done.results:
                self.record(r)
        elif len(group) == 1:
            self.record(CaseResult(self.name(group[0]), status_of(exc), describe(exc)))
        elif self.culprits >= MAX_CULPRITS_PER_VARIANT:
            for c in group:
                self.record(CaseResult(self.name(c), status_of(exc), f"{describe(exc)}; not bisected: this variant "
                                       f"already has {self.culprits} culprits, the failure looks variant-wide"))
        else:
            self.isolate(group, exc)

    def isolate(self, group: list[T], exc: BackendError) -> None:
        """``group`` failed as a whole with ``exc``: find the culprit by halving."""
        size, steps, deferred = len(group), 0, []
        while len(group) > 1:
            first, second = group[:len(group) // 2], group[len(group) // 2:]
            done = self.dispatch(first)
            steps += 1
            if done.error is None:
                for r in done.results:
                    self.record(r)
                group = second  # the failure is in the other half, which need not run whole
            else:
                deferred.append(second)
                group, exc = first, done.error
        done = self.dispatch(group)  # confirm the culprit alone
        steps += 1
        self.steps += steps
        where = f"isolated by bisection from a batch of {size} in {steps} dispatches"
        if done.error is None:
            r = done.results[0]
            r.detail = (f"{r.detail}; " if r.detail else "") + \
                f"passed alone after its batch failed with {describe(exc)} ({where}): flaky?"
            self.record(r)
        else:
            self.culprits += 1
            self.record(CaseResult(self.name(group[0]), status_of(done.error),
                                   f"{describe(done.error)}; culprit {where}"))
        for rest in deferred:
            self.run(rest)
