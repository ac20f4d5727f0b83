"""Argument checking for the command line: one-line usage errors, number ranges, writable places,
and signals that end a command with one line instead of a traceback."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from hypothesis.configuration import set_hypothesis_home_dir

from ctsgen.errors import UserError
from ctsgen.signals import on_stop
from ctsgen.toolchain.cache import default_dir


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is the one line ``ctsgen: error: <what> -> <fix>`` (exit 2)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"ctsgen: error: {message} -> see '{self.prog} --help'\n")
        raise SystemExit(2)


def check_writable_dir(path: str | Path, flag: str) -> None:
    """Make sure ``path`` is (or can be made) a directory ctsgen can write, before any long work."""
    if not str(path).strip():
        raise UserError(f"{flag} is empty -> name a directory (an empty name would write into the current one)")
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".ctsgen-probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UserError(f"{flag} {path}: cannot write there ({exc.strerror or exc}) -> choose a writable "
                        "directory") from None


def check_plot_path(path: str, flag: str) -> None:
    """A plot file matplotlib can write (by its suffix), checked before any long work; nothing
    to check where matplotlib is not installed (no plot is written then)."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{flag} {path} is a directory -> name the PNG file to write, e.g. {target / 'plot.png'}")
    try:
        from matplotlib.figure import Figure  # local: optional
    except ImportError:
        return
    formats = Figure().canvas.get_supported_filetypes()
    if target.suffix.lstrip(".").lower() not in formats:
        raise UserError(f"{flag} {path}: matplotlib writes no {target.suffix or 'suffix-less'!r} files -> name a "
                        f".png file (or one of .{', .'.join(sorted(formats))})")


def check_database(spec: str | None) -> None:
    """The fuzz example database must be usable before fuzzing: a failure found and not stored
    would be lost."""
    if spec is None:
        return
    if "://" in spec and not spec.startswith("redis://"):
        raise UserError(f"--database {spec}: {spec.split('://')[0]}:// is no example database -> use redis://HOST:PORT, "
                        "a directory, or none")
    if spec.startswith("redis://"):
        try:
            import redis  # local: optional
        except ImportError:
            return  # open_database says how to install it
        try:
            redis.Redis.from_url(spec, socket_connect_timeout=3, socket_timeout=3).ping()
        except Exception as exc:  # redis raises its own ConnectionError, TimeoutError, ResponseError...
            raise UserError(f"--database {spec}: cannot reach the Redis server ({type(exc).__name__}) -> start "
                            "it, or pass a directory or 'none' as --database") from None
        return
    try:
        check_writable_dir(spec, "--database")
    except UserError as exc:
        raise UserError(str(exc).replace("-> choose a writable directory",
                                         "-> choose a writable directory, or --database none")) from None


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM; ``note`` says what was (not) left behind."""

    def __init__(self, signum: int = signal.SIGINT, note: str = "") -> None:
        super().__init__(note)
        self.signum = signum
        self.note = note


@contextmanager
def interrupts_as_one_line() -> Iterator[None]:
    """SIGTERM ends the command like Ctrl-C (cleanups run); either prints one line
    ``ctsgen: interrupted[; note]`` and exits 128 + the signal's number.

    A signal that lands inside a ctypes callback (glslang's diagnostics) would be
    printed as an ignored exception and lost; it is delivered again a moment later."""
    def on_signal(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    def unraisable(info: sys.UnraisableHookArgs) -> None:
        if isinstance(info.exc_value, Interrupted):
            threading.Timer(0.05, os.kill, (os.getpid(), info.exc_value.signum)).start()
        else:
            previous_hook(info)

    previous_hook = sys.unraisablehook
    sys.unraisablehook = unraisable
    try:
        with on_stop(on_signal):
            yield
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        note = getattr(exc, "note", "")
        sys.stderr.write(("\n" if sys.stderr.isatty() else "") + "ctsgen: interrupted"
                         + (f"; {note}" if note else "") + "\n")
        sys.stderr.flush()
        raise SystemExit(128 + signum) from None
    finally:
        sys.unraisablehook = previous_hook


def keep_hypothesis_out_of_cwd() -> None:
    """Hypothesis keeps a cache of source constants (and, by default, its example database) in
    ``./.hypothesis``; a command must not leave that in the user's directory. It goes beside the
    SPIR-V cache instead (``~/.cache/ctsgen/hypothesis``, or next to ``$CTSGEN_CACHE_DIR``). The fuzz
    example database is separate: ``--database``, default ``.ctsgen/fuzz-db``."""
    set_hypothesis_home_dir(default_dir().parent / "hypothesis")


def exit_quietly_on_broken_pipe() -> NoReturn:
    """The reader of stdout went away (``ctsgen coverage | head -1``): stop without a traceback,
    with the status a shell gives a command killed by SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    raise SystemExit(128 + signal.SIGPIPE)
