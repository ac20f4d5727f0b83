"""The ``ctsgen`` command line. Each command is one module here that declares its options
(``add_parser``), calls the library and prints; ``main`` is the one edge where a
:class:`ctsgen.errors.CtsgenError` becomes one line and exit status 2."""

from __future__ import annotations

import argparse
import time

from ctsgen.version import __version__
from ctsgen.cli import bench, campaign, coverage, doctor, fuzz, generate, mutants, profile, repro, report, run
from ctsgen.cli.args import OneLineParser, exit_quietly_on_broken_pipe, interrupts_as_one_line, keep_hypothesis_out_of_cwd
from ctsgen.errors import user_errors
from ctsgen.fuzz.deadline import process_started
from ctsgen.families import families

#: The commands, in the order ``ctsgen --help`` lists them.
COMMANDS = (generate, run, repro, fuzz, campaign, mutants, bench, report, coverage, doctor, profile)

DESCRIPTION = """\
ctsgen: property-based conformance tests for Vulkan's cooperative-matrix 2, tensor-addressing and
cooperative-vector extensions. Draw a pack of cases and run it on a backend, or fuzz a backend live;
each command below has its own --help."""


def build_parser() -> argparse.ArgumentParser:
    names = ", ".join(sorted(families()))
    p = OneLineParser(prog="ctsgen", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"ctsgen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub, names)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (None: this process's own command line, whose start, Python's
    start-up included, is when a budget such as ``--time`` starts counting; given: from now)."""
    started = process_started() if argv is None else time.time()
    try:
        with interrupts_as_one_line():  # a Ctrl-C while the families load is one line too
            args = build_parser().parse_args(argv)
            args.started = started
            keep_hypothesis_out_of_cwd()
            with user_errors():
                return args.func(args)
    except BrokenPipeError:
        exit_quietly_on_broken_pipe()
