"""``ctsgen generate``: draw cases and write a test pack."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ctsgen.cli.args import Interrupted
from ctsgen.cli.options import add_options
from ctsgen.core.argtypes import int_between, positive_int
from ctsgen.families import DEFAULT_FAMILY, get_family
from ctsgen.progress import Progress
from ctsgen.pack.generate import CASES_PER_VARIANT, MAX_COUNT, check_runnable, draw_cases, draw_hazardous
from ctsgen.toolchain.routes import DEFAULT_ROUTE, RouteRefusedError, check_available, get_route
from ctsgen.toolchain.variants import route_refusal
from ctsgen.device.profile import default_profile, load_profile
from ctsgen.pack.lock import out_lock
from ctsgen.core.family import StrategyOptions
from ctsgen.pack.reuse import request_differences
from ctsgen.pack.owned import is_ctsgen_pack
from ctsgen.pack.workers import usable_jobs
from ctsgen.pack.write import PackExistsError, check_replaceable, write_pack
from ctsgen.toolchain import toolchain_versions
from ctsgen.timing import Breakdown


#: ``generate --profile reference``: a pack for the reference backend, which runs every family (decode-vector,
#: which no read-out profile exposes, included), drawn with the default profile's matrix types.
REFERENCE_PROFILE = "reference"


#: Where ``generate`` writes when no --out is given: one directory per family.
DEFAULT_OUT = "generated/{family}"


def cmd_generate(args: argparse.Namespace) -> int:
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
    route = get_route(args.route or DEFAULT_ROUTE)  # unknown, or a tool missing here: one line, exit 2
    check_available([route])
    refusal = route_refusal(route, family)  # before drawing: the route cannot take this family at all
    if refusal is not None:
        raise RouteRefusedError(f"{family.name}: {refusal} -> use another --route for {family.name}")
    toolchain = {k: v for k, v in toolchain_versions().items() if not k.endswith("_path")}
    reference = args.profile == REFERENCE_PROFILE  # no device: every family, the default's matrix types
    profile_name = REFERENCE_PROFILE if reference else profile.name
    if out.is_dir() and not args.force and is_ctsgen_pack(out):
        differ = request_differences(out, family=family.name, count=args.count, seed=args.seed,
                                     profile=profile_name, toolchain=toolchain,
                                     hazardous=args.hazardous_count if args.include_hazardous else 0,
                                     cases_per_variant=args.cases_per_variant, route=route.name)
        if not differ:
            print(f"{out} is up to date (same family, count, seed, profile and ctsgen); nothing to do")
            return 0
        raise PackExistsError(f"{out} holds a pack generated with other options ({differ}) -> pass --force "
                              "to replace it, or choose another --out")
    check_replaceable(out, args.force)
    jobs = usable_jobs(args.jobs)
    options = StrategyOptions(profile=None if reference else profile)

    times = Breakdown()
    t0 = time.monotonic()
    with times.stage("draw"):
        cases = draw_cases(family, args.count, args.seed, options, cases_per_variant=args.cases_per_variant,
                           progress=Progress("drawing cells"), jobs=jobs,
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
                    "cases_per_variant": args.cases_per_variant, "route": route.name},
        "toolchain": toolchain,
    }
    write_pack(cases, out, header=header, overwrite=args.force, progress=Progress("writing cases"),
               jobs=jobs, times=times, route=route.name)
    t2 = time.monotonic()
    n_variants = len({c.variant().id for c in cases})
    along = "" if route.is_default else f" along route {route.name}"
    print(f"wrote {out}: {len(cases)} cases, {n_variants} shader variants{along} in {t2 - t0:.1f}s "
          f"({len(cases) / max(t2 - t0, 1e-9):.0f} cases/s; draw {t1 - t0:.1f}s, compile+write {t2 - t1:.1f}s, "
          f"{jobs} jobs)")
    print(times.summary(t2 - t0, len(cases)))
    return 0


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    g = sub.add_parser("generate", help="draw cases and write a test pack")
    g.add_argument("--family", default=DEFAULT_FAMILY, help=f"test family: {names} (default: {DEFAULT_FAMILY})")
    g.add_argument("--count", type=int_between(1, MAX_COUNT), default=500,
                   help=f"number of cases (default: 500, at most {MAX_COUNT})")
    g.add_argument("--seed", type=int, default=0, help="same seed, byte-identical pack (default: 0)")
    g.add_argument("--out", help="pack directory (default: generated/FAMILY); an identical pack there is kept "
                   "as it is")
    g.add_argument("--profile", help="device profile file to target (default: the embedded H100 profile; "
                   "docs/profile-format.md), or 'reference' for the reference backend, which runs every family")
    add_options(g, "include-hazardous", "route")
    g.add_argument("--hazardous-count", type=int_between(0, MAX_COUNT), default=8,
                   help="cases in the hazardous group (default: 8)")
    g.add_argument("--force", action="store_true",
                   help="replace a ctsgen pack at --out (anything else there is refused)")
    g.add_argument("--cases-per-variant", type=positive_int, default=CASES_PER_VARIANT,
                   help=f"cases drawn for each shader variant (default: {CASES_PER_VARIANT}); more give a pack of "
                        "the same size fewer pipelines to build, for packs at CTS scale")
    g.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                   help="worker processes drawing and writing (default and most: the cores this machine has); "
                        "the pack is the same for any")
    g.set_defaults(func=cmd_generate)
