"""Verdicts (the CTS's result codes) and output comparison."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Status(str, enum.Enum):
    """Result codes, named as VK-GL-CTS names them."""

    Pass = "Pass"
    Fail = "Fail"
    NotSupported = "NotSupported"
    QualityWarning = "QualityWarning"
    Timeout = "Timeout"
    DeviceLost = "DeviceLost"
    Crash = "Crash"

    @property
    def is_failure(self) -> bool:
        return self in (Status.Fail, Status.Timeout, Status.DeviceLost, Status.Crash)


@dataclass
class CaseResult:
    name: str
    status: Status
    detail: str = ""
    mismatches: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status.value, "detail": self.detail}
        if self.mismatches:
            out["mismatches"] = self.mismatches
        return out


def differing_elements(actual: np.ndarray, expected: np.ndarray, rule: dict[str, Any]) -> np.ndarray:
    """Indices where ``actual`` breaks ``rule`` against ``expected``.

    Only the ``bitwise`` rule exists so far: the bits of every element must be equal.
    """
    if rule.get("rule") != "bitwise":
        raise ValueError(f"unknown compare rule {rule.get('rule')!r}; this ctsgen knows 'bitwise'")
    if actual.shape != expected.shape:
        return np.arange(max(actual.size, expected.size))
    bits = np.dtype(f"uint{8 * expected.dtype.itemsize}")
    return np.flatnonzero(actual.view(bits) != expected.view(bits))
