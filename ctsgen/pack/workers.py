"""The worker processes ``generate`` draws and writes with: results in input order, and nothing
left running when the parent stops early.

A signal (Ctrl-C, SIGTERM) or an error in the parent must end the command at once. A
``concurrent.futures`` pool cannot promise that: its shutdown waits for every task already
handed to a worker, and a signal that lands while ``map`` is still submitting leaves every
task queued, and an interrupted ``generate`` would compile the whole pack before it exits.
This pool is terminated instead: the workers only ever write into the temporary directory the
parent removes, so stopping them mid-task loses nothing.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from typing import Any, TypeVar

from ctsgen.errors import CtsgenError
from ctsgen.signals import holding, leave_interrupts_to_the_parent, on_stop

T = TypeVar("T")


def usable_jobs(jobs: int, items: int | None = None) -> int:
    """The worker processes to start for ``jobs`` asked: never more than the cores this machine has
    (more only compete for them) nor than the ``items`` of work, and at least one."""
    return max(1, min(jobs, os.cpu_count() or 1, jobs if items is None else items))


@contextmanager
def worker_pool(jobs: int) -> Iterator[Pool]:
    """``jobs`` worker processes; use ``pool.imap`` for results in order. Leaving the block,
    however it is left, terminates the workers rather than waiting for them.

    A stop signal is held back while the pool starts (:func:`ctsgen.signals.holding`, Python's
    handler, which runs in the main thread whichever thread the kernel picks) and raised once the
    pool can be terminated: a pool interrupted half-way would leave workers, and the pool's thread
    that re-forks them, that nothing terminates (docs/validation.md, "Stopping generate")."""
    held: list[int] = []
    context = multiprocessing.get_context()
    processes = usable_jobs(jobs)
    started = context.Semaphore(0)
    with on_stop(holding(held)):
        pool = context.Pool(processes, initializer=_started, initargs=(started,))
        for _ in range(processes):  # see _started
            started.acquire(timeout=STARTED_WITHIN_S)
    try:
        for s in held[:1]:
            signal.raise_signal(s)  # the held signal, now where the pool is terminated
        yield pool
    finally:
        pool.terminate()
        pool.join()


#: Seconds a worker process may take to start (its initializer) before the pool is used without it.
STARTED_WITHIN_S = 30.0


def _started(started: Any) -> None:
    """A worker's initializer: stop signals as :func:`leave_interrupts_to_the_parent` sets them,
    then say so. The pool is handed out only once every worker has said so: a SIGTERM that
    reaches a worker in the instant after its fork, before Python has reset its signal state
    there, is dropped, and such a worker outlived ``Pool.terminate`` (which then waited for it
    for good), blocked on the task queue's lock that the terminating parent holds."""
    leave_interrupts_to_the_parent()
    started.release()


class WorkerError(CtsgenError):
    """A worker's error that could not cross back to the parent as it was (kept as its type and message)."""


def _portable(fn: Callable[[T], Any], item: T) -> Any:
    """``fn(item)``, raising only what unpickles in the parent: an exception that does not
    (a constructor whose parameters are not its ``args``) killed the pool's result thread, and
    the parent waited for its answer for good."""
    try:
        return fn(item)
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - whatever pickling raises, the message still crosses
            raise WorkerError(f"a worker process failed with {type(exc).__name__}: {exc} -> a ctsgen bug: report it "
                              "with the command that gave it") from None
        raise


def in_order(pool: Pool, fn: Callable[[T], Any], work: Iterable[T], chunksize: int = 1) -> Iterator[Any]:
    """``pool.imap(fn, work)`` (results in input order) whose workers' errors all reach the parent."""
    return pool.imap(functools.partial(_portable, fn), work, chunksize=chunksize)
