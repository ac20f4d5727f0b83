"""Verdicts: the CTS's result codes and a case's result.

The judge that reaches them from a case's output buffers, and from a
dispatch that gave none, is :mod:`ctsgen.execute.judge`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: A 'tolerance' rule's default: a passing element whose error exceeds this fraction of
#: its tolerance makes the case a QualityWarning (``CompareRule.warn_fraction``).
DEFAULT_WARN_FRACTION = 0.75

#: What a family says about element ``element`` of buffer ``buffer`` of a case (e.g. the
#: (row, col) and tensor coordinates the oracle used); ``{}`` when it says nothing.
Locator = Callable[[int, int], dict[str, Any]]


class Status(str, enum.Enum):
    """Result codes, named as VK-GL-CTS names them."""

    Pass = "Pass"
    Fail = "Fail"
    NotSupported = "NotSupported"
    QualityWarning = "QualityWarning"
    Timeout = "Timeout"
    BuildTimeout = "BuildTimeout"  # the pipeline build exceeded its bound: a slow compile, not a hang
    DeviceLost = "DeviceLost"
    Crash = "Crash"
    #: Within the spec's tolerance, but not the bit-exact result of the device numeric model the
    #: run selected (``--numerics``): changed from the known device behaviour, not a spec failure.
    ModelMismatch = "ModelMismatch"
    #: The validation layer reported messages on the case's dispatch (``--validation``): the usage or the
    #: driver's view of it is invalid, so the outputs prove nothing; never a Pass, and not a driver Fail.
    ValidationError = "ValidationError"

    @property
    def is_failure(self) -> bool:
        return self in (Status.Fail, Status.Timeout, Status.BuildTimeout, Status.DeviceLost, Status.Crash,
                        Status.ValidationError)


@dataclass
class CaseResult:
    name: str
    status: Status
    detail: str = ""
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    max_error_ratio: float | None = None  # tolerance rules: largest |error| / tolerance
    #: seconds of device time: its dispatch's time shared among the dispatch's cases
    duration_s: float | None = None
    #: the verdicts of its re-runs (``--flake-retries``), after this first one
    reruns: list[Status] = field(default_factory=list)
    #: documented deviations whose oracle the outputs satisfy, of those a baseline names (a failure only)
    explained_by: list[str] = field(default_factory=list)
    #: seconds its variant's pipeline build took (creation, and the first dispatch's compile where the
    #: driver compiles then): the variant's, the same on each of its cases; for a BuildTimeout, how long
    #: the build was waited for before it was stopped. None where the backend does not say (the reference)
    build_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status.value, "detail": self.detail}
        if self.mismatches:
            out["mismatches"] = self.mismatches
        if self.max_error_ratio is not None:
            out["max_error_ratio"] = self.max_error_ratio
        if self.duration_s is not None:
            out["duration_s"] = round(self.duration_s, 6)
        if self.reruns:
            out["reruns"] = [s.value for s in self.reruns]
        if self.explained_by:
            out["explained_by"] = self.explained_by
        if self.build_s is not None:
            out["build_s"] = round(self.build_s, 6)
        return out
