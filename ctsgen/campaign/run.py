"""A campaign session on one host: its worker processes, their live line, their stopping.

``start`` writes the configuration, ``resume`` reads it; both then hold the
campaign (:meth:`CampaignDir.session_lock`: a second session of this host is
refused) and start ``config.workers`` processes (``ctsgen campaign worker DIR
--index K``), worker K on device ``devices[K mod len(devices)]``, through the
fan-out ``ctsgen fuzz --workers`` uses (:class:`ctsgen.fuzz.workers.Fleet`:
SIGTERM or Ctrl-C is passed to every worker, which ends its round and
journals it; a worker whose parent dies is sent SIGTERM by the kernel).
Every worker fuzzes until the same deadline, so the session ends within
seconds of its budget. Their lines are printed with a ``[hH-wK]`` prefix
above a live line (:class:`ctsgen.progress.Progress`): time against the
budget, cases/s, buckets and workers alive. The session ends with the
workers' totals and the breakdown of their time, as ``ctsgen fuzz
--workers`` does, and its record in ``DIR/sessions.jsonl``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ctsgen.campaign import CampaignError
from ctsgen.campaign.store import CampaignConfig, CampaignDir, worker_id
from ctsgen.campaign.worker import PROGRESS
from ctsgen.fuzz.workers import Fleet, summary
from ctsgen.progress import Progress


def session_budget(cdir: CampaignDir, time_s: float | None) -> float | None:
    """Seconds this session may fuzz: ``time_s`` when given, else what is left of the
    campaign's budget (None: until stopped)."""
    if time_s is not None:
        return time_s
    budget = cdir.budget()
    if budget is None:
        return None
    left = budget - cdir.time_spent()
    if left <= 0:
        raise CampaignError(f"{cdir.root} has spent its {budget:.0f} s budget -> "
                            f"`ctsgen campaign resume {cdir.root} --time SECONDS` fuzzes on, "
                            f"`ctsgen campaign report {cdir.root}` writes the report")
    return left


def worker_argv(cdir: CampaignDir, config: CampaignConfig, index: int, until: float | None,
                report: Path | None = None) -> list[str]:
    """Worker ``index``'s command line after ``python -m ctsgen``; ``until``: the session's deadline
    (time.time()), the same for every worker."""
    argv = ["campaign", "worker", str(cdir.root), "--index", str(index)]
    if config.devices:
        argv += ["--device", str(config.devices[index % len(config.devices)])]
    if until is not None:
        argv += ["--until", f"{until:.3f}"]
    if report is not None:
        argv += ["--worker-report", str(report)]
    return argv


def _hms(s: float) -> str:
    s = int(max(s, 0))
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def run_session(cdir: CampaignDir, time_s: float | None, kind: str,
                out: Callable[[str], None] | None = None, started: float | None = None) -> int:
    """Run every worker of this host until the budget is spent or a stop signal; the worst exit
    status. The budget counts from ``started`` (``time.time()`` of the command's start; None: now)."""
    with cdir.session_lock():
        return _run_locked(cdir, time_s, kind, out, time.time() if started is None else started)


def _run_locked(cdir: CampaignDir, time_s: float | None, kind: str, out: Callable[[str], None] | None,
                began: float) -> int:
    config = cdir.config()
    spent_before = cdir.time_spent()
    budget = session_budget(cdir, time_s)
    t0 = time.monotonic() - (time.time() - began)
    until = None if budget is None else began + budget
    show = Progress("campaign", stream=sys.stdout)  # with the workers' lines, which go above it
    say = out or show.write
    cases = [0] * config.workers

    def line(k: int, text: str) -> None:
        if text.startswith(PROGRESS):
            cases[k] = json.loads(text[len(PROGRESS):])["cases"]
            return
        say(f"[{worker_id(config.host, k)}] {text.rstrip()}")

    with tempfile.TemporaryDirectory(prefix="ctsgen-campaign-") as tmp:
        reports = [Path(tmp) / f"worker-{k}.json" for k in range(config.workers)]
        fleet = Fleet([worker_argv(cdir, config, k, until, reports[k]) for k in range(config.workers)], line)
        buckets = [0, 0.0]  # count, when counted

        def tick() -> None:
            elapsed = time.monotonic() - t0
            if elapsed - buckets[1] >= 5:  # reading every bucket.json: not every second
                buckets[:] = [len(cdir.buckets()), elapsed]
            total = sum(cases)
            show(int(elapsed), None if budget is None else int(budget),
                 f"{_hms(elapsed)} of {_hms(budget) if budget else 'no budget'}, {total} cases, "
                 f"{total / elapsed if elapsed else 0:.0f} cases/s, {buckets[0]} buckets, "
                 f"{fleet.alive()}/{config.workers} workers")

        try:
            codes = fleet.wait(tick)
        finally:
            show.close()
        wall = time.monotonic() - t0
        records = [json.loads(r.read_text()) for r in reports if r.exists()]
    failed = [(k, c) for k, c in enumerate(codes) if c not in (0, 1)]
    ended = f"stopped by {fleet.stopped_by}" if fleet.stopped_by else \
        f"{len(failed)} of {config.workers} worker(s) failed (exit {failed[0][1]}; see their lines above)" \
        if failed else "budget spent"
    cdir.add_session({"kind": kind, "host": config.host, "began": began, "ended": time.time(),
                      "budget_s": budget, "spent_before": spent_before, "stopped_by": fleet.stopped_by,
                      "failed_workers": [worker_id(config.host, k) for k, _ in failed], "exit": max(codes)})
    (out or (lambda s: (sys.stdout.write(s + "\n"), sys.stdout.flush())))(
        summary(records, config.workers, wall) + "\n"
        f"campaign {cdir.root}: {ended}; {sum(cdir.cases_by_family().values())} cases, {len(cdir.buckets())} "
        f"buckets; `ctsgen campaign resume {cdir.root}` continues, `ctsgen campaign report {cdir.root}` reports")
    return max(codes)
