"""A campaign session on one host: one worker process per device, stopped together.

``start`` writes the configuration, ``resume`` reads it; both then start
``config.workers`` processes (``ctsgen campaign worker DIR --index K``),
worker K on device ``devices[K mod len(devices)]`` as ``ctsgen fuzz
--workers`` does, and stream their output with a ``[hH-wK]`` prefix.
SIGTERM or Ctrl-C is passed to every worker, which ends its round and
journals it; the session's end is written to ``DIR/sessions.jsonl``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from ctsgen.campaign import CampaignError
from ctsgen.campaign.store import CampaignConfig, CampaignDir, worker_id


def session_budget(cdir: CampaignDir, time_s: float | None) -> float | None:
    """Seconds this session may fuzz: ``time_s`` when given, else what is left of the
    campaign's budget (None: until stopped)."""
    if time_s is not None:
        return time_s
    budget = cdir.config().time_s
    if budget is None:
        return None
    left = budget - cdir.time_spent()
    if left <= 0:
        raise CampaignError(f"{cdir.root} has spent its {budget:.0f} s budget -> "
                            f"`ctsgen campaign resume {cdir.root} --time SECONDS` fuzzes on, "
                            f"`ctsgen campaign report {cdir.root}` writes the report")
    return left


def worker_argv(cdir: CampaignDir, config: CampaignConfig, index: int, time_s: float | None) -> list[str]:
    argv = [sys.executable, "-m", "ctsgen", "campaign", "worker", str(cdir.root), "--index", str(index)]
    if config.devices:
        argv += ["--device", str(config.devices[index % len(config.devices)])]
    if time_s is not None:
        argv += ["--time", f"{time_s:.3f}"]
    return argv


def run_session(cdir: CampaignDir, time_s: float | None, kind: str,
                out: Callable[[str], None] = lambda line: (sys.stdout.write(line), sys.stdout.flush())) -> int:
    """Run every worker of this host until the budget is spent or a stop signal; the worst exit status."""
    config = cdir.config()
    budget = session_budget(cdir, time_s)
    began = time.time()
    procs = [subprocess.Popen(worker_argv(cdir, config, k, budget), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
             for k in range(config.workers)]
    stopped = []

    def forward(signum: int, frame: object) -> None:  # every worker ends its round and journals it
        stopped.append(signal.Signals(signum).name)
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}

    def pump(k: int, p: subprocess.Popen) -> None:
        assert p.stdout is not None
        for line in p.stdout:
            out(f"[{worker_id(config.host, k)}] {line}")

    threads = [threading.Thread(target=pump, args=(k, p), daemon=True) for k, p in enumerate(procs)]
    for t in threads:
        t.start()
    try:
        codes = [p.wait() for p in procs]
        for t in threads:
            t.join(timeout=5)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    cdir.add_session({"kind": kind, "host": config.host, "began": began, "ended": time.time(),
                      "budget_s": budget, "stopped_by": stopped[0] if stopped else None, "exit": max(codes)})
    out(f"campaign {cdir.root}: {'stopped by ' + stopped[0] if stopped else 'budget spent'}; "
        f"{sum(cdir.cases_by_family().values())} cases, {len(cdir.buckets())} buckets; "
        f"`ctsgen campaign resume {cdir.root}` continues, `ctsgen campaign report {cdir.root}` reports\n")
    return max(codes)
