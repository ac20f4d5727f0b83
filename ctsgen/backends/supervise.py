"""Device work in a supervised worker process: hangs and crashes become verdicts.

A driver under test may never signal a fence, lose the device, or take
the process down. :class:`SupervisedBackend` runs a backend in a child
process and gives every request a bounded wait: past it the worker is
killed and the dispatch raises :class:`DispatchTimeout`; a worker that dies
raises :class:`WorkerCrashed`; a lost device raises :class:`DeviceLost`.
In each case the worker is replaced on the next request, so the run goes
on. The backend is built in the child by ``factory`` (a picklable
callable, e.g. a class or a ``functools.partial``).

The worker is a fresh interpreter (multiprocessing's spawn executes ``sys.executable``).
A program started through a launcher, such as a private dynamic loader that brings a
newer glibc and Vulkan loader (README, "lavapipe"), would start its worker without it:
``CTSGEN_WORKER_LAUNCHER`` names that launcher (a command line; it is given the
interpreter and its arguments), and the worker and multiprocessing's resource tracker
are then started through it.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shlex
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing import util as mp_util
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from ctsgen.backends.base import BUILD_BUDGET_S, Backend, as_backend, build_seconds, validation_messages
from ctsgen.errors import BackendError, BuildTimeout, DeviceLost, DispatchTimeout, WorkerCrashed
from ctsgen.core.shader import Dispatch, ShaderVariant
from ctsgen.device.profile import DeviceProfile
from ctsgen.errors import UserError
from ctsgen.signals import leave_interrupts_to_the_parent

#: Extra seconds the supervisor waits beyond a dispatch's own timeout, for
#: the worker to report the timeout itself (and to build a pipeline).
GRACE_S = 20.0
START_TIMEOUT_S = 120.0
PREPARE_S_PER_VARIANT = 2.0
#: Bound on building one variant's pipeline before its first dispatch, by default (``--build-budget``).
#: A driver can take minutes for some large flexible-size pipelines (docs/validation.md, the decode
#: Timeout triage and "lavapipe build time"): past this bound the verdict is BuildTimeout, not a
#: dispatch Timeout.
BUILD_TIMEOUT_S = BUILD_BUDGET_S
#: The command the worker process is started through (see the module's docstring).
WORKER_LAUNCHER_ENV = "CTSGEN_WORKER_LAUNCHER"


def worker_launcher() -> list[str]:
    """``CTSGEN_WORKER_LAUNCHER`` as a command (its program resolved to a path); [] if unset."""
    words = shlex.split(os.environ.get(WORKER_LAUNCHER_ENV, ""))
    if not words:
        return []
    program = shutil.which(words[0])
    if program is None:
        raise UserError(f"{WORKER_LAUNCHER_ENV}={os.environ[WORKER_LAUNCHER_ENV]!r}: {words[0]} is not an "
                        f"executable program -> name the launcher's path, or unset {WORKER_LAUNCHER_ENV}")
    return [os.path.abspath(program), *words[1:]]


@contextmanager
def _started_through(launcher: Sequence[str]) -> Iterator[None]:
    """Within the block, processes multiprocessing spawns (a worker, the resource tracker it
    starts first) run ``launcher`` with the interpreter's command line as arguments.
    Both call ``multiprocessing.util.spawnv_passfds(path, args, fds)`` with ``args[0]``
    the interpreter (``path`` encoded, as ``multiprocessing.spawn.get_executable`` gives it);
    the launcher's command is put in front."""
    if not launcher:
        yield
        return
    original = mp_util.spawnv_passfds

    def spawnv_passfds(path: bytes, args: Sequence[str | bytes], passfds: Sequence[int]) -> int:
        return original(os.fsencode(launcher[0]), [*launcher, *args], passfds)

    mp_util.spawnv_passfds = spawnv_passfds
    try:
        yield
    finally:
        mp_util.spawnv_passfds = original


