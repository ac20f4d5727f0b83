"""One base for every error ctsgen raises on purpose, caught once at the edge.

Every ``*Error`` of ctsgen derives from :class:`CtsgenError` (as Hypothesis's
errors derive from ``HypothesisException``); its message names what is wrong
and what would make it right. The command line catches the base once
(:func:`user_errors`) and prints ``ctsgen: error: <message>`` with exit status
2; the pytest plugin turns it into a usage error or a one-line item failure.
This module imports nothing from ctsgen, so the lowest layers can use it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


class CtsgenError(Exception):
    """Base of every error ctsgen raises on purpose (bad input, bad pack, missing tool, no device).

    Every subclass crosses a process boundary intact (a ``generate`` worker, the supervised
    backend's process): pickling keeps its class, its ``args`` and its attributes, and does not
    call ``__init__`` again, whose parameters need not be ``args`` (``GlslCompileError(message,
    diagnostics)``). Pickle's default for exceptions calls ``cls(*args)``, which raised in the
    pool's result thread and left ``generate`` waiting for good."""

    def __reduce__(self) -> tuple[object, ...]:
        return _rebuild, (type(self), self.args, dict(self.__dict__))


def _rebuild(cls: type[CtsgenError], args: tuple[object, ...], state: dict[str, object]) -> CtsgenError:
    """The error ``CtsgenError.__reduce__`` pickled, made again without calling its ``__init__``."""
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class UnknownNameError(CtsgenError, LookupError):
    """A name (family, mutant, backend) that nothing registers; the message lists the known ones."""


class UserError(CtsgenError):
    """Bad input or an environment the user can fix; the message reads ``<what is wrong> -> <the fix>``."""


def _os_error_line(exc: OSError) -> str:
    """One line for a file the user named that cannot be read or written."""
    where = exc.filename if exc.filename is not None else ""
    what = exc.strerror or str(exc)
    return (f"{where}: {what}" if where else what) + \
        " -> check the path and its permissions, or choose another location"


@contextmanager
def user_errors() -> Iterator[None]:
    """Report every :class:`CtsgenError` as ``ctsgen: error: ...`` and exit with status 2."""
    try:
        yield
    except CtsgenError as exc:
        sys.stderr.write(f"ctsgen: error: {exc}\n")
        raise SystemExit(2) from None
    except BrokenPipeError:
        raise
    except OSError as exc:  # a path the user gave: missing, read-only, not a directory, disk full
        sys.stderr.write(f"ctsgen: error: {_os_error_line(exc)}\n")
        raise SystemExit(2) from None


class BackendError(CtsgenError, RuntimeError):
    """A backend could not run a dispatch (not a wrong result: no result)."""


class DispatchTimeout(BackendError):
    """The dispatch did not complete within the bounded wait.

    ``waited_s``: how long the wait itself took, where the one who waited measured it
    (the supervisor does, without the time to replace a dead worker); else None."""

    waited_s: float | None = None


class BuildTimeout(BackendError):
    """Building a variant's pipeline (the driver compiling its SPIR-V: at pipeline creation, or at
    its first dispatch where the driver compiles then, as lavapipe does) took longer than its build
    budget (``--build-budget``). Not a hang of the dispatch: the message names the variant (whose id
    carries its matrix sizes), the budget and the seconds; ``seconds`` is how long it was waited for."""

    def __init__(self, variant_id: str, seconds: float, budget_s: float) -> None:
        super().__init__(f"building the pipeline of shader variant {variant_id} took more than {budget_s:g} s, "
                         f"its build budget (--build-budget), and was stopped after {seconds:.1f} s; no dispatch "
                         "of its cases was submitted")
        self.variant_id, self.seconds, self.budget_s = variant_id, seconds, budget_s


class DeviceLost(BackendError):
    """The device reported VK_ERROR_DEVICE_LOST (or its equivalent)."""


class WorkerCrashed(BackendError):
    """The worker process running the backend died (a signal or an exit) while running a request."""
