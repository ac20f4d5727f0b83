"""``ctsgen campaign``: long fuzz campaigns over GPUs and hosts (start, resume, status, report)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctsgen.cli.common import worker_count
from ctsgen.cli.options import add_options
from ctsgen.core.argtypes import nonneg_int, positive_float, positive_int
from ctsgen.backends.registry import backend_factory
from ctsgen.mutants.deviations import check_deviations
from ctsgen.families import families, get_family
from ctsgen.fuzz import workers as fuzz_workers


def cmd_campaign(args: argparse.Namespace) -> int:
    from ctsgen.campaign.store import CampaignConfig, CampaignDir  # local: startup

    cdir = CampaignDir(args.dir)
    if args.action == "start":
        from ctsgen.campaign.store import MAX_WORKERS, round_seed  # local: startup

        names = [get_family(f).name for f in args.family] if args.family else sorted(families())
        workers = args.workers or min(fuzz_workers.default_workers(), MAX_WORKERS)  # the host's cores, over its GPUs
        round_seed(args.seed, args.host_id, workers - 1, 0)  # host and worker ids within range
        backend_factory(args.backend)  # an unknown backend: one line now, not one per worker
        deviations = check_deviations(args.expect_deviation or ())
        cdir.create(CampaignConfig(
            families=names, backend=args.backend, workers=workers, host=args.host_id, seed=args.seed,
            devices=list(args.devices or []), database=args.database, round_examples=args.round_examples,
            max_batch=args.max_batch, min_batch=args.min_batch, shrink_time_s=args.shrink_time,
            timeout_s=args.timeout, time_s=args.time, include_hazardous=args.include_hazardous,
            expect_deviations=list(deviations)))
    if args.action in ("start", "resume"):
        from ctsgen.campaign.run import run_session  # local: startup

        code = run_session(cdir, args.time if args.action == "resume" else None, args.action, started=args.started)
        return code if code else (1 if cdir.buckets() else 0)
    if args.action == "worker":
        return _campaign_worker(cdir, args)
    if args.action == "status":
        from ctsgen.campaign.report import status_text  # local: startup

        print(status_text(cdir))
        return 0
    from ctsgen.campaign.report import write_report  # local: startup

    md, html = write_report(cdir, Path(args.out) if args.out else None)
    print(f"wrote {md} and {html}")
    return 0


def _campaign_worker(cdir, args: argparse.Namespace) -> int:
    """One device-owning worker process of a campaign session (started by start/resume)."""
    from ctsgen.campaign.worker import serve  # local: startup

    return serve(cdir, args.index, args.device, args.until, args.worker_report)


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    ca = sub.add_parser("campaign", help="long fuzz campaigns over GPUs and hosts: start, resume, status, report")
    casub = ca.add_subparsers(dest="action", required=True)
    cs = casub.add_parser("start", help="create a campaign directory and fuzz until --time or SIGTERM/Ctrl-C")
    cs.add_argument("dir", help="the campaign directory (new or empty)")
    cs.add_argument("--family", action="append", help="family to fuzz (repeatable; default: every family)")
    add_options(cs, "backend")
    cs.add_argument("--time", type=positive_float,
                    help="fuzzing budget in seconds over every session (default: until stopped)")
    cs.add_argument("--workers", type=worker_count,
                    help="worker processes on this host (default and most: one per core), spread over --devices")
    add_options(cs, "devices")
    cs.add_argument("--host-id", type=nonneg_int, default=0,
                    help="this host's id when hosts share --database: seeds never overlap (default: 0)")
    cs.add_argument("--seed", type=int, default=0, help="campaign seed; every round's seed derives from it")
    cs.add_argument("--database", help="example database shared with other hosts: redis://HOST:PORT or a "
                                       "directory (default: DIR/db; redis:// is mirrored there)")
    cs.add_argument("--round-examples", type=positive_int, default=200, help="examples per round (default: 200)")
    add_options(cs, "max-batch", "min-batch")  # a campaign's examples are sized as fuzz's
    add_options(cs, "shrink-time", "timeout", "expect-deviation", "include-hazardous", shrink_time=60.0)
    cr = casub.add_parser("resume", help="continue a stopped campaign with its next rounds")
    cr.add_argument("dir", help="the campaign directory")
    cr.add_argument("--time", type=positive_float,
                    help="fuzz this many seconds more (default: what is left of the budget)")
    ct = casub.add_parser("status", help="time spent, cases per family, buckets")
    ct.add_argument("dir", help="the campaign directory")
    cp = casub.add_parser("report", help="write DIR/report/report.md and a self-contained report.html")
    cp.add_argument("dir", help="the campaign directory")
    cp.add_argument("--out", help="report directory (default: DIR/report)")
    cw = casub.add_parser("worker", help="(started by start/resume) one device-owning worker process")
    cw.add_argument("dir")
    cw.add_argument("--index", type=nonneg_int, required=True)
    add_options(cw, "device")
    cw.add_argument("--until", type=float, help=argparse.SUPPRESS)  # the session's deadline, time.time()
    cw.add_argument("--worker-report", help=argparse.SUPPRESS)
    ca.set_defaults(func=cmd_campaign)
