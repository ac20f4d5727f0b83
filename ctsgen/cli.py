"""ctsgen: property-based conformance tests for Vulkan's cooperative-matrix 2, tensor-addressing and
cooperative-vector extensions. Draw a pack of cases and run it on a backend, or fuzz a backend live;
each command below has its own --help."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ctsgen import __version__
from ctsgen.cliargs import (Interrupted, OneLineParser, check_database, check_plot_path, check_writable_dir,
                            exit_quietly_on_broken_pipe, interrupts_as_one_line, keep_hypothesis_out_of_cwd)
from ctsgen.core.argtypes import nonneg_float, nonneg_int, positive_float, positive_int, device_list
from ctsgen.families import DEFAULT_FAMILY
from ctsgen.progress import Progress
from ctsgen.oracle.models import MODELS
from ctsgen.pack.generate import CASES_PER_VARIANT
from ctsgen.pack.lock import OutputLockedError
from ctsgen.runner.options import ARGUMENTS as RUN_ARGUMENTS
from ctsgen.results.options import ARGUMENTS as EXPECTATION_ARGUMENTS
from ctsgen.runner.select import ARGUMENTS as SELECT_ARGUMENTS

DEFAULT_PACK = f"generated/{DEFAULT_FAMILY}"
#: ``--max-batch`` and ``--min-batch``, declared once for ``fuzz`` and ``campaign start``.
BATCH_ARGUMENTS: dict[str, dict] = {
    "max-batch": dict(type=positive_int, default=256,
                      help="largest batch of cases per example, one compiled shader and one dispatch (default: 256)"),
    "min-batch": dict(type=positive_int,
                      help="cases an example of more than one carries at least, so that each shader's pipeline "
                           "build serves many (default: 1 on the reference backend and mutants, 128 elsewhere)"),
}
#: ``generate --profile reference``: a pack for the reference backend, which runs every family (decode-vector,
#: which no read-out profile exposes, included), drawn with the default profile's matrix types.
REFERENCE_PROFILE = "reference"
#: Where ``generate`` writes when no --out is given: one directory per family.
DEFAULT_OUT = "generated/{family}"


def cmd_generate(args: argparse.Namespace) -> int:
    from ctsgen.device.profile import default_profile, load_profile
    from ctsgen.families import get_family
    from ctsgen.pack.generate import check_runnable
    from ctsgen.pack.lock import out_lock

    out = Path(args.out if args.out is not None else DEFAULT_OUT.format(family=args.family))
    reference = args.profile == REFERENCE_PROFILE
    profile = load_profile(args.profile) if args.profile and not reference else default_profile()
    family = get_family(args.family)
    if not reference:
        check_runnable(family, profile)
    with out_lock(out):
        try:
            return _generate_locked(args, out, profile, family)
        except KeyboardInterrupt as exc:
            raise Interrupted(getattr(exc, "signum", 2), f"nothing was written to {out}") from None


def _generate_locked(args: argparse.Namespace, out: Path, profile, family) -> int:
    from ctsgen.core.family import StrategyOptions
    from ctsgen.pack.generate import draw_cases, draw_hazardous
    from ctsgen.pack.reuse import request_differences
    from ctsgen.pack.owned import is_ctsgen_pack
    from ctsgen.pack.write import PackExistsError, check_replaceable, write_pack
    from ctsgen.toolchain import toolchain_versions

    toolchain = {k: v for k, v in toolchain_versions().items() if not k.endswith("_path")}
    reference = args.profile == REFERENCE_PROFILE  # no device: every family, the default's matrix types
    profile_name = REFERENCE_PROFILE if reference else profile.name
    if out.is_dir() and not args.force and is_ctsgen_pack(out):
        differ = request_differences(out, family=family.name, count=args.count, seed=args.seed,
                                     profile=profile_name, toolchain=toolchain,
                                     hazardous=args.hazardous_count if args.include_hazardous else 0,
                                     cases_per_variant=args.cases_per_variant)
        if not differ:
            print(f"{out} is up to date (same family, count, seed, profile and ctsgen); nothing to do")
            return 0
        raise PackExistsError(f"{out} holds a pack generated with other options ({differ}) -> pass --force "
                              "to replace it, or choose another --out")
    check_replaceable(out, args.force)
    options = StrategyOptions(profile=None if reference else profile)
    from ctsgen.timing import Breakdown

    times = Breakdown()
    t0 = time.monotonic()
    with times.stage("draw"):
        cases = draw_cases(family, args.count, args.seed, options, cases_per_variant=args.cases_per_variant,
                           progress=Progress("drawing cells"), jobs=args.jobs,
                           note=lambda line: print(f"ctsgen: {line}", file=sys.stderr))
        drawn = len(cases)
        if args.include_hazardous:
            cases += draw_hazardous(family, args.hazardous_count, args.seed, options, beside=cases)
    t1 = time.monotonic()
    if drawn < args.count:
        sys.stderr.write(f"ctsgen: note: {family.name} gave {drawn} distinct cases of the {args.count} asked "
                         "(its strata hold no more); the pack has those\n")
    header = {
        "seed": args.seed, "count": len(cases), "families": [family.name],
        "options": {"profile": profile_name, "count": args.count,
                    "hazardous": args.hazardous_count if args.include_hazardous else 0,
                    "cases_per_variant": args.cases_per_variant},
        "toolchain": toolchain,
    }
    write_pack(cases, out, header=header, overwrite=args.force, progress=Progress("writing cases"),
               jobs=args.jobs, times=times)
    t2 = time.monotonic()
    n_variants = len({c.variant().id for c in cases})
    print(f"wrote {out}: {len(cases)} cases, {n_variants} shader variants in {t2 - t0:.1f}s "
          f"({len(cases) / max(t2 - t0, 1e-9):.0f} cases/s; draw {t1 - t0:.1f}s, compile+write {t2 - t1:.1f}s, "
          f"{args.jobs} jobs)")
    print(times.summary(t2 - t0, len(cases)))
    return 0


def _revalidate(pack) -> None:
    """Validate every shader before a device sees it, where a validator is installed
    (a device machine may have none: the pack's checksums still guard the files)."""
    from ctsgen.pack.read import validate_shaders
    from ctsgen.toolchain import ToolchainError

    try:
        validate_shaders(pack)  # a rejected module raises PackError
    except ToolchainError as exc:  # no validator here
        sys.stderr.write(f"ctsgen: note: shaders not re-validated ({exc})\n")


def cmd_run(args: argparse.Namespace) -> int:
    import dataclasses

    from ctsgen.backends.registry import open_backend
    from ctsgen.mutants.deviations import check_deviations
    from ctsgen.pack.read import load_pack
    from ctsgen.results import ci
    from ctsgen.results import results_file as rf
    from ctsgen.runner.flakes import run_with_retries
    from ctsgen.runner.options import RunOptions
    from ctsgen.runner.select import Selection, select_cases

    deviations = check_deviations(args.expect_deviation or ())  # an unknown name: one line, exit 2
    expected = ci.expectations_of(args)
    pack = load_pack(args.pack)
    picked = select_cases(pack.cases, Selection(args.include, args.exclude, args.caselist, args.fraction,
                                                args.fraction_start, expected.is_skipped))
    pack = dataclasses.replace(pack, cases=picked.cases)
    _revalidate(pack)
    results_path = Path(args.results or Path(args.pack) / f"results-{rf.safe_name(args.backend)}.jsonl")
    rf.check_results_file(results_path)  # before a backend starts
    rf.check_results_file(rf.partial_path(results_path))
    backend = open_backend(args.backend, args.isolation, args.device, args.validation)
    try:
        device = backend.profile()
        header = rf.make_header(rf.manifest_sha256(pack.root), args.backend, device.name,
                                device.properties.get("driverVersion"), args.expect_deviation or (), args.numerics)
        opts = RunOptions(batch_size=args.batch_size, timeout_base_s=args.timeout, numerics=args.numerics,
                          expect_deviations=deviations, explain_deviations=tuple(expected.deviations))
        try:
            with rf.results_output(results_path, args.resume, header,
                                   f"ctsgen results: pack {args.pack}, backend {args.backend}") as (fh, done_before):
                summary = run_with_retries(pack, backend, rf.JsonLinesSink(fh), opts, args.flake_retries,
                                           lambda r: ci.unexpected_failure(r, expected), done_before=done_before,
                                           progress=None if args.quiet else _run_progress())
        except KeyboardInterrupt as exc:
            raise Interrupted(getattr(exc, "signum", 2), f"{results_path} is as it was; the cases run so far "
                              f"are in {rf.partial_path(results_path)} (--resume continues them)") from None
    finally:
        backend.close()
    # both results files are complete and in place: what follows only prints
    ran = len(pack.cases) - summary.resumed
    if ran:
        _warn_unreached(deviations, f"pack {args.pack}")
    resumed = f" ({summary.resumed} more from the earlier run)" if summary.resumed else ""
    print(f"{args.backend} on {device.name}: {ran} cases{resumed} in {summary.wall_s:.1f}s, "
          f"{summary.dispatches} dispatches ({summary.bisection_dispatches} for bisection)")
    if summary.hang_detect_s:
        print(f"  hangs detected: {len(summary.hang_detect_s)}, each after "
              f"{min(summary.hang_detect_s):.1f}-{max(summary.hang_detect_s):.1f} s")
    for status, n in sorted(summary.counts.items()):
        print(f"  {status:15s} {n}")
    stats = backend.stats
    if stats:
        print("  backend: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in stats.items()))
    print(summary.times.summary(summary.wall_s, ran))
    for r in summary.failures[:args.show_failures]:
        print(f"{r.status.value}: {r.name}\n  {r.detail}")
        for m in r.mismatches[:4]:
            print(f"    {m}")
    print(f"results: {results_path} (CTS-style: {rf.cts_path(results_path)})")
    verdict = ci.judge_results_file(results_path, expected, picked.missing)
    print("\n".join(verdict.lines()))
    print(ci.write_ci_files(verdict, Path(args.csv_dir) if args.csv_dir else ci.csv_dir_for(results_path)))
    return 0 if verdict.ok else 1


def _warn_unreached(deviations: tuple[str, ...], what: str) -> None:
    """Name each expected deviation whose replaced semantics no oracle computation ran: it changed nothing."""
    from ctsgen.mutants.deviations import reached

    for name in deviations:
        if name not in reached():
            sys.stderr.write(f"ctsgen: warning: --expect-deviation {name} reached no case of {what} (another "
                             "family's deviation?), so it changed no verdict\n")


def _run_progress():
    show = Progress("running")

    def update(done: int, total: int, counts) -> None:
        show(done, total, " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return update


def cmd_repro(args: argparse.Namespace) -> int:
    from ctsgen.errors import UserError
    from ctsgen.pack.read import load_pack
    from ctsgen.repro import export_repro

    results = Path(args.results) if args.results else None
    if results is not None and not results.is_file():
        raise UserError(f"--results {results}: no such results file -> name the file `ctsgen run` wrote "
                        "(PACK/results-BACKEND.jsonl), or leave --results out")
    recorded = None  # the backend the results file's header names
    if results is not None:
        from ctsgen.results.results_file import load_results

        recorded = (load_results(results).header or {}).get("backend")  # not a results file: one line
    if args.debug_rerun and results is None:
        raise UserError("--debug-rerun compares a failing case's nodes -> also give --results, the file in "
                        "which the case failed")
    backend = args.backend or recorded or "vulkan"
    pack = load_pack(args.pack)
    debug_backend = None
    if args.debug_rerun:  # a failing program's first differing node, from a run on the backend that failed
        from ctsgen.backends.registry import open_backend

        debug_backend = open_backend(backend, "auto")
    try:
        out = export_repro(pack, args.case, Path(args.out), results=results, overwrite=args.force,
                           backend=backend, debug_backend=debug_backend)
    finally:
        if debug_backend is not None:
            debug_backend.close()
    print(f"wrote {out} (REPORT.md, repro.comp, one-case pack); replay: ctsgen run {out} --backend {backend}")
    return 0


def cmd_fuzz(args: argparse.Namespace) -> int:
    from ctsgen.backends.registry import open_backend
    from ctsgen.fuzz.loop import Fuzzer, FuzzOptions, default_min_batch
    from ctsgen.fuzz.workers import run_workers, write_worker_report
    from ctsgen.repro import export_case, replay_command
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
    check_database(options.database)  # a failure found and not stored would be lost
    check_writable_dir(args.repro_dir, "--repro-dir")
    backend = open_backend(args.backend, args.isolation, args.device)
    show = Progress("fuzzing")

    def found(failure) -> None:  # on its own line, never glued to the progress line
        show.write(f"found: {failure.result.status.value} in {failure.case.name()} ({failure.result.detail}); "
                   f"shrinking for at most {options.shrink_time_s:.0f} s")

    import signal

    running: list[Fuzzer] = []

    def stop(signum, frame) -> None:  # Ctrl-C or e.g. `timeout`: end with a report and a repro
        for f in running:
            f.request_stop()  # in case the interrupt lands in a ctypes callback, which drops it
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            total = None if args.time else options.max_examples  # open-ended with --time: a count, no bar
            fuzzer = Fuzzer(backend, options, progress=lambda r: show(r.examples, total, f"{r.cases} cases"),
                            on_failure=found, known=lambda f: not ci.unexpected_failure(f.result, expected))
            running.append(fuzzer)
            for name, why in fuzzer.report.skipped.items():
                show.write(f"skipping {name}: {why}")
            for line in fuzzer.omissions():
                show.write(line)
            report = fuzzer.run()
        finally:
            show.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        print(f"fuzzed {args.backend} ({', '.join(f.name for f in fuzzer.families)}): {report.examples} examples, "
              f"{report.cases} cases in {report.wall_s:.1f}s ({report.cases_per_s:.0f} cases/s)")
        print(report.times.summary(report.wall_s, report.cases))
        if report.examples:
            _warn_unreached(options.expect_deviations, f"the {report.examples} examples fuzzed")
        if args.worker_report:  # for the parent of --workers (ctsgen.fuzz.workers)
            write_worker_report(args.worker_report, report)
        for case, result in report.flakes:  # deqp-runner's Flake: reported, never a failure of the session
            print(f"  Flake: {case.name()}: {result.status.value} ({result.detail}); it did not recur on replay")
        if not report.failures:
            print("no failure found" + (f" ({len(report.flakes)} flake(s) above)" if report.flakes else ""))
            return 0
        print(f"first failure after {report.first_failure_example} examples; {len(report.failures)} failure(s):")
        for case, result in report.failures:
            out = Path(args.repro_dir) / case.name()
            try:  # the backend is still open: a program's repro gets its debug re-run on it
                export_case(case, out, failure=result.to_json(), backend=args.backend, overwrite=True,
                            origin={"fuzz": {"backend": args.backend, "seed": args.seed,
                                             "families": list(options.families)}},
                            expect_deviations=options.expect_deviations, debug_backend=backend)
            except OutputLockedError:  # fuzz workers sharing --repro-dir found the same case (its name
                pass  # carries its hash): the worker holding the lock writes that repro
            print(f"  {result.status.value}: {case.name()}\n    {result.detail}\n    repro: {out}/REPORT.md; "
                  f"replay: {replay_command(out, args.backend, options.expect_deviations)}")
        return 1
    finally:
        backend.close()


def cmd_campaign(args: argparse.Namespace) -> int:
    from ctsgen.campaign.store import CampaignConfig, CampaignDir

    cdir = CampaignDir(args.dir)
    if args.action == "start":
        from ctsgen.backends.registry import backend_factory
        from ctsgen.campaign.store import MAX_WORKERS, round_seed
        from ctsgen.mutants.deviations import check_deviations
        from ctsgen.families import families, get_family
        from ctsgen.fuzz.workers import default_workers

        names = [get_family(f).name for f in args.family] if args.family else sorted(families())
        workers = args.workers or min(default_workers(), MAX_WORKERS)  # the host's cores, over its GPUs
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
        from ctsgen.campaign.run import run_session

        code = run_session(cdir, args.time if args.action == "resume" else None, args.action)
        return code if code else (1 if cdir.buckets() else 0)
    if args.action == "worker":
        return _campaign_worker(cdir, args)
    if args.action == "status":
        from ctsgen.campaign.report import status_text

        print(status_text(cdir))
        return 0
    from ctsgen.campaign.report import write_report

    md, html = write_report(cdir, Path(args.out) if args.out else None)
    print(f"wrote {md} and {html}")
    return 0


def _campaign_worker(cdir, args: argparse.Namespace) -> int:
    """One device-owning worker process of a campaign session (started by start/resume)."""
    import signal

    from ctsgen.backends.registry import open_backend
    from ctsgen.campaign.worker import Worker
    from ctsgen.fuzz.workers import write_worker_report

    config = cdir.config()
    with cdir.worker_lock(f"h{config.host}-w{args.index}"):
        backend = open_backend(config.backend, "auto", args.device)
        try:
            worker = Worker(cdir, args.index, backend, say=lambda line: print(line, flush=True))
            for s in (signal.SIGTERM, signal.SIGINT):
                signal.signal(s, lambda signum, frame: worker.stop())
            deadline = None if args.until is None else time.monotonic() + (args.until - time.time())
            report = worker.run(deadline)
        finally:
            backend.close()
    if args.worker_report:  # for the session (ctsgen.campaign.run), as fuzz workers write theirs
        write_worker_report(args.worker_report, report)
    return 0


def cmd_mutants(args: argparse.Namespace) -> int:
    from ctsgen.mutants.catalogue import catalogue

    mutants = list(catalogue().values())
    name_width = max((len(m.name) for m in mutants), default=0)
    family_width = max((len(m.family) for m in mutants), default=0)
    for m in mutants:
        print(f"{m.name:<{name_width}}  {m.family:<{family_width}}  {m.description}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from ctsgen.fuzz.mutation import markdown, plot, run_bench
    from ctsgen.mutants.catalogue import catalogue, get_mutant

    if args.plot:
        check_plot_path(args.plot, "--plot")
    mutants = [get_mutant(n) for n in args.mutant] if args.mutant else list(catalogue().values())
    seeds = list(range(args.seeds))
    rows = run_bench(mutants, seeds, args.max_examples, reference_budget=args.reference_budget,
                     progress=Progress("mutants"))
    command = "ctsgen bench mutation" + (f" --seeds {args.seeds}" if args.seeds != 3 else "") + \
        (f" --max-examples {args.max_examples}" if args.max_examples != 300 else "") + \
        (f" --reference-budget {args.reference_budget}" if args.reference_budget != 3000 else "") + \
        (f" --out {args.out}" if args.out != ".ctsgen/bench/mutation.md" else "") + \
        (f" --plot {args.plot}" if args.plot != ".ctsgen/bench/mutation.png" else "")
    text = markdown(rows, seeds, args.max_examples, command, args.reference_budget)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    not_run = [name for name in catalogue() if name not in {r.mutant for r in rows}]
    if args.plot and plot(rows, Path(args.plot), args.max_examples, not_run):
        print(f"plot: {args.plot}")
    elif args.plot:
        print("no plot: matplotlib is not installed (pip install 'ctsgen[plot]')")
    return 0 if all(r.killed == r.seeds for r in rows) else 1


def cmd_report(args: argparse.Namespace) -> int:
    from ctsgen.results.report import report

    if args.baseline or args.flakes or args.b is None:  # one run judged against expectation files
        from ctsgen.results import ci

        if args.b is not None:
            from ctsgen.errors import UserError
            raise UserError("--baseline/--flakes judge one results file -> give only RESULTS, or drop them to "
                            "compare two runs")
        verdict = ci.judge_results_file(Path(args.a), ci.expectations_of(args))
        print("\n".join(verdict.lines()))
        return 0 if verdict.ok else 1
    c, text = report(args.a, args.b)
    print(text)
    return 1 if c.regressions else 0


def cmd_coverage(args: argparse.Namespace) -> int:
    from ctsgen.core.coverage import plot_coverage
    from ctsgen.pack.coverage import coverage_tables, format_tables
    from ctsgen.pack.read import load_pack

    if args.plot:
        check_plot_path(args.plot, "--plot")
    pack = load_pack(args.pack)
    tables = coverage_tables(pack)
    print(format_tables(tables, pack))
    if args.plot:
        if plot_coverage(tables, Path(args.plot), title=f"{args.pack}: {len(pack.cases)} cases"):
            print(f"plot: {args.plot}")
        else:
            print("no plot: matplotlib is not installed (pip install 'ctsgen[plot]')")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from ctsgen.doctor import run_doctor
    return run_doctor()


def cmd_profile(args: argparse.Namespace) -> int:
    from ctsgen.backends.capture import capture

    text = capture(args.device, Path(args.out) if args.out else None)
    if args.out:
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from ctsgen.families import families

    names = ", ".join(sorted(families()))
    p = OneLineParser(prog="ctsgen", description=__doc__)
    p.add_argument("--version", action="version", version=f"ctsgen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="draw cases and write a test pack")
    g.add_argument("--family", default=DEFAULT_FAMILY, help=f"test family: {names} (default: {DEFAULT_FAMILY})")
    g.add_argument("--count", type=positive_int, default=500, help="number of cases (default: 500)")
    g.add_argument("--seed", type=int, default=0, help="same seed, byte-identical pack (default: 0)")
    g.add_argument("--out", help="pack directory (default: generated/FAMILY); an identical pack there is kept "
                   "as it is")
    g.add_argument("--profile", help="device profile file to target (default: the embedded H100 profile; "
                   "docs/profile-format.md), or 'reference' for the reference backend, which runs every family")
    g.add_argument("--include-hazardous", action="store_true",
                   help="add the family's hazardous group: cases known to hang drivers (tensor-layout: "
                        "RepeatMirrored loads out of bounds on an axis of layoutDimension 1, docs/spec-decisions.md "
                        "mirror-repeat-dim-1; coopvec: RowMajor/ColumnMajor MatMuls in partial subgroups)")
    g.add_argument("--hazardous-count", type=nonneg_int, default=8,
                   help="cases in the hazardous group (default: 8)")
    g.add_argument("--force", action="store_true",
                   help="replace a ctsgen pack at --out (anything else there is refused)")
    g.add_argument("--cases-per-variant", type=positive_int, default=CASES_PER_VARIANT,
                   help=f"cases drawn for each shader variant (default: {CASES_PER_VARIANT}); more give a pack of "
                        "the same size fewer pipelines to build, for packs at CTS scale")
    g.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                   help="worker processes drawing and writing (default: all cores); the pack is the same for any")
    g.set_defaults(func=cmd_generate)

    r = sub.add_parser("run", help="run a pack on a backend")
    r.add_argument("pack", nargs="?", default=DEFAULT_PACK, help=f"pack directory (default: {DEFAULT_PACK})")
    r.add_argument("--backend", default="reference", help="reference (default), vulkan, mutant:NAME or MODULE:CLASS")
    r.add_argument("--results", help="results file (default: PACK/results-BACKEND.jsonl, ':' written as '-'); "
                   "written as FILE.partial and renamed over FILE when the run ends")
    r.add_argument("--resume", action="store_true",
                   help="skip cases already in the results file (or in the FILE.partial an interrupted run left)")
    for option in ("batch-size", "timeout", "isolation", "expect-deviation"):
        r.add_argument(f"--{option}", **RUN_ARGUMENTS[option])
    r.add_argument("--show-failures", type=nonneg_int, default=10, help="failing cases to print (default: 10)")
    r.add_argument("--quiet", action="store_true", help="no progress line")
    r.add_argument("--numerics", choices=sorted(MODELS),
                   help="also compare with a device numeric model bit for bit: a result within the spec's "
                        "tolerance that the model does not reproduce is ModelMismatch (the spec verdict stays "
                        "the conformance verdict)")
    for option, spec in {**EXPECTATION_ARGUMENTS, **SELECT_ARGUMENTS}.items():
        r.add_argument(f"--{option}", **spec)
    r.add_argument("--flake-retries", type=nonneg_int, default=0, metavar="N",
                   help="re-run each unexpected failure up to N times; one that works on a re-run is a Flake "
                        "(default: 0)")
    r.add_argument("--csv-dir", help="where results.csv and failures.csv go, deqp-runner's layout (default: "
                   "beside the results file, PACK/results-BACKEND/)")
    r.add_argument("--device", type=nonneg_int, help="the Vulkan device to run on (default: 0)")
    r.add_argument("--validation", action="store_true",
                   help="run the Vulkan backend under VK_LAYER_KHRONOS_validation: a case whose dispatch draws a "
                        "message is ValidationError (docs/ci.md)")
    r.set_defaults(func=cmd_run)

    x = sub.add_parser("repro", help="export one case of a pack as a standalone repro")
    x.add_argument("pack", help="pack directory")
    x.add_argument("case", help="case name")
    x.add_argument("--out", required=True, help="repro directory to write")
    x.add_argument("--results", help="results file whose record of the case goes into REPORT.md")
    x.add_argument("--backend", help="the backend that failed, for REPORT.md's replay line (default: from the "
                   "--results file's header, else vulkan)")
    x.add_argument("--force", action="store_true", help="replace a ctsgen repro or pack at --out")
    x.add_argument("--debug-rerun", action="store_true",
                   help="for a failing case of a family with intermediates (cm2-program): run its debug "
                        "shader once on the backend and name the first differing node in REPORT.md")
    x.set_defaults(func=cmd_repro)

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

    ca = sub.add_parser("campaign", help="long fuzz campaigns over GPUs and hosts: start, resume, status, report")
    casub = ca.add_subparsers(dest="action", required=True)
    cs = casub.add_parser("start", help="create a campaign directory and fuzz until --time or SIGTERM/Ctrl-C")
    cs.add_argument("dir", help="the campaign directory (new or empty)")
    cs.add_argument("--family", action="append", help="family to fuzz (repeatable; default: every family)")
    cs.add_argument("--backend", default="reference", help="reference (default), vulkan, mutant:NAME or MODULE:CLASS")
    cs.add_argument("--time", type=positive_float,
                    help="fuzzing budget in seconds over every session (default: until stopped)")
    cs.add_argument("--workers", type=positive_int,
                    help="worker processes on this host (default: one per core), spread over --devices")
    cs.add_argument("--devices", type=device_list, help="GPU indices; worker K uses device K mod their number")
    cs.add_argument("--host-id", type=nonneg_int, default=0,
                    help="this host's id when hosts share --database: seeds never overlap (default: 0)")
    cs.add_argument("--seed", type=int, default=0, help="campaign seed; every round's seed derives from it")
    cs.add_argument("--database", help="example database shared with other hosts: redis://HOST:PORT or a "
                                       "directory (default: DIR/db; redis:// is mirrored there)")
    cs.add_argument("--round-examples", type=positive_int, default=200, help="examples per round (default: 200)")
    for option, declared in BATCH_ARGUMENTS.items():  # a campaign's examples are sized as fuzz's
        cs.add_argument(f"--{option}", **declared)
    cs.add_argument("--shrink-time", type=nonneg_float, default=60.0,
                    help="seconds to shrink a new failure (default: 60)")
    cs.add_argument("--timeout", type=positive_float, default=10.0,
                    help="seconds to wait for a dispatch (default: 10)")
    cs.add_argument("--expect-deviation", **RUN_ARGUMENTS["expect-deviation"])
    cs.add_argument("--include-hazardous", action="store_true", help="also draw cases known to hang drivers")
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
    cw.add_argument("--device", type=nonneg_int)
    cw.add_argument("--until", type=float, help=argparse.SUPPRESS)  # the session's deadline, time.time()
    cw.add_argument("--worker-report", help=argparse.SUPPRESS)
    ca.set_defaults(func=cmd_campaign)

    mu = sub.add_parser("mutants", help="list the catalogue of injected driver bugs")
    mu.set_defaults(func=cmd_mutants)

    b = sub.add_parser("bench", help="benchmarks")
    bsub = b.add_subparsers(dest="bench", required=True)
    bm = bsub.add_parser("mutation", help="fuzz every mutant; write the mutation-score table")
    bm.add_argument("--seeds", type=positive_int, default=3, help="seeds per mutant (default: 3)")
    bm.add_argument("--max-examples", type=positive_int, default=300, help="fuzz budget per seed (default: 300)")
    bm.add_argument("--mutant", action="append", help="only these mutants (repeatable)")
    bm.add_argument("--out", default=".ctsgen/bench/mutation.md",
                    help="table to write (default: .ctsgen/bench/mutation.md; docs/mutation.md is the tracked one)")
    bm.add_argument("--plot", default=".ctsgen/bench/mutation.png",
                    help="plot to write (needs matplotlib; default: .ctsgen/bench/mutation.png)")
    bm.add_argument("--reference-budget", type=nonneg_int, default=3000,
                    help="examples for the dedicated minimal-case search per mutant; 0 skips it (default: 3000)")
    bm.set_defaults(func=cmd_bench)

    rp = sub.add_parser("report", help="compare two results files: regressions, fixes, new and removed cases")
    rp.add_argument("a", help="results file of the earlier run (JSON lines or CTS-style .txt); with --baseline: "
                    "the JSON-lines results file to judge")
    rp.add_argument("b", nargs="?", help="results file of the later run (left out with --baseline)")
    for option in ("baseline", "flakes"):
        rp.add_argument(f"--{option}", **EXPECTATION_ARGUMENTS[option])
    rp.set_defaults(func=cmd_report)

    cv = sub.add_parser("coverage", help="tables (and a plot) of what a pack samples; lists empty cells")
    cv.add_argument("pack", nargs="?", default=DEFAULT_PACK, help=f"pack directory (default: {DEFAULT_PACK})")
    cv.add_argument("--plot", help="write a heat-map PNG here (needs matplotlib: pip install 'ctsgen[plot]')")
    cv.set_defaults(func=cmd_coverage)

    d = sub.add_parser("doctor", help="report the toolchain, Vulkan loader and devices")
    d.set_defaults(func=cmd_doctor)

    pr = sub.add_parser("profile", help="read a live Vulkan device's capabilities into a profile file "
                        "(docs/profile-format.md) for generate --profile")
    pr.add_argument("--device", type=nonneg_int, default=0, help="Vulkan device index (default: 0)")
    pr.add_argument("--out", help="profile file to write (default: standard output)")
    pr.set_defaults(func=cmd_profile)
    return p


def main(argv: list[str] | None = None) -> int:
    from ctsgen.errors import user_errors

    args = build_parser().parse_args(argv)
    keep_hypothesis_out_of_cwd()
    try:
        with interrupts_as_one_line(), user_errors():
            return args.func(args)
    except BrokenPipeError:
        exit_quietly_on_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
