"""``ctsgen run``: run a pack on a backend, write its results file and its CI verdict files."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from ctsgen.backends.registry import check_device, open_backend
from ctsgen.cli.args import Interrupted
from ctsgen.cli.common import DEFAULT_PACK, warn_unreached
from ctsgen.cli.options import add_options
from ctsgen.core.argtypes import nonneg_int, path_given
from ctsgen.mutants.deviations import check_deviations
from ctsgen.oracle.models import MODELS
from ctsgen.pack.lock import out_lock
from ctsgen.pack.read import load_pack, pack_routes, validate_shaders
from ctsgen.progress import Progress
from ctsgen.results import ci
from ctsgen.results import results_file as rf
from ctsgen.results.expectations import NoCaseJudged, load_expectations
from ctsgen.runner.flakes import run_with_retries
from ctsgen.runner.options import RunOptions
from ctsgen.runner.select import Selection, describe_selection, select_cases
from ctsgen.errors import UserError
from ctsgen.toolchain import ToolchainError
from ctsgen.toolchain.routes import get_route


def revalidate(pack) -> None:
    """Validate every shader before a device sees it, where a validator is installed
    (a device machine may have none: the pack's checksums still guard the files)."""
    try:
        validate_shaders(pack)  # a rejected module raises PackError
    except ToolchainError as exc:  # no validator here
        sys.stderr.write(f"ctsgen: note: shaders not re-validated ({exc})\n")


def check_route(pack, asked: str | None) -> None:
    """``--route R``: a pack holds its route, and ``run`` runs what the pack holds; a pack along
    another route is refused in one line (docs/commands.md: generate the pack along R)."""
    if asked is None:
        return
    route = get_route(asked)  # an unknown name: one line, exit 2
    held = sorted(pack_routes(pack))
    if held and held != [route.name]:
        raise UserError(f"{pack.root} was compiled along route {', '.join(held)}, not {route.name}: a pack holds its "
                        f"route -> run it without --route, or generate one with --route {route.name}")


def cmd_run(args: argparse.Namespace) -> int:
    deviations = check_deviations(args.expect_deviation or ())  # an unknown name: one line, exit 2
    check_device(args.backend, args.device)  # before any work
    expected = load_expectations(args.baseline or (), args.flakes or (), args.skips or (), args.improvements_pass)
    pack = load_pack(args.pack)
    check_route(pack, args.route)
    selection = Selection(args.include, args.exclude, args.caselist, args.fraction, args.fraction_start,
                          expected.is_skipped)
    picked = select_cases(pack.cases, selection)
    if not picked.cases:  # before anything is written: the previous results stay as they were
        fix = ("select cases the pack has (--include, --exclude, --skips, --caselist, --fraction)" if pack.cases
               else "generate a pack with cases")
        why = describe_selection(selection, args.skips or (), len(pack.cases), picked)
        raise NoCaseJudged(f"judged no case: {why}, so nothing ran and no results file changed -> {fix}")
    pack = dataclasses.replace(pack, cases=picked.cases)
    revalidate(pack)
    results_path = Path(args.results or Path(args.pack) / f"results-{rf.safe_name(args.backend)}.jsonl")
    csv_dir = Path(args.csv_dir) if args.csv_dir else ci.csv_dir_for(results_path)
    ci.check_outputs(results_path, csv_dir, {"--baseline": args.baseline or (), "--flakes": args.flakes or (),
                                             "--skips": args.skips or ()})  # before a backend starts
    judged: dict[str, Any] = {}

    def write_csvs() -> None:  # with the results file, before anything is printed (docs/ci.md)
        judged["verdict"] = ci.judge_results_file(results_path, expected, picked.missing)
        judged["files"] = ci.write_ci_files(judged["verdict"], csv_dir)

    with out_lock(csv_dir, "--csv-dir"):
        summary, device, stats = _run_and_write(args, pack, deviations, expected, results_path, write_csvs)
    verdict = judged["verdict"]
    ran = len(pack.cases) - summary.resumed
    if ran:
        warn_unreached(deviations, f"pack {args.pack}")
    resumed = f" ({summary.resumed} more from the earlier run)" if summary.resumed else ""
    print(f"{args.backend} on {device.name}: {ran} cases{resumed} in {summary.wall_s:.1f}s, "
          f"{summary.dispatches} dispatches ({summary.bisection_dispatches} for bisection)")
    if summary.hang_detect_s:
        print(f"  hangs detected: {len(summary.hang_detect_s)}, each after "
              f"{min(summary.hang_detect_s):.1f}-{max(summary.hang_detect_s):.1f} s")
    for status, n in sorted(summary.counts.items()):
        print(f"  {status:15s} {n}")
    if stats:
        print("  backend: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in stats.items()))
    print(summary.times.summary(summary.wall_s, ran))
    for r in summary.failures[:args.show_failures]:
        print(f"{r.status.value}: {r.name}\n  {r.detail}")
        for m in r.mismatches[:4]:
            print(f"    {m}")
    print(f"results: {results_path} (CTS-style: {rf.cts_path(results_path)})")
    print("\n".join(verdict.lines()))
    print(judged["files"])
    return 0 if verdict.ok else 1


def _run_and_write(args: argparse.Namespace, pack, deviations, expected, results_path: Path, then):
    """Run ``pack`` on the backend, put its results file in place and call ``then()`` (the CSV files),
    a stop signal held between them; (summary, device, backend stats)."""
    backend = open_backend(args.backend, args.isolation, args.device, args.validation, args.build_budget)
    try:
        device = backend.profile()
        header = rf.make_header(rf.manifest_sha256(pack.root), args.backend, device.name,
                                device.properties.get("driverVersion"), args.expect_deviation or (), args.numerics,
                                tuple(expected.deviations), device.properties.get("vendorID"))
        opts = RunOptions(batch_size=args.batch_size, timeout_base_s=args.timeout, numerics=args.numerics,
                          expect_deviations=deviations, explain_deviations=tuple(expected.deviations))
        finished: list[bool] = []

        def finish() -> None:
            then()
            finished.append(True)

        try:
            with rf.results_output(results_path, args.resume, header,
                                   rf.results_title(args.pack, args.backend), then=finish) as (fh, done_before):
                summary = run_with_retries(pack, backend, rf.JsonLinesSink(fh), opts, args.flake_retries,
                                           lambda r: ci.unexpected_failure(r, expected), done_before=done_before,
                                           progress=None if args.quiet else _run_progress())
        except KeyboardInterrupt as exc:  # held over the renames: it lands before them or after them all
            raise Interrupted(getattr(exc, "signum", 2), f"the run had ended: {results_path} and its CSV files "
                              "are in place" if finished else f"{results_path} is as it was; the cases run so "
                              f"far are in {rf.partial_path(results_path)} (--resume continues them)") from None
    finally:
        backend.close()
    return summary, device, backend.stats


def _run_progress():
    show = Progress("running")

    def update(done: int, total: int, counts) -> None:
        show(done, total, " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return update


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    r = sub.add_parser("run", help="run a pack on a backend")
    r.add_argument("pack", nargs="?", default=DEFAULT_PACK, help=f"pack directory (default: {DEFAULT_PACK})")
    add_options(r, "backend")
    r.add_argument("--results", type=path_given,
                   help="results file with an extension (default: PACK/results-BACKEND.jsonl, ':' "
                   "written as '-'); written as FILE.partial and renamed over FILE when the run ends")
    r.add_argument("--resume", action="store_true",
                   help="skip cases already in the results file (or in the FILE.partial an interrupted run left)")
    add_options(r, "batch-size", "timeout", "build-budget", "isolation", "expect-deviation", "route")
    r.add_argument("--show-failures", type=nonneg_int, default=10, help="failing cases to print (default: 10)")
    r.add_argument("--quiet", action="store_true", help="no progress line")
    r.add_argument("--numerics", choices=sorted(MODELS),
                   help="also compare with a device numeric model bit for bit: a result within the spec's "
                        "tolerance that the model does not reproduce is ModelMismatch (the spec verdict stays "
                        "the conformance verdict)")
    add_options(r, "baseline", "flakes", "skips", "improvements-pass", "include", "exclude", "caselist", "fraction",
                "fraction-start", "flake-retries")
    r.add_argument("--csv-dir", type=path_given,
                   help="where results.csv and failures.csv go, deqp-runner's layout (default: "
                   "beside the results file, named by its stem: PACK/results-BACKEND/); a file there that "
                   "ctsgen did not write is refused, never replaced")
    add_options(r, "device")
    r.add_argument("--validation", action="store_true",
                   help="run the Vulkan backend under VK_LAYER_KHRONOS_validation: a case whose dispatch draws a "
                        "message is ValidationError (docs/ci.md)")
    r.set_defaults(func=cmd_run)
