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
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from ctsgen.errors import CtsgenError
from ctsgen.signals import holding, leave_interrupts_to_the_parent, on_stop

T = TypeVar("T")


def usable_jobs(jobs: int, items: int | None = None) -> int:
    """The worker processes to start for ``jobs`` asked: never more than the cores this machine has
    (more only compete for them) nor than the ``items`` of work, and at least one."""
    return max(1, min(jobs, os.cpu_count() or 1, jobs if items is None else items))


class WorkerPool:
    """``processes`` worker processes, each with a pipe of its own to the parent: no lock or queue is
    shared between processes, so a worker ended anywhere (mid-send of a result included) leaves
    nothing that another process waits on. ``multiprocessing.Pool`` shares its result queue's lock:
    ``terminate`` could end a worker that held it, and the pool's task thread then waited for that
    lock for good (``generate`` hung as it left on an error; tests/test_throughput.py)."""

    def __init__(self, processes: int, context: Any) -> None:
        self._context = context
        self._workers: list[tuple[Any, Connection]] = []
        try:
            self._start(processes)
        except BaseException:  # the workers started so far end with it
            self.terminate()
            raise

    def _start(self, processes: int) -> None:
        started = self._context.Semaphore(0)
        for _ in range(processes):
            mine, theirs = self._context.Pipe()
            proc = self._context.Process(target=_serve, args=(theirs, started), daemon=True)
            self._workers.append((proc, mine))
            proc.start()
            theirs.close()  # the worker's end lives in the worker only: its death is this end's EOF
        for _ in range(processes):  # see _started
            started.acquire(timeout=STARTED_WITHIN_S)

    def imap(self, fn: Callable[[T], Any], work: Iterable[T], chunksize: int = 1) -> Iterator[Any]:
        """``fn(item)`` of every item, in input order, ``chunksize`` items a message; a worker's
        exception is raised where its item's result would be. One iteration at a time per pool
        (the workers answer the one that handed them work)."""
        chunks = enumerate(_chunks(work, max(1, chunksize)))
        busy: dict[Connection, int] = {}
        done: dict[int, tuple[bool, Any]] = {}

        def feed(conn: Connection) -> None:
            for k, chunk in chunks:
                busy[conn] = k
                conn.send((fn, chunk))
                return

        for _, conn in self._workers:
            feed(conn)
        following = 0
        while busy or following in done:
            while following in done:
                ok, value = done.pop(following)
                if not ok:
                    raise value
                yield from value
                following += 1
            if not busy:
                break
            for conn in wait(list(busy)):
                try:
                    done[busy.pop(conn)] = conn.recv()
                except EOFError:
                    raise WorkerError("a worker process ended without its result (killed?) -> run the command "
                                      "again; if it recurs, with --jobs 1") from None
                feed(conn)

    def terminate(self) -> None:
        """End every worker now (SIGTERM, which each leaves at its default: see _started) and reap it."""
        for proc, _ in self._workers:
            if proc.exitcode is None:
                proc.terminate()
        for proc, conn in self._workers:
            proc.join(TERMINATED_WITHIN_S)
            if proc.exitcode is None:  # pragma: no cover - SIGTERM ends a started worker at once
                proc.kill()
                proc.join()
            conn.close()


#: Seconds a worker may take to end after SIGTERM before it is sent SIGKILL.
TERMINATED_WITHIN_S = 10.0


def _chunks(work: Iterable[T], size: int) -> Iterator[list[T]]:
    chunk: list[T] = []
    for item in work:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _serve(conn: Connection, started: Any) -> None:
    """A worker: run each ``(fn, items)`` the parent sends, send back ``(True, results)`` or
    ``(False, exception)``, until the parent's end closes."""
    _started(started)
    while True:
        try:
            fn, items = conn.recv()
        except EOFError:
            return
        try:
            reply: tuple[bool, Any] = (True, [fn(item) for item in items])
        except Exception as exc:  # noqa: BLE001 - the parent raises it (in_order keeps it picklable)
            reply = (False, exc)
        conn.send(reply)


@contextmanager
def worker_pool(jobs: int) -> Iterator[WorkerPool]:
    """``jobs`` worker processes; use ``pool.imap`` for results in order. Leaving the block,
    however it is left, terminates the workers rather than waiting for them.

    A stop signal is held back while the pool starts (:func:`ctsgen.signals.holding`, Python's
    handler, which runs in the main thread whichever thread the kernel picks) and raised once the
    pool can be terminated: a pool interrupted half-way would leave workers that nothing
    terminates (docs/validation.md, "Stopping generate")."""
    held: list[int] = []
    processes = usable_jobs(jobs)
    pool: WorkerPool | None = None
    try:
        with on_stop(holding(held)):
            pool = WorkerPool(processes, multiprocessing.get_context())
        for s in held[:1]:
            signal.raise_signal(s)  # the held signal, now where the pool is terminated
        yield pool
    finally:
        if pool is not None:
            pool.terminate()


#: Seconds a worker process may take to start (its initializer) before the pool is used without it.
STARTED_WITHIN_S = 30.0


def _started(started: Any) -> None:
    """A worker's first step: stop signals as :func:`leave_interrupts_to_the_parent` sets them,
    then say so. The pool is handed out only once every worker has said so: a SIGTERM that
    reaches a worker in the instant after its fork, before Python has reset its signal state
    there, is dropped, and such a worker outlived ``terminate``."""
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


def in_order(pool: WorkerPool, fn: Callable[[T], Any], work: Iterable[T], chunksize: int = 1) -> Iterator[Any]:
    """``pool.imap(fn, work)`` (results in input order) whose workers' errors all reach the parent."""
    return pool.imap(functools.partial(_portable, fn), work, chunksize=chunksize)
