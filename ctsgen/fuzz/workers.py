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
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
                                      "times": report.times.to_json(), "failures": len(report.failures)}))


def summary(records: Sequence[dict[str, Any]], workers: int, wall_s: float) -> str:
    """The workers' totals: cases per second together over ``wall_s``, and the summed breakdown."""
    cases = sum(r["cases"] for r in records)
    times = Breakdown()
    for r in records:
        times.merge(r["times"])
    missing = f" ({workers - len(records)} worker(s) wrote no report)" if len(records) < workers else ""
    head = (f"{workers} workers together: {sum(r['examples'] for r in records)} examples, {cases} cases in "
            f"{wall_s:.1f}s ({cases / wall_s if wall_s else 0.0:.0f} cases/s){missing}")
    return head + "\n" + times.summary(None, cases, title="where the workers' time went (summed)")


def run_workers(argv: Sequence[str], workers: int, seed: int, devices: Sequence[int]) -> int:
    """Start the workers, stream each one's output with a prefix as it comes, print their totals,
    return the worst exit status."""
    env = dict(os.environ)
    for var in SINGLE_THREADED:
        env.setdefault(var, "1")
    lock = threading.Lock()

    def pump(index: int, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if not line.startswith("fuzzing ["):
                with lock:
                    sys.stdout.write(f"[worker {index}] {line}")
                    sys.stdout.flush()

    with tempfile.TemporaryDirectory(prefix="ctsgen-workers-") as tmp:
        reports = [Path(tmp) / f"worker-{i}.json" for i in range(workers)]
        began = time.monotonic()
        # through CTSGEN_WORKER_LAUNCHER, as the supervised worker is (a private loader's prefix)
        launcher = worker_launcher()
        procs = [subprocess.Popen([*launcher, sys.executable, "-m", "ctsgen",
                                   *worker_argv(argv, i, seed, devices, reports[i])],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                  start_new_session=True)  # a signal reaches them once, from forward()
                 for i in range(workers)]
        threads = [threading.Thread(target=pump, args=(i, p), daemon=True) for i, p in enumerate(procs)]
        for t in threads:
            t.start()

        def forward(signum: int, frame: object) -> None:  # each worker ends like an interrupted fuzz: a report
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)

        previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            codes = [p.wait() for p in procs]
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
        wall = time.monotonic() - began
        for t in threads:
            t.join(timeout=5)
        records = [json.loads(r.read_text()) for r in reports if r.exists()]
    print(summary(records, workers, wall))
    return max(codes)
