"""``ctsgen fuzz``: draw and run cases live; shrink a failure to a minimal repro."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ctsgen.cli.args import check_database, check_writable_dir
from ctsgen.core.argtypes import nonneg_float, nonneg_int, positive_float, positive_int, device_list
from ctsgen.families import DEFAULT_FAMILY
from ctsgen.progress import Progress
from ctsgen.runner.options import ARGUMENTS as RUN_ARGUMENTS
from ctsgen.results.options import ARGUMENTS as EXPECTATION_ARGUMENTS
from ctsgen.signals import on_stop
from ctsgen.cli.common import BATCH_ARGUMENTS, warn_unreached


def cmd_fuzz(args: argparse.Namespace) -> int:
    from ctsgen.backends.registry import check_device, open_backend
    from ctsgen.fuzz.loop import Fuzzer, FuzzOptions, default_min_batch
    from ctsgen.fuzz.workers import run_workers, write_worker_report
    from ctsgen.repro import export_failures, replay_command
    from ctsgen.runner.options import RunOptions

    from ctsgen.errors import UserError

    if args.devices and args.workers == 1:
        raise UserError("--devices spreads --workers over GPUs, and there is one worker -> add --workers N, or "
                        "pick the one GPU with --device K")
    if args.min_batch is not None and args.min_batch > args.max_batch:
        raise UserError(f"--min-batch {args.min_batch} is above --max-batch {args.max_batch}, so no example could "
                        "hold it -> lower --min-batch or raise --max-batch")
    if args.workers > 1:
        devices = list(args.devices or [])
        return run_workers(sys.argv[1:], args.workers, args.seed, devices)
    from ctsgen.results import ci

    expected = ci.expectations_of(args)  # deviation rules are followed as --expect-deviation here

    options = FuzzOptions(families=tuple(args.family or [DEFAULT_FAMILY]), max_examples=args.max_examples,
                          time_s=args.time, seed=args.seed, max_batch=args.max_batch,
                          min_batch=args.min_batch or default_min_batch(args.backend),
                          database=None if args.database == "none" else args.database,
                          expect_deviations=tuple(args.expect_deviation or ()) + tuple(expected.deviations),
                          include_hazardous=args.include_hazardous, shrink_time_s=args.shrink_time,
                          keep_going=args.keep_going,
                          run=RunOptions(timeout_base_s=args.timeout))
    from ctsgen.mutants.deviations import check_deviations

    check_deviations(options.expect_deviations)  # an unknown name: one line, exit 2
    check_device(args.backend, args.device)  # before any work
    check_database(options.database)  # a failure found and not stored would be lost
    check_writable_dir(args.repro_dir, "--repro-dir")
    backend = open_backend(args.backend, args.isolation, args.device)
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

    def stop(signum, frame) -> None:  # Ctrl-C or e.g. `timeout`: end with a report and a repro
        for f in running:
            f.request_stop()  # in case the interrupt lands in a ctypes callback, which drops it
        raise KeyboardInterrupt

    try:
        with on_stop(stop):
            total = None if args.time else options.max_examples  # open-ended with --time: a count, no bar
            fuzzer = Fuzzer(backend, options, progress=lambda r: show(r.examples, total, f"{r.cases} cases"),
                            on_failure=found, known=known)
            running.append(fuzzer)
            for name, why in fuzzer.report.skipped.items():
                show.write(f"skipping {name}: {why}")
            for line in fuzzer.omissions():
                show.write(line)
            try:
                report = fuzzer.run()
            finally:
                show.close()
        print(f"fuzzed {args.backend} ({', '.join(f.name for f in fuzzer.families)}): {report.examples} examples, "
              f"{report.cases} cases in {report.wall_s:.1f}s ({report.cases_per_s:.0f} cases/s)")
        print(report.times.summary(report.wall_s, report.cases))
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
        if not report.failures:
            print("\n".join(["no failure found" + (f" ({len(report.flakes)} flake(s) above)" if report.flakes
                                                   else ""), *ends]))
            return 0
        print(f"first failure after {report.first_failure_example} examples; {len(report.failures)} failure(s):")
        # the backend is still open: a program's repro gets its debug re-run on it
        repros = export_failures(report.failures, Path(args.repro_dir), backend=args.backend,
                                 origin={"fuzz": {"backend": args.backend, "seed": args.seed,
                                                  "families": list(options.families)}},
                                 expect_deviations=options.expect_deviations, debug_backend=backend)
        for (case, result), out in zip(report.failures, repros):
            print(f"  {result.status.value}: {case.name()}\n    {result.detail}\n    repro: {out}/REPORT.md; "
                  f"replay: {replay_command(out, args.backend, options.expect_deviations)}")
        if ends:
            print("\n".join(ends))
        return 1
    finally:
        backend.close()


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    f = sub.add_parser("fuzz", help="fuzz a backend live; shrink a failure to a minimal repro")
    f.add_argument("--backend", default="reference", help="reference (default), vulkan or mutant:NAME")
    f.add_argument("--family", action="append",
                   help=f"family to fuzz (repeatable; default: {DEFAULT_FAMILY}): {names}")
    f.add_argument("--max-examples", type=positive_int, default=200, help="examples per round (default: 200)")
    f.add_argument("--time", type=positive_float, help="keep fuzzing in fresh rounds for this many seconds")
    f.add_argument("--seed", type=int, default=0, help="Hypothesis seed of the first round (default: 0)")
    for option, declared in BATCH_ARGUMENTS.items():
        f.add_argument(f"--{option}", **declared)
    f.add_argument("--database", default=".ctsgen/fuzz-db",
                   help="example database: a directory (default .ctsgen/fuzz-db), redis://HOST:PORT, or none")
    f.add_argument("--expect-deviation", **RUN_ARGUMENTS["expect-deviation"])
    f.add_argument("--include-hazardous", action="store_true", help="also draw cases known to hang drivers")
    for option in ("baseline", "flakes"):  # a finding they expect is passed over, as --expect-deviation does
        f.add_argument(f"--{option}", **EXPECTATION_ARGUMENTS[option])
    f.add_argument("--timeout", **RUN_ARGUMENTS["timeout"])
    f.add_argument("--keep-going", action="store_true",
                   help="after a failure, export its repro and fuzz on in fresh rounds (with --time)")
    f.add_argument("--shrink-time", type=nonneg_float, default=120.0,
                   help="stop shrinking this long after the first failure (default: 120)")
    f.add_argument("--isolation", **RUN_ARGUMENTS["isolation"])
    f.add_argument("--repro-dir", default=".ctsgen/repros", help="where a failure's repro goes")
    f.add_argument("--workers", type=positive_int, default=1,
                   help="fuzzer processes sharing --database, each with its own seed (default: 1)")
    f.add_argument("--devices", type=device_list, help="with --workers: GPU indices, worker K uses device K mod their number")
    f.add_argument("--device", type=nonneg_int, help="the Vulkan device to fuzz (default: 0)")
    f.add_argument("--worker-report", help=argparse.SUPPRESS)  # set by --workers for each worker process
    f.set_defaults(func=cmd_fuzz)
