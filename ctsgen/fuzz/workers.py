"""``ctsgen fuzz --workers N``: N fuzzer processes sharing one example database.

Each worker is an ordinary ``ctsgen fuzz`` process with its own seed
(the given seed + 1000 * worker index) and, with ``--ctsgen``-style
device pinning, its own GPU (``--device`` K mod the device list). They
share ``--database`` (a directory, or ``redis://`` across machines), so a
failure one worker stores is replayed first by every worker's next round
and by every later run. The exit status is the worst of the workers'.

Every worker's output is forwarded as it comes, each line prefixed with
the worker's index. Each worker also writes its counts and time breakdown
(:func:`write_worker_report`) to a file the parent names with the hidden
``--worker-report`` option, in a temporary directory the parent owns; the
parent ends with the workers' totals: cases per second together over the
session's wall time, and the stage breakdown summed over the workers.

The workers already fill the cores, so each one's numeric libraries run
single-threaded (``OPENBLAS_NUM_THREADS`` and its kin, unless the user set
them): N processes each starting a thread per core would oversubscribe them.

:class:`Fleet` is the fan-out itself, shared with campaigns
(:mod:`ctsgen.campaign.run`): the processes, their output as it comes, the
signals passed on, and workers that end when their parent dies (Linux
``PR_SET_PDEATHSIG``: a parent killed with SIGKILL cannot pass SIGTERM on,
so the kernel sends it).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctsgen.signals import on_stop
from ctsgen.backends.supervise import worker_launcher
from ctsgen.timing import Breakdown

if TYPE_CHECKING:
    from ctsgen.fuzz.loop import FuzzReport

#: the numeric libraries' thread-count variables, set to 1 in every worker the user left them unset
SINGLE_THREADED = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def worker_argv(argv: Sequence[str], index: int, seed: int, devices: Sequence[int],
                report: Path | None = None) -> list[str]:
    """Worker ``index``'s command line: the parent's, one worker, its own seed and device,
    and where it writes its report."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--workers", "--seed", "--devices"):
            skip = True
            continue
        if arg.startswith(("--workers=", "--seed=", "--devices=")):
            continue
        out.append(arg)
    out += ["--workers", "1", "--seed", str(seed + 1000 * index)]
    if devices:
        out += ["--device", str(devices[index % len(devices)])]
    if report is not None:
        out += ["--worker-report", str(report)]
    return out


def write_worker_report(path: str | Path, report: FuzzReport) -> None:
    """Write a worker's counts and breakdown for its parent (read after the worker has exited)."""
    Path(path).write_text(json.dumps({"examples": report.examples, "cases": report.cases, "wall_s": report.wall_s,
                                      "times": report.times.to_json(), "failures": len(report.failures),
                                      "absorbed": dict(report.absorbed)}))


#: The stages a worker spends on the host's CPU; the others (pipeline, dispatch, read-back) wait on the device.
HOST_STAGES = ("draw", "data+oracle", "compile", "validate", "judge")


def bound_by(times: Breakdown, workers: int, cores: int) -> str:
    """What bounds the workers' cases/s: the host's CPU where its stages take most of their time and
    the workers fill the cores (more GPUs then add nothing, more cores would), else the share each side has."""
    total = times.total_s
    host = sum(times.seconds.get(s, 0.0) for s in HOST_STAGES) / total if total else 0.0
    if host > 0.5 and workers >= cores:
        return (f"bound by the host's CPU: {host:.0%} of the workers' time is drawing, oracles, compiling and "
                f"judging, {workers} workers on {cores} cores (cases/s grows with cores, not with GPUs)")
    return f"the host's CPU stages take {host:.0%} of the workers' time, the device's {1 - host:.0%}"


