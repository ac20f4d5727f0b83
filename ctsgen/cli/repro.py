"""``ctsgen repro``: export one case of a pack as a standalone repro."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctsgen.cli.options import add_options
from ctsgen.core.argtypes import path_given
from ctsgen.errors import UserError
from ctsgen.pack.read import load_pack
from ctsgen.repro import export_repro, replay_command
from ctsgen.results.results_file import load_results
from ctsgen.backends.registry import open_backend


def cmd_repro(args: argparse.Namespace) -> int:
    results = Path(args.results) if args.results else None
    if results is not None and not results.is_file():
        raise UserError(f"--results {results}: no such results file -> name the file `ctsgen run` wrote "
                        "(PACK/results-BACKEND.jsonl), or leave --results out")
    recorded = None  # the backend the results file's header names
    if results is not None:
        recorded = (load_results(results).header or {}).get("backend")  # not a results file: one line
    if args.debug_rerun and results is None:
        raise UserError("--debug-rerun compares a failing case's nodes -> also give --results, the file in "
                        "which the case failed")
    backend = args.backend or recorded or "vulkan"
    pack = load_pack(args.pack)
    debug_backend = None
    if args.debug_rerun:  # a failing program's first differing node, from a run on the backend that failed
        debug_backend = open_backend(backend, "auto")
    try:
        out = export_repro(pack, args.case, Path(args.out), results=results, overwrite=args.force,
                           backend=backend, debug_backend=debug_backend)
    finally:
        if debug_backend is not None:
            debug_backend.close()
    print(f"wrote {out} (REPORT.md, repro.comp, one-case pack); replay: {replay_command(out, backend)}")
    return 0


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    x = sub.add_parser("repro", help="export one case of a pack as a standalone repro")
    x.add_argument("pack", help="pack directory")
    x.add_argument("case", help="case name")
    x.add_argument("--out", required=True, help="repro directory to write")
    x.add_argument("--results", type=path_given, help="results file whose record of the case goes into REPORT.md")
    add_options(x, "backend", backend=None)  # the backend that failed, for REPORT.md's replay line
    x.add_argument("--force", action="store_true", help="replace a ctsgen repro or pack at --out")
    x.add_argument("--debug-rerun", action="store_true",
                   help="for a failing case of a family with intermediates (cm2-program): run its debug "
                        "shader once on the backend and name the first differing node in REPORT.md")
    x.set_defaults(func=cmd_repro)