def _serve(conn: Connection, factory: Callable[[], Backend], build_budget_s: float = BUILD_TIMEOUT_S) -> None:
    """The worker: build the backend, then answer requests until told to close.

    A backend that bounds its own builds (a ``build_budget_s`` attribute: the Vulkan backend) gets
    the supervisor's bound, so that whichever of the two sees the budget spent first, the verdict is
    BuildTimeout. Each answer to ``run`` and ``prepare`` carries the build seconds of the variants
    built since the last answer (``build_seconds``), for the supervisor's :meth:`build_seconds`.

    A ``prepare_soon`` request gets no answer: the worker says when the build starts and
    when it has ended (``("phase", "build")``, ``("phase", "built")``), and the supervisor
    reads those while it waits for its next request's answer, which bounds the build by
    ``build_timeout_s`` as a dispatch's own build is bounded. Its seconds are counted as
    ``ahead_s``, not ``prepare_s``: they overlapped the supervisor's own work.

    Ctrl-C reaches the whole process group: the supervisor alone decides what it means (it
    closes or kills this worker), so the worker ignores SIGINT rather than die with a traceback."""
    leave_interrupts_to_the_parent()
    try:
        backend = as_backend(factory())
        if hasattr(backend, "build_budget_s"):
            backend.build_budget_s = build_budget_s
        conn.send(("ok", backend.profile()))
    except BaseException as exc:  # report anything, including missing drivers
        conn.send(("error", type(exc).__name__, str(exc)))
        return
    built: set[str] = set()  # variants whose pipeline this worker has built (or tried to)
    timed: dict[str, float] = {}  # build seconds already sent to the supervisor

    def builds(variants: Sequence[ShaderVariant]) -> dict[str, float]:
        """The build seconds of ``variants`` not sent yet."""
        out = {}
        for v in variants:
            seconds = build_seconds(backend, v.id)
            if seconds is not None and timed.get(v.id) != seconds:
                out[v.id] = timed[v.id] = seconds
        return out
    ahead = {"ahead_s": 0.0}  # seconds of prepare_soon builds, within the backend's prepare_s

    def stats() -> dict[str, float]:
        out = dict(backend.stats)
        if ahead["ahead_s"]:
            out["prepare_s"] = out.get("prepare_s", 0.0) - ahead["ahead_s"]
            out.update(ahead)
        return out

    while True:
        try:
            request = conn.recv()
        except EOFError:
            break
        op = request[0]
        try:
            if op == "run":
                variant = request[1].variant
                if variant.id not in built:
                    conn.send(("phase", "build"))  # the supervisor bounds the build on its own
                    backend.prepare([variant])
                    built.add(variant.id)
                    conn.send(("phase", "dispatch"))
                outputs = backend.run(request[1], request[2])
                conn.send(("ok", (outputs, stats(), validation_messages(backend), builds([variant]))))
            elif op == "prepare_soon":
                todo = [v for v in request[1] if v.id not in built]
                if todo:
                    conn.send(("phase", "build"))
                    t0 = time.perf_counter()
                    try:
                        backend.prepare(todo)
                    except Exception:  # noqa: BLE001 - nobody waits for this answer: each variant's own
                        pass  # dispatch builds it again and reports what is wrong, as its own verdict
                    else:
                        built.update(v.id for v in todo)
                    ahead["ahead_s"] += time.perf_counter() - t0
                    conn.send(("phase", "built"))
            elif op == "prepare":
                backend.prepare(request[1])
                built.update(v.id for v in request[1])
                conn.send(("ok", (stats(), builds(request[1]))))
            elif op == "stats":
                conn.send(("ok", stats()))
            elif op == "close":
                backend.close()
                conn.send(("ok", None))
                break
        except BaseException as exc:
            conn.send(("error", type(exc).__name__, str(exc)))
            if isinstance(exc, (DispatchTimeout, BuildTimeout, DeviceLost)):
                break  # this process's device is unusable (busy or lost): let the supervisor replace it


