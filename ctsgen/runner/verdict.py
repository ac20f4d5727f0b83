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
    BuildTimeout = "BuildTimeout"  # the pipeline build exceeded its bound: a slow compile, not a hang
    DeviceLost = "DeviceLost"
    Crash = "Crash"

    @property
    def is_failure(self) -> bool:
        return self in (Status.Fail, Status.Timeout, Status.BuildTimeout, Status.DeviceLost, Status.Crash)


@dataclass
class CaseResult:
    name: str
    status: Status
    detail: str = ""
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    max_error_ratio: float | None = None  # tolerance rules: largest |error| / tolerance

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status.value, "detail": self.detail}
        if self.mismatches:
            out["mismatches"] = self.mismatches
        if self.max_error_ratio is not None:
            out["max_error_ratio"] = self.max_error_ratio
        return out


@dataclass
class BufferJudgement:
    """How one output buffer compares: the elements outside the rule, and for
    tolerance rules the largest |actual - expected| / tolerance seen."""

    bad: np.ndarray
    max_ratio: float = 0.0


def judge_buffer(actual: np.ndarray, expected: np.ndarray, rule: dict[str, Any],
                 tolerance: np.ndarray | None = None) -> BufferJudgement:
    """Compare one buffer under ``rule``.

    ``bitwise``: every element's bits are equal (data movement, integer paths).
    ``tolerance``: per element, |actual - expected| <= tolerance (a float64
    array the family derived and the pack stores); a NaN expected needs a
    NaN, an infinity the same infinity.
    """
    if actual.shape != expected.shape:
        return BufferJudgement(np.arange(max(actual.size, expected.size)), float("inf"))
    kind = rule.get("rule")
    if kind == "bitwise":
        bits = np.dtype(f"uint{8 * expected.dtype.itemsize}")
        return BufferJudgement(np.flatnonzero(actual.view(bits) != expected.view(bits)))
    if kind == "tolerance":
        if tolerance is None:
            raise ValueError("a 'tolerance' rule needs the buffer's tolerance array")
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        tol = np.broadcast_to(np.asarray(tolerance, dtype=np.float64), e.shape)
        finite = np.isfinite(e)
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(a - e)
            ok = np.where(finite, err <= tol, (np.isnan(e) & np.isnan(a)) | (a == e))
            ratio = np.where(finite & (tol > 0), err / np.where(tol > 0, tol, 1), np.where(ok, 0.0, np.inf))
        return BufferJudgement(np.flatnonzero(~ok), float(np.nanmax(ratio)) if ratio.size else 0.0)
    raise ValueError(f"unknown compare rule {kind!r}; this ctsgen knows 'bitwise' and 'tolerance'")
