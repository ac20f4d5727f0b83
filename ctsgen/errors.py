"""Turning expected failures into one clear line and exit status 2, not a traceback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


class UserError(Exception):
    """Bad input or an environment the user can fix; the message reads ``<what is wrong> -> <the fix>``."""


def _os_error_line(exc: OSError) -> str:
    """One line for a file the user named that cannot be read or written."""
    where = exc.filename if exc.filename is not None else ""
    what = exc.strerror or str(exc)
    return (f"{where}: {what}" if where else what) + \
        " -> check the path and its permissions, or choose another location"


@contextmanager
def user_errors() -> Iterator[None]:
    """Report errors a user can fix (bad pack, bad input, missing tool) as ``ctsgen: error: ...``."""
    from ctsgen.backends.base import BackendError
    from ctsgen.device.profile import ProfileFormatError
    from ctsgen.model.tensor import InvalidLayoutError
    from ctsgen.pack.read import PackError
    from ctsgen.pack.write import PackExistsError
    from ctsgen.report import ResultsError
    from ctsgen.toolchain import ToolchainError

    try:
        yield
    except (UserError, PackError, PackExistsError, ProfileFormatError, InvalidLayoutError, ToolchainError,
            BackendError, ResultsError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        sys.stderr.write(f"ctsgen: error: {msg}\n")
        raise SystemExit(2) from None
    except BrokenPipeError:
        raise
    except OSError as exc:  # a path the user gave: missing, read-only, not a directory, disk full
        sys.stderr.write(f"ctsgen: error: {_os_error_line(exc)}\n")
        raise SystemExit(2) from None
