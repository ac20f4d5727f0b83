"""``ctsgen profile``: read a live Vulkan device's capabilities into a profile file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ctsgen.cli.options import add_options


def cmd_profile(args: argparse.Namespace) -> int:
    from ctsgen.backends.capture import capture  # local: startup

    text = capture(args.device, Path(args.out) if args.out else None)
    if args.out:
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def add_parser(sub: argparse._SubParsersAction, names: str) -> None:
    """Declare the command, its options and its function on ``sub`` (``names``: the families)."""
    pr = sub.add_parser("profile", help="read a live Vulkan device's capabilities into a profile file "
                        "(docs/profile-format.md) for generate --profile")
    add_options(pr, "device", device=0)
    pr.add_argument("--out", help="profile file to write (default: standard output)")
    pr.set_defaults(func=cmd_profile)
