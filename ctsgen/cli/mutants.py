"""``ctsgen mutants``: list the catalogue of injected driver bugs."""

from __future__ import annotations

import argparse

from ctsgen.mutants.catalogue import catalogue


def cmd_mutants(args: argparse.Namespace) -> int:
    mutants = list(catalogue().values())
    name_width = max((len(m.name) for m in mutants), default=0)
    family_width = max((len(m.family) for m in mutants), default=0)
    for m in mutants:
        print(f"{m.name:<{name_width}}  {m.family:<{family_width}}  {m.description}")
    return 0


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    mu = sub.add_parser("mutants", help="list the catalogue of injected driver bugs")
    mu.set_defaults(func=cmd_mutants)
