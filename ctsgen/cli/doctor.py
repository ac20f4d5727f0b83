"""``ctsgen doctor``: report the toolchain, Vulkan loader and devices."""

from __future__ import annotations

import argparse

from ctsgen.doctor import run_doctor


def cmd_doctor(args: argparse.Namespace) -> int:
    return run_doctor()


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    d = sub.add_parser("doctor", help="report the toolchain, Vulkan loader and devices")
    d.set_defaults(func=cmd_doctor)
