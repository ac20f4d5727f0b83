"""Turning expected failures into one clear line and exit status 2, not a traceback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def user_errors() -> Iterator[None]:
    """Report errors a user can fix (bad pack, bad input, missing tool) as ``ctsgen: error: ...``."""
    from ctsgen.backends.base import BackendError
    from ctsgen.campaign import CampaignError
    from ctsgen.device.profile import ProfileFormatError
    from ctsgen.model.tensor import InvalidLayoutError
    from ctsgen.pack.read import PackError
    from ctsgen.pack.write import PackExistsError
    from ctsgen.toolchain import ToolchainError

    try:
        yield
    except (PackError, PackExistsError, ProfileFormatError, InvalidLayoutError, ToolchainError,
            BackendError, CampaignError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        sys.stderr.write(f"ctsgen: error: {msg}\n")
        raise SystemExit(2) from None
