"""Parsers of command-line values (argparse ``type=``): a bad value is one line naming what was expected."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(kind: Callable[[str], float], low: float, inclusive: bool, what: str,
            high: float = math.inf) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not math.isfinite(value) or value < low or (value == low and not inclusive) or value > high:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value
    parse.__name__ = what
    return parse


positive_int = _number(int, 0, False, "a whole number >= 1")


nonneg_int = _number(int, 0, True, "a whole number >= 0")


positive_float = _number(float, 0.0, False, "a number of seconds > 0")


nonneg_float = _number(float, 0.0, True, "a number of seconds >= 0")


#: The longest bound on one wait (``--timeout``, ``--build-budget``): 11.6 days. Far larger bounds
#: overflowed the clock's arithmetic in the wait itself (``--timeout 1e300`` was a traceback), and no
#: dispatch or build is worth waiting for longer.
MAX_WAIT_S = 1e6

wait_seconds = _number(float, 0.0, False, f"a number of seconds > 0 and at most {MAX_WAIT_S:g}", MAX_WAIT_S)


def int_between(low: int, high: int) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high``: an option whose work grows with it gets a bound, so a
    slip of the keyboard is one line, not a run that never ends."""
    return _number(int, low, True, f"a whole number from {low} to {high}", high)


def path_given(text: str) -> str:
    """A path option's value: an empty one (``--results "$UNSET"``) is refused, not read as the default
    or as the current directory."""
    if not text:
        raise argparse.ArgumentTypeError("expected a path, got ''")
    return text


def device_list(text: str) -> list[int]:
    """``--devices 0,1``: GPU indices."""
    try:
        devices = [int(d) for d in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected device numbers like 0,1, got {text!r}") from None
    if any(d < 0 for d in devices):
        raise argparse.ArgumentTypeError(f"expected device numbers >= 0, got {text!r}")
    return devices
