"""``ctsgen fuzz --workers N``: N fuzzer processes sharing one example database.

Each worker is an ordinary ``ctsgen fuzz`` process with its own seed
(the given seed + 1000 * worker index) and, with ``--ctsgen``-style
device pinning, its own GPU (``--device`` K mod the device list). They
share ``--database`` (a directory, or ``redis://`` across machines), so a
failure one worker stores is replayed first by every worker's next round
and by every later run. The exit status is the worst of the workers'.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence


def worker_argv(argv: Sequence[str], index: int, seed: int, devices: Sequence[int]) -> list[str]:
    """Worker ``index``'s command line: the parent's, one worker, its own seed and device."""
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
    return out


def run_workers(argv: Sequence[str], workers: int, seed: int, devices: Sequence[int]) -> int:
    """Start the workers, stream each one's output with a prefix, return the worst exit status."""
    procs = [subprocess.Popen([sys.executable, "-m", "ctsgen", *worker_argv(argv, i, seed, devices)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(workers)]
    codes = []
    for i, p in enumerate(procs):
        assert p.stdout is not None
        for line in p.stdout:
            if not line.startswith("fuzzing ["):
                sys.stdout.write(f"[worker {i}] {line}")
        codes.append(p.wait())
    return max(codes)