_ERRORS: dict[str, type[BackendError]] = {"DispatchTimeout": DispatchTimeout, "DeviceLost": DeviceLost}


class SupervisedBackend(Backend):
    """A :class:`~ctsgen.backends.base.Backend` whose work runs in a replaceable child process."""

    def __init__(self, factory: Callable[[], Backend], name: str = "supervised",
                 grace_s: float = GRACE_S, build_timeout_s: float = BUILD_TIMEOUT_S) -> None:
        self.name = name
        self.factory = factory
        self.grace_s = grace_s
        self.build_timeout_s = build_timeout_s
        self._ctx = mp.get_context("spawn")
        self._launcher = worker_launcher()
        self._proc: Any = None
        self._conn: Connection | None = None
        self._profile: DeviceProfile | None = None
        self.restarts = 0
        self.restart_s = 0.0  # time spent starting replacement workers
        self._messages: list[str] = []  # validation messages not yet taken (validation_messages)
        self._done_stats: dict[str, float] = {}  # summed over workers that are gone
        self._builds: dict[str, float] = {}  # variant id -> seconds of its latest build, in any worker
        self._live_stats: dict[str, float] = {}  # the current worker's backend stats
        #: a request was sent and its answer not yet read: an exception that abandons the wait (SIGTERM
        #: or Ctrl-C raised inside it) leaves that answer in the pipe, where the next request would read it
        self._awaiting = False
        #: a prepare_soon build may still be running: closing then stops the worker instead of
        #: waiting (up to build_timeout_s) for a build nobody needs
        self._building_soon = False
        self._start()

    # -- worker lifecycle ------------------------------------------------
    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child, self.factory, self.build_timeout_s), daemon=True)
        with _started_through(self._launcher):
            self._proc.start()
        child.close()
        self._conn = parent
        reply = self._request(None, START_TIMEOUT_S, "starting the backend")
        self._profile = self._profile or reply

    def _kill(self) -> None:
        for k, v in self._live_stats.items():
            self._done_stats[k] = self._done_stats.get(k, 0) + v
        self._live_stats = {}
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
        if self._proc is not None:
            self._proc.join(10)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None
        self._awaiting = False

    def _ensure(self) -> None:
        """Start a new worker if the last one was killed or died, or if an abandoned request
        left the pipe out of step (its pipelines are then rebuilt lazily, one per variant at
        its first dispatch)."""
        if self._awaiting:
            self._kill()
        if self._proc is None:
            t0 = time.monotonic()
            self.restarts += 1
            self._start()
            self.restart_s += time.monotonic() - t0

    def _request(self, message: tuple | None, wait_s: float, what: str, variant_id: str | None = None) -> Any:
        """Send ``message`` (None: just wait for the greeting) and wait at most ``wait_s``.

        A worker about to build a pipeline says so (``("phase", "build")``): the build
        then has its own bound, ``build_timeout_s``, and exceeding it raises
        :class:`BuildTimeout` naming ``variant_id``; the ``wait_s`` bound restarts
        when the worker says the dispatch begins (``"dispatch"``) or that a build
        started by :meth:`prepare_soon` has ended (``"built"``)."""
        assert self._conn is not None
        phase_start = time.monotonic()
        waited: float | None = None  # how long this request waited for its answer
        phase, bound = "dispatch", wait_s
        try:
            # set before sending: a signal landing just after send returns must not leave an answer
            # on the pipe that the next request (close's) would read as its own
            self._awaiting = True
            if message is not None:
                self._conn.send(message)
            self._building_soon = False  # this request's answer comes after any build started before it
            while True:
                ready = self._conn.poll(max(0.0, phase_start + bound - time.monotonic()))
                if not ready:
                    break
                reply = self._conn.recv()
                if reply[0] != "phase":
                    break
                phase, phase_start = reply[1], time.monotonic()
                bound = self.build_timeout_s if phase == "build" else wait_s
            waited = time.monotonic() - phase_start  # the dispatch's own wait, after any build
        except (BrokenPipeError, EOFError, OSError):
            ready, reply = True, None  # the worker is gone; recv below says how
        if not ready:
            self._kill()
            if phase == "build":
                raise BuildTimeout(variant_id or what, time.monotonic() - phase_start, self.build_timeout_s)
            timeout = DispatchTimeout(f"{what}: no answer within {wait_s:.1f} s; the worker was killed")
            timeout.waited_s = waited
            raise timeout
        try:
            if reply is None:
                reply = self._conn.recv()
            self._awaiting = False
        except (EOFError, OSError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._kill()
            how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            raise WorkerCrashed(f"{what}: the worker process died ({how})") from None
        if reply[0] == "error":
            _, kind, text = reply
            if kind == "BuildTimeout":  # the worker's backend saw the budget spent before this bound did
                self._kill()
                raise BuildTimeout(variant_id or what, time.monotonic() - phase_start, self.build_timeout_s)
            if kind in _ERRORS:
                self._kill()
                error = _ERRORS[kind](text)
                if isinstance(error, DispatchTimeout):
                    error.waited_s = waited
                raise error
            if message is None:
                self._kill()
            raise BackendError(text if kind == "BackendError" else f"{kind}: {text}")
        return reply[1]

    # -- Backend protocol --------------------------------------------------
    def profile(self) -> DeviceProfile:
        assert self._profile is not None
        return self._profile

    def prepare(self, variants: Sequence[ShaderVariant]) -> None:
        """Forward to the worker's backend (building pipelines ahead, where it can)."""
        self._ensure()
        stats, builds = self._request(("prepare", list(variants)),
                                      self.build_timeout_s + PREPARE_S_PER_VARIANT * len(variants),
                                      "preparing pipelines")
        self._fold_stats(stats)
        self._builds.update(builds)

    def prepare_soon(self, variants: Sequence[ShaderVariant]) -> None:
        """Ask the worker to build ``variants`` and return at once (see :func:`_serve`): the
        build runs while the caller computes its data; the next request's wait covers it."""
        self._ensure()
        assert self._conn is not None
        try:
            self._conn.send(("prepare_soon", list(variants)))
        except (BrokenPipeError, OSError):
            return  # the worker is gone: the next request finds out and says how
        self._building_soon = True

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        self._ensure()
        outputs, stats, messages, builds = self._request(
            ("run", dispatch, timeout_s), timeout_s + self.grace_s,
            f"shader variant {dispatch.variant.id}, {dispatch.workgroups} cases", variant_id=dispatch.variant.id)
        self._fold_stats(stats)
        self._messages += messages
        self._builds.update(builds)
        return outputs

    def build_seconds(self, variant_id: str) -> float | None:
        """Seconds of the latest build of ``variant_id`` in a worker (see ``base.build_seconds``), as its
        worker reported it with the answer to a dispatch or a prepare; None if none did."""
        return self._builds.get(variant_id)

    def validation_messages(self) -> list[str]:
        """The worker's validation messages that came back with its dispatches since the last call."""
        out, self._messages = self._messages, []
        return out

    def _fold_stats(self, stats: dict[str, float] | None) -> None:
        if stats:
            self._live_stats = dict(stats)

    @property
    def stats(self) -> dict[str, float]:
        """The backend's stats summed over every worker, plus the supervisor's own."""
        total = dict(self._done_stats)
        for k, v in self._live_stats.items():
            total[k] = total.get(k, 0) + v
        total["worker_restarts"] = self.restarts
        total["restart_s"] = self.restart_s
        return total

    def close(self) -> None:
        if self._proc is not None and not self._awaiting and not self._building_soon:
            # else the worker is mid-request or mid-build: just stop it
            try:
                self._fold_stats(self._request(("stats",), 10.0, "reading stats"))
                self._request(("close",), 30.0, "closing the backend")
            except BackendError:
                pass
        self._kill()
