"""``ctsgen fuzz``: draw and run cases live; shrink a failure to a minimal repro."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from ctsgen.backends.base import BUILD_BUDGET_S
from ctsgen.backends.registry import capabilities, check_device, open_backend
from ctsgen.cli.args import check_database, check_writable_dir
from ctsgen.cli.common import warn_unreached, worker_count
from ctsgen.cli.options import add_options
from ctsgen.core.argtypes import positive_float, positive_int
from ctsgen.errors import UserError
from ctsgen.families import DEFAULT_FAMILY
from ctsgen.fuzz.buckets import deviation_explaining
from ctsgen.fuzz.deadline import close_by, example_bound, examples_deadline, overtime_message
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions, default_min_batch
from ctsgen.fuzz.workers import run_workers, write_worker_report
from ctsgen.mutants.deviations import check_deviations
from ctsgen.progress import Progress
from ctsgen.repro import export_failures, replay_command
from ctsgen.results import ci
from ctsgen.results.expectations import Expectations, load_expectations
from ctsgen.runner.options import RunOptions
from ctsgen.signals import on_stop
from ctsgen.timing import start_timeline
from ctsgen.toolchain.findings import message_key, write_finding
from ctsgen.toolchain.routes import DEFAULT_ROUTE, check_available, get_route, parse_routes


def checked_options(args: argparse.Namespace) -> tuple[FuzzOptions, Expectations]:
    """Every check of the command's inputs, before any work (an error: one line, exit 2), and the
    session's options and expectations (a baseline's deviation rules are followed as
    --expect-deviation here)."""
    if args.devices and args.workers == 1:
        raise UserError("--devices spreads --workers over GPUs, and there is one worker -> add --workers N, or "
                        "pick the one GPU with --device K")
    if args.min_batch is not None and args.min_batch > args.max_batch:
        raise UserError(f"--min-batch {args.min_batch} is above --max-batch {args.max_batch}, so no example could "
                        "hold it -> lower --min-batch or raise --max-batch")
    if args.route and args.routes:
        raise UserError("--route and --routes both name routes -> give one: --route R for one route, --routes "
                        "R1,R2 or --routes all to judge routes against each other")
    routes = parse_routes(args.routes) if args.routes else [get_route(args.route or DEFAULT_ROUTE)]
    if len(routes) > 1 and args.workers > 1:
        raise UserError("--routes judges routes in one process; --workers would split its findings -> drop "
                        "--workers, or fuzz one --route per worker command")
    check_available(routes)  # a route this machine lacks: one line, exit 2
    expected = load_expectations(args.baseline or (), args.flakes or ())
    options = FuzzOptions(families=tuple(args.family or [DEFAULT_FAMILY]), max_examples=args.max_examples,
                          time_s=None, seed=args.seed, max_batch=args.max_batch,
                          min_batch=args.min_batch or default_min_batch(args.backend),
                          database=None if args.database == "none" else args.database,
                          expect_deviations=tuple(args.expect_deviation or ()) + tuple(expected.deviations),
                          include_hazardous=args.include_hazardous, shrink_time_s=args.shrink_time,
                          keep_going=args.keep_going, routes=tuple(r.name for r in routes),
                          run=RunOptions(timeout_base_s=args.timeout))
    check_deviations(options.expect_deviations)
    check_device(args.backend, args.device)
    check_database(options.database)  # a failure found and not stored would be lost
    check_writable_dir(args.repro_dir, "--repro-dir")
    return options, expected


def cmd_fuzz(args: argparse.Namespace) -> int:
    # --time counts from the command's start (a --workers worker's: from its parent's), start-up included
    until = args.worker_until if args.worker_until is not None else \
        (args.started + args.time if args.time else None)
    options, expected = checked_options(args)
    if args.workers > 1:
        return run_workers(sys.argv[1:], args.workers, args.seed, list(args.devices or []), until)
    end = None if until is None else time.monotonic() + (until - time.time())
    if end is not None:  # the per-minute breakdown counts from the session's start too
        start_timeline(end - args.time)
    deadline = None if end is None else \
        examples_deadline(end, args.time, not capabilities(args.backend).host_pipelines)
    backend = open_backend(args.backend, args.isolation, args.device, build_budget_s=args.build_budget)
    show = Progress("fuzzing")
    passed_over: Counter = Counter()  # expectation -> failing examples it let pass

    def known(failure) -> bool:
        rule = ci.excused_by(failure.result, expected)
        if rule is not None:
            passed_over[rule] += 1
        return rule is not None

    def found(failure) -> None:  # on its own line, never glued to the progress line
        show.write(f"found: {failure.result.status.value} in {failure.case.name()} ({failure.result.detail}); "
                   f"shrinking for at most {options.shrink_time_s:.0f} s")

    running: list[Fuzzer] = []
    in_run = [False]

    stopped: list[int] = []

    def stop(signum, frame) -> None:  # Ctrl-C or e.g. `timeout`: end with a report and a repro
        stopped.append(signum)
        for f in running:
            f.request_stop()  # in case the interrupt lands in a ctypes callback, which drops it
        raise KeyboardInterrupt

    def overtime() -> None:  # the example in flight at the deadline: abandoned as a stop signal abandons it
        if in_run[0]:
            in_run[0] = False
            show.write(overtime_message())
            stop(0, None)

    try:
        with on_stop(stop):
            total = None if args.time else options.max_examples  # open-ended with --time: a count, no bar
            if deadline is not None:
                options.time_s = max(deadline - time.monotonic(), 0.0)
            fuzzer = Fuzzer(backend, options, progress=lambda r: show(r.examples, total, f"{r.cases} cases"),
                            on_failure=found, known=known)
            running.append(fuzzer)
            for name, why in fuzzer.report.skipped.items():
                show.write(f"skipping {name}: {why}")
            for line in fuzzer.omissions():
                show.write(line)
            try:
                in_run[0] = True
                with example_bound(deadline, overtime):
                    report = fuzzer.run()
            finally:
                in_run[0] = False
                show.close()
        print(f"fuzzed {args.backend} ({', '.join(f.name for f in fuzzer.families)}): {report.examples} examples, "
              f"{report.cases} cases in {report.wall_s:.1f}s ({report.cases_per_s:.0f} cases/s)")
        print(report.times.summary(report.wall_s, report.cases))
        if args.time and args.worker_report is None:  # a worker's goes to its parent, which sums them
            print(report.times.timeline_summary(report.wall_s))
        if report.examples:
            warn_unreached(options.expect_deviations, f"the {report.examples} examples fuzzed")
        if args.worker_report:  # for the parent of --workers (ctsgen.fuzz.workers)
            write_worker_report(args.worker_report, report)
        if args.baseline or args.flakes:
            ends = ci.absorbed_lines(expected, passed_over, report.absorbed)
        else:
            ends = []
        for case, result in report.flakes:  # deqp-runner's Flake: reported, never a failure of the session
            print(f"  Flake: {case.name()}: {result.status.value} ({result.detail}); it did not recur on replay")
        if not report.examples and not report.failures and args.time and not stopped:
            raise UserError(f"--time {args.time:g} was spent before the first example (it counts from the command's "
                            "start, Python's start-up and the backend's opening included): nothing was judged -> "
                            "give --time more seconds")
        route_findings = _report_routes(report, Path(args.repro_dir), fuzzer.routes)
        if not report.failures:
            if route_findings:
                return 1
            print("\n".join(["no failure found" + (f" ({len(report.flakes)} flake(s) above)" if report.flakes
                                                   else ""), *ends]))
            return 0
        print(f"first failure after {report.first_failure_example} examples; {len(report.failures)} failure(s):")
        # the backend is still open: a program's repro gets its debug re-run on it
        budget = None if args.build_budget == BUILD_BUDGET_S else args.build_budget  # replayed as judged
        repros = export_failures(report.failures, Path(args.repro_dir), backend=args.backend,
                                 origin={"fuzz": {"backend": args.backend, "seed": args.seed,
                                                  "families": list(options.families)}},
                                 expect_deviations=options.expect_deviations, debug_backend=backend,
                                 build_budget_s=budget)
        for (case, result), out in zip(report.failures, repros):
            print(f"  {result.status.value}: {case.name()}\n    {result.detail}\n    repro: {out}/REPORT.md; "
                  f"replay: {replay_command(out, args.backend, options.expect_deviations, budget)}")
            deviation = deviation_explaining(backend, case, result, fuzzer.shader(case.variant(), case.family))
            if deviation is not None:
                print(f"    explained by the documented deviation {deviation.name} ({deviation.description}; "
                      f"docs/validation.md): --expect-deviation {deviation.name} judges by it")
        if ends:
            print("\n".join(ends))
        return 1
    finally:
        close_by(backend, deadline, lambda line: print(line, file=sys.stderr))


def _report_routes(report, repro_dir: Path, routes) -> int:
    """Print the cases run per route, the route findings (their buckets also go to
    REPRO_DIR/route-findings.json) and the toolchain findings (each written as a reduced repro:
    :mod:`ctsgen.toolchain.findings`); returns how many findings there are."""
    if len(routes) == 1 and routes[0].is_default and not report.toolchain_findings:
        return 0
    print("routes: " + ", ".join(f"{r.name} {report.route_cases[r.name]} cases" for r in routes))
    for why in sorted(set(report.route_skips.values())):
        print(f"  skipped: {why}")
    buckets = sorted(report.route_findings.buckets.values(), key=lambda b: -b.count)
    if buckets:
        repro_dir.mkdir(parents=True, exist_ok=True)
        (repro_dir / "route-findings.json").write_text(json.dumps([b.to_json() for b in buckets], indent=1) + "\n")
        print(f"{len(buckets)} route finding bucket(s) ({repro_dir / 'route-findings.json'}):")
    for b in buckets:
        verdicts = "; ".join(f"{r}: {v['status']}" for r, v in b.verdicts.items())
        print(f"  {b.key}: {b.count} case(s) fail along {b.route} and pass along {b.passing_route} "
              f"({b.signature['family']} {b.signature['operation']}, wrong {b.signature['wrong']}; {verdicts})")
    kinds: dict[tuple[str, str, str, str], list] = {}  # one repro per route and message: a bug, not a shader
    for finding in report.toolchain_findings.values():
        key = (finding.route, finding.stage, finding.kind, message_key(finding.messages))
        kinds.setdefault(key, []).append(finding)
    for (route, stage, kind, message), found in kinds.items():
        smallest = min(found, key=lambda f: len(f.produced))
        folder = write_finding(smallest, repro_dir)
        print(f"  toolchain finding: route {route}, {stage} ({kind}) on {len(found)} variant(s) of "
              f"{', '.join(sorted({f.family for f in found}))}: {message}; repro: {folder}/REPORT.md")
    return len(buckets) + len(kinds)


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    f = sub.add_parser("fuzz", help="fuzz a backend live; shrink a failure to a minimal repro")
    add_options(f, "backend")
    f.add_argument("--family", action="append",
                   help=f"family to fuzz (repeatable; default: {DEFAULT_FAMILY}): {names}")
    f.add_argument("--max-examples", type=positive_int, default=200, help="examples per round (default: 200)")
    f.add_argument("--time", type=positive_float, help="keep fuzzing in fresh rounds for this many seconds")
    f.add_argument("--seed", type=int, default=0, help="Hypothesis seed of the first round (default: 0)")
    add_options(f, "max-batch", "min-batch", "route")
    f.add_argument("--routes", help="run each drawn batch along several compiler routes on the same backend: "
                                    "'all' (every route but the mutants) or names separated by commas; a case "
                                    "that passes along one and fails along another is a route finding")
    f.add_argument("--database", default=".ctsgen/fuzz-db",
                   help="example database: a directory (default .ctsgen/fuzz-db), redis://HOST:PORT, or none")
    add_options(f, "expect-deviation", "include-hazardous")
    add_options(f, "baseline", "flakes")  # a finding they expect is passed over, as --expect-deviation does
    add_options(f, "timeout", "build-budget")
    f.add_argument("--keep-going", action="store_true",
                   help="after a failure, export its repro and fuzz on in fresh rounds (with --time)")
    add_options(f, "shrink-time", "isolation", shrink_time=120.0)
    f.add_argument("--repro-dir", default=".ctsgen/repros", help="where a failure's repro goes")
    f.add_argument("--workers", type=worker_count, default=1,
                   help="fuzzer processes sharing --database, each with its own seed (default: 1; at most "
                        "the cores)")
    add_options(f, "devices", "device")
    f.add_argument("--worker-report", help=argparse.SUPPRESS)  # set by --workers for each worker process
    f.add_argument("--worker-until", type=float, help=argparse.SUPPRESS)  # --workers: the parent's deadline (epoch s)
    f.set_defaults(func=cmd_fuzz)