def summary(records: Sequence[dict[str, Any]], workers: int, wall_s: float) -> str:
    """The workers' totals: cases per second together over ``wall_s``, the summed breakdown, and
    what bounds it (:func:`bound_by`)."""
    cases = sum(r["cases"] for r in records)
    times = Breakdown()
    for r in records:
        times.merge(r["times"])
    missing = f" ({workers - len(records)} worker(s) wrote no report)" if len(records) < workers else ""
    head = (f"{workers} workers together: {sum(r['examples'] for r in records)} examples, {cases} cases in "
            f"{wall_s:.1f}s ({cases / wall_s if wall_s else 0.0:.0f} cases/s){missing}")
    absorbed: Counter = Counter()
    for r in records:
        absorbed.update(r.get("absorbed") or {})
    told = [f"  {rule}: {n} case(s) that fail by the spec pass under it (all workers)"
            for rule, n in sorted(absorbed.items())]
    return "\n".join([head, times.summary(None, cases, title="where the workers' time went (summed)"),
                      bound_by(times, workers, default_workers()), *told])


#: prctl's option that has the kernel signal a process when its parent dies (linux/prctl.h)
PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets SIGTERM when ``parent`` dies (ends like an interrupted worker,
    journalling its round); a parent already gone ends it at once."""
    def preexec() -> None:
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
    return preexec


def default_workers() -> int:
    """``--workers`` when not given: one per core this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Fleet:
    """``ctsgen`` worker processes: ``argvs[i]`` is worker i's command line after ``python -m ctsgen``.

    Each worker's output lines go to ``on_line(i, line)`` as they come (from one thread per
    worker, under one lock). :meth:`wait` passes SIGTERM and SIGINT on to every worker (each in a
    session of its own, so a terminal's Ctrl-C reaches them once, from here) and returns their exit
    statuses; ``stopped_by`` names the first such signal."""

    def __init__(self, argvs: Sequence[Sequence[str]], on_line: Callable[[int, str], None]) -> None:
        env = dict(os.environ)
        for var in SINGLE_THREADED:
            env.setdefault(var, "1")
        self._lock = threading.Lock()
        self.stopped_by: str | None = None
        launcher = worker_launcher()  # through CTSGEN_WORKER_LAUNCHER, as the supervised worker is
        self.procs = [subprocess.Popen([*launcher, sys.executable, "-m", "ctsgen", *argv], stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
                                       preexec_fn=_die_with(os.getpid()))
                      for argv in argvs]
        self._threads = [threading.Thread(target=self._pump, args=(i, p, on_line), daemon=True)
                         for i, p in enumerate(self.procs)]
        for t in self._threads:
            t.start()

    def _pump(self, index: int, proc: subprocess.Popen, on_line: Callable[[int, str], None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self._lock:
                on_line(index, line)

    def alive(self) -> int:
        return sum(p.poll() is None for p in self.procs)

    def stop(self, signum: int = signal.SIGTERM) -> None:
        if self.stopped_by is None:
            self.stopped_by = signal.Signals(signum).name
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)

    def wait(self, tick: Callable[[], None] | None = None, every_s: float = 1.0) -> list[int]:
        """Every worker's exit status, ``tick()`` called about every ``every_s`` seconds meanwhile."""
        with on_stop(lambda signum, frame: self.stop(signum)):
            for p in self.procs:
                while True:
                    try:
                        p.wait(timeout=every_s)
                        break
                    except subprocess.TimeoutExpired:
                        if tick is not None:
                            tick()
        for t in self._threads:
            t.join(timeout=5)
        return [p.returncode for p in self.procs]


def run_workers(argv: Sequence[str], workers: int, seed: int, devices: Sequence[int]) -> int:
    """Start the workers, stream each one's output with a prefix as it comes, print their totals,
    return the worst exit status."""
    def line(index: int, text: str) -> None:
        if not text.startswith("fuzzing ["):
            sys.stdout.write(f"[worker {index}] {text}")
            sys.stdout.flush()

    with tempfile.TemporaryDirectory(prefix="ctsgen-workers-") as tmp:
        reports = [Path(tmp) / f"worker-{i}.json" for i in range(workers)]
        began = time.monotonic()
        fleet = Fleet([worker_argv(argv, i, seed, devices, reports[i]) for i in range(workers)], line)
        codes = fleet.wait()
        wall = time.monotonic() - began
        records = [json.loads(r.read_text()) for r in reports if r.exists()]
    print(summary(records, workers, wall))
    return max(codes)
