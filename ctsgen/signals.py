"""The stop signals, handled in one place: what a command does on Ctrl-C or SIGTERM, and what a
worker process it starts does with them.

A command installs its handler for the length of a block (:func:`on_stop`) and gets the previous
handlers back however the block ends. Ctrl-C reaches the whole process group, so a worker process
leaves it to its parent (:func:`leave_interrupts_to_the_parent`): the parent alone decides what an
interrupt means, and it ends a worker with SIGTERM. :func:`stops_held` defers them over a few
renames that must land together. :func:`alarm_at` bounds a block in time
(SIGALRM): a campaign worker's example in flight, and its backend's close, after the deadline.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: The signals that end a command.
STOPS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def on_stop(handler: Callable[[int, object], object]) -> Iterator[None]:
    """``handler(signum, frame)`` for SIGINT and SIGTERM inside the block. Every handler installed is
    restored, even when a signal lands between two installations. Outside the main thread (an
    embedding program) the signals are not the caller's, and are left alone."""
    saved = {}
    try:
        try:
            for s in STOPS:  # noted before it is replaced: whatever lands after, the finally restores
                saved[s] = signal.getsignal(s)
                signal.signal(s, handler)
        except ValueError:
            pass
        yield
    finally:
        for s, previous in saved.items():
            signal.signal(s, previous)


@contextmanager
def stops_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the block runs (files renamed into place that must agree), then
    deliver the first that came: a stop never lands between them."""
    held: list[int] = []
    with on_stop(lambda signum, frame: held.append(signum)):
        yield
    for s in held[:1]:
        signal.raise_signal(s)


def leave_interrupts_to_the_parent() -> None:
    """In a worker process: ignore Ctrl-C (the parent's to handle) and let SIGTERM end it at once,
    whatever handler it inherited."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def holding(held: list[int]) -> Callable[[int, object], None]:
    """A stop handler that holds each stop signal for this process (appends it to ``held``), for a
    parent that forks workers and acts on the signal once they can be stopped. A worker forked
    while it is installed inherits it until its own setup runs: there it does what
    :func:`leave_interrupts_to_the_parent` sets, so SIGTERM still ends the worker at once."""
    parent = os.getpid()

    def hold(signum: int, frame: object) -> None:
        if os.getpid() != parent:
            leave_interrupts_to_the_parent()
            if signum == signal.SIGTERM:
                os.kill(os.getpid(), signum)
            return
        held.append(signum)

    return hold


@contextmanager
def alarm_at(at: float | None, act: Callable[[], None]) -> Iterator[None]:
    """Call ``act()`` (from SIGALRM, in the main thread) once ``time.monotonic()`` reaches ``at``,
    unless the block has ended; None: never."""
    if at is None:
        yield
        return
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: act())
    signal.setitimer(signal.ITIMER_REAL, max(at - time.monotonic(), 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
