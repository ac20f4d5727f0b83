"""How a timed fuzz ends on time: ``ctsgen fuzz --time`` and campaign workers alike.

No example begins after the deadline (the fuzz loop checks it before each one). The example in
flight at the deadline (a pipeline build, a dispatch) is ended ``OVERTIME_S`` after it, as a stop
signal ends it: :func:`example_bound` arms SIGALRM (:func:`ctsgen.signals.alarm_at`) and its
handler calls ``stop()``, which raises KeyboardInterrupt into the fuzz loop, whose run then returns
its report with the smallest failure seen so far. A backend still closing ``CLOSE_BY_S`` after the
deadline (a GPU driver publishing its pipeline cache under the lock every process of the device
takes in turn) is closed again, which stops a supervised backend's process at once
(:func:`close_by`). So a timed run ends within seconds of its budget, whatever its last example was
doing.

Two rules bring that end within about a second of the budget. The budget counts from the process's
own start (:func:`process_started`), so Python's start-up and imports are inside it, not added to
it. And on a backend that builds pipelines, examples stop ``CLOSE_RESERVE_S`` before the end
(:func:`examples_deadline`): the close that follows (publishing the pipeline cache) then has its
``CLOSE_BY_S`` bound about a second past the budget, not ``CLOSE_BY_S`` past it. A backend whose
pipelines cost nothing (the reference) has no such close, and fuzzes to the end.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ctsgen.backends.base import Backend
from ctsgen.signals import alarm_at

#: Seconds past the deadline the example in flight may run before it is ended as a stop signal ends it.
OVERTIME_S = 2.0
#: Seconds past the deadline by which the backend must be closed, else its process is stopped.
CLOSE_BY_S = 4.0
#: Seconds before a timed run's end at which a backend that builds pipelines stops drawing examples,
#: for its close (at most a twentieth of the budget).
CLOSE_RESERVE_S = 3.0


def process_started() -> float:
    """``time.time()`` when this process started: Linux's ``/proc/self/stat`` starttime (clock
    ticks after boot) against ``CLOCK_BOOTTIME``, so that a budget counts the interpreter's start-up
    and imports too; now, where that cannot be read."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # the command name, in parentheses, may hold spaces
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return time.time()
    return time.time() - max(age, 0.0)


def examples_deadline(end: float, budget_s: float, builds_pipelines: bool) -> float:
    """When a run that must be over at ``end`` (either clock) stops drawing examples: ``end``, or
    ``CLOSE_RESERVE_S`` (at most a twentieth of ``budget_s``) before it on a backend that builds
    pipelines, whose close publishes them."""
    return end - min(CLOSE_RESERVE_S, budget_s / 20) if builds_pipelines else end


def overtime_message() -> str:
    return (f"the example in flight ran {OVERTIME_S:.0f} s past the deadline (a pipeline build or a dispatch): "
            "it is abandoned there")


@contextmanager
def example_bound(deadline: float | None, stop: Callable[[], None]) -> Iterator[None]:
    """Inside the block, call ``stop()`` (from SIGALRM, in the main thread) ``OVERTIME_S`` after
    ``deadline`` (``time.monotonic()``; None: never). ``stop`` ends the example in flight, typically
    by raising KeyboardInterrupt."""
    with alarm_at(None if deadline is None else deadline + OVERTIME_S, stop):
        yield


class _Late(BaseException):
    """Raised from SIGALRM into a backend's close that ran past its bound."""


def _raise_late() -> None:
    raise _Late


def close_by(backend: Backend, deadline: float | None, say: Callable[[str], None]) -> None:
    """Close ``backend``; one still closing ``CLOSE_BY_S`` after ``deadline`` (monotonic; at least a
    second from now; None: no bound) is interrupted and closed again, which stops a supervised
    backend's process at once (its close is mid-request)."""
    at = None if deadline is None else max(deadline + CLOSE_BY_S, time.monotonic() + 1.0)
    try:
        with alarm_at(at, _raise_late):
            backend.close()
    except _Late:
        say(f"the backend was still closing {CLOSE_BY_S:.0f} s past the deadline (publishing its pipeline cache): "
            "its process was stopped")
        backend.close()
