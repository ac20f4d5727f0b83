"""The worker processes ``generate`` draws and writes with: results in input order, and nothing
left running when the parent stops early.

A signal (Ctrl-C, SIGTERM) or an error in the parent must end the command at once. A
``concurrent.futures`` pool cannot promise that: its shutdown waits for every task already
handed to a worker, and a signal that lands while ``map`` is still submitting leaves every
task queued, so an interrupted ``generate`` went on compiling the whole pack before it exited.
This pool is terminated instead: the workers only ever write into the temporary directory the
parent removes, so stopping them mid-task loses nothing.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool


#: The signals that end a command (ctsgen.cliargs.interrupts_as_one_line).
STOPS = {signal.SIGINT, signal.SIGTERM}


def _leave_signals_to_the_parent() -> None:
    """Ctrl-C reaches the whole process group; the parent alone decides what it means. SIGTERM
    (which ``terminate`` sends) ends a worker at once, whatever handler it inherited, and
    neither stays blocked from the parent's mask while it forked (:func:`worker_pool`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


@contextmanager
def worker_pool(jobs: int) -> Iterator[Pool]:
    """``jobs`` worker processes; use ``pool.imap`` for results in order. Leaving the block,
    however it is left, terminates the workers rather than waiting for them.

    A stop signal is held back while the pool starts and delivered once it can be terminated: a
    signal that interrupted ``Pool()`` half-way left its worker handler thread re-forking workers
    that nothing would terminate, and the interrupted ``generate`` printed its one line and then
    hung at exit joining them (a CI run, tests/test_safety.py)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        pool = multiprocessing.get_context().Pool(jobs, initializer=_leave_signals_to_the_parent)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a signal that came meanwhile is raised here
        yield pool
    finally:
        pool.terminate()
        pool.join()
