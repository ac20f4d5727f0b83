"""Verdicts (the CTS's result codes), output comparison, and the one judge.

:func:`judge` is the execute-and-judge seam: ``ctsgen run``, ``ctsgen fuzz``,
:func:`ctsgen.testing.check_case`, the pytest plugin and the benches all
judge a case's output buffers with it, from what they hold (a name, the
buffers, the compare rule, a locator), so a verdict is the same wherever
it is reached. :func:`status_of` and :func:`describe` turn a backend error
(no result at all) into the verdict and its detail.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from ctsgen.errors import BackendError, BuildTimeout, DeviceLost, DispatchTimeout, WorkerCrashed

#: A 'tolerance' rule's default: a passing element whose error exceeds this fraction of
#: its tolerance makes the case a QualityWarning (``CompareRule.warn_fraction``).
DEFAULT_WARN_FRACTION = 0.75
#: Mismatching elements a failing case's result lists.
MAX_MISMATCHES = 8

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
        return out


@dataclass
class BufferJudgement:
    """How one output buffer compares: the elements outside the rule, and for
    tolerance rules the largest |actual - expected| / tolerance seen."""

    bad: np.ndarray
    max_ratio: float = 0.0


def tolerance_sides(tolerance: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(below, above) of a tolerance array: an array broadcastable to ``shape`` is symmetric;
    one of shape ``(2,) + shape`` holds how far below and how far above the expected value
    the actual one may lie (a faithfully rounded result: one side is 0, the other the
    distance to the exact value's other neighbour; decision "faithful-rounding")."""
    tol = np.asarray(tolerance, dtype=np.float64)
    if tol.ndim == len(shape) + 1 and tol.shape[0] == 2:
        return np.broadcast_to(tol[0], shape), np.broadcast_to(tol[1], shape)
    tol = np.broadcast_to(tol, shape)
    return tol, tol


def tolerance_at(tolerance: np.ndarray, shape: tuple[int, ...], k: int) -> float | list[float] | None:
    """Element ``k``'s tolerance for a report: a number, [below, above] for a two-sided one, or
    None for a moved element (a NaN bound: compared bit for bit; JSON has no NaN)."""
    below, above = tolerance_sides(tolerance, shape)
    lo, hi = float(below.ravel()[k]), float(above.ravel()[k])
    if np.isnan(lo) or np.isnan(hi):
        return None
    return lo if lo == hi else [lo, hi]


def _is_float(dtype: np.dtype) -> bool:
    """numpy floats and ml_dtypes' (bfloat16, fp8: numpy kind 'V')."""
    return dtype.kind == "f" or dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def _subnormal_within(lo: np.ndarray, hi: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Whether [lo, hi] holds a subnormal of ``dtype``: a nonzero multiple k * s of the smallest
    subnormal s with |k s| below the smallest normal (exact: s is a power of two). Never for an
    integer type."""
    if not _is_float(dtype):
        return np.zeros(np.shape(lo), bool)
    info = ml_dtypes.finfo(dtype)
    s, tiny = float(info.smallest_subnormal), float(info.smallest_normal)

    def positive(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.ceil(np.maximum(a, s) / s) * s <= np.minimum(b, tiny - s)

    with np.errstate(invalid="ignore"):
        return positive(lo, hi) | positive(-hi, -lo)


def judge_buffer(actual: np.ndarray, expected: np.ndarray, rule: dict[str, Any],
                 tolerance: np.ndarray | None = None) -> BufferJudgement:
    """Compare one buffer under ``rule`` (docs/pack-format.md, "Acceptance").

    ``bitwise``: every element's bits are equal (data movement, integer paths).
    With ``signed_zero: false`` (float arithmetic in a shader without
    SignedZeroInfNanPreserve) a float +0 and -0 count as equal, and a subnormal
    expected value admits +0 and -0 (flushed).
    ``tolerance``: per element, the actual value lies in [expected - below,
    expected + above] (a float64 array the family derived and the pack stores,
    symmetric or two-sided as :func:`tolerance_sides` describes); a NaN expected
    needs a NaN, an infinity the same infinity; where that interval holds a
    subnormal of the buffer's type, +0 and -0 pass too (flushed); an element
    whose tolerance is NaN is moved, not computed, and must keep every bit;
    with ``signed_zero: true`` an expected zero whose tolerance is 0 needs a
    zero of the same sign.

    Flushing: Vulkan, "Precision and Operation of SPIR-V Instructions": "By default,
    any half, single, or double-precision denormalized value input into a shader or
    potentially generated by any instruction (except those listed above) or any
    extended instructions for GLSL in a shader may: be flushed to zero"; no ctsgen
    shader declares DenormPreserve (decision "flush-to-zero").
    """
    if actual.shape != expected.shape:
        return BufferJudgement(np.arange(max(actual.size, expected.size)), float("inf"))
    kind = rule.get("rule")
    bits = np.dtype(f"uint{8 * expected.dtype.itemsize}")
    if kind == "bitwise":
        differ = actual.view(bits) != expected.view(bits)
        if rule.get("signed_zero") is False and _is_float(expected.dtype):
            with np.errstate(invalid="ignore"):  # a signalling NaN's cast; it is not a zero either way
                a, e = actual.astype(np.float64), expected.astype(np.float64)
                differ &= ~((a == 0) & ((e == 0) | _subnormal_within(e, e, expected.dtype)))
        return BufferJudgement(np.flatnonzero(differ))
    if kind == "tolerance":
        if tolerance is None:
            raise ValueError("a 'tolerance' rule needs the buffer's tolerance array")
        with np.errstate(invalid="ignore"):  # a signalling NaN's cast
            a, e = actual.astype(np.float64), expected.astype(np.float64)
        below, above = tolerance_sides(tolerance, e.shape)
        moved = np.isnan(below) | np.isnan(above)
        finite = np.isfinite(e)
        with np.errstate(invalid="ignore", over="ignore"):
            d = a - e
            tol = np.where(d < 0, below, above)  # the side the actual value lies on
            err = np.abs(d)
            within = err <= tol
            flushed = (a == 0) & ~within & _subnormal_within(e - below, e + above, expected.dtype)
            ok = np.where(finite, within | flushed, (np.isnan(e) & np.isnan(a)) | (a == e))
            if rule.get("signed_zero") is True:
                ok &= ~((e == 0) & (tol == 0) & (np.signbit(a) != np.signbit(e)))
            if moved.any():
                ok = np.where(moved, actual.view(bits) == expected.view(bits), ok)
            ratio = np.where(finite & (tol > 0) & ~flushed, err / np.where(tol > 0, tol, 1),
                             np.where(ok, np.where(flushed, 1.0, 0.0), np.inf))
        return BufferJudgement(np.flatnonzero(~ok), float(np.nanmax(ratio)) if ratio.size else 0.0)
    raise ValueError(f"unknown compare rule {kind!r}; this ctsgen knows 'bitwise' and 'tolerance'")


@dataclass(frozen=True)
class OutputBuffer:
    """One buffer of a case as the judge sees it: what came back, what must come back
    (None: not checked) and, for a 'tolerance' rule, the per-element bound."""

    name: str
    actual: np.ndarray
    expected: np.ndarray | None
    tolerance: np.ndarray | None = None


def output_buffers(names: Sequence[str], actual: Sequence[np.ndarray], expected: Sequence[np.ndarray | None],
                   tolerance: Sequence[np.ndarray | None] | None = None) -> list[OutputBuffer]:
    """The :class:`OutputBuffer` of each buffer, in binding order (``tolerance`` None: a bitwise rule)."""
    tolerance = tolerance or [None] * len(expected)
    return [OutputBuffer(n, a, e, t) for n, a, e, t in zip(names, actual, expected, tolerance)]


def judge(name: str, buffers: Sequence[OutputBuffer], rule: Mapping[str, Any],
          locate: Locator | None = None) -> CaseResult:
    """The verdict of case ``name`` from its output ``buffers`` under compare ``rule``
    (``CompareRule.to_json()``: ``{"rule": "bitwise"}`` or ``{"rule": "tolerance",
    "warn_fraction": f}``).

    The first buffer with elements outside the rule fails the case; its result lists
    the first :data:`MAX_MISMATCHES` of them, each with what ``locate`` says about it
    (called only for a failing case). A tolerance rule whose largest error exceeds
    ``warn_fraction`` (default :data:`DEFAULT_WARN_FRACTION`) of the tolerance anywhere,
    while staying within it, gives QualityWarning: acceptable, but close to the edge of
    what the rule allows.
    """
    worst = None
    for b, buf in enumerate(buffers):
        if buf.expected is None:
            continue
        j = judge_buffer(buf.actual, buf.expected, rule, buf.tolerance)
        if rule.get("rule") != "bitwise":
            worst = max(worst or 0.0, j.max_ratio)
        if j.bad.size:
            mism = []
            for k in j.bad[:MAX_MISMATCHES]:
                k = int(k)
                entry = {"buffer": buf.name, "element": k,
                         "expected": _scalar(buf.expected, k), "actual": _scalar(buf.actual, k)}
                bound = None if buf.tolerance is None else tolerance_at(buf.tolerance, buf.expected.shape, k)
                if bound is not None:
                    entry["tolerance"] = bound
                if locate is not None:
                    entry.update(locate(b, k))
                mism.append(entry)
            return CaseResult(name, Status.Fail,
                              f"{j.bad.size} of {buf.expected.size} elements of '{buf.name}' differ", mism, worst)
    if worst is not None and worst > rule.get("warn_fraction", DEFAULT_WARN_FRACTION):
        return CaseResult(name, Status.QualityWarning,
                          f"within tolerance, but an error reaches {worst:.2f} of it", max_error_ratio=worst)
    return CaseResult(name, Status.Pass, max_error_ratio=worst)


def _scalar(arr: np.ndarray, k: int) -> Any:
    if k >= arr.size:
        return None
    v = arr[k]
    bits = int(arr[k:k + 1].view(f"uint{8 * arr.dtype.itemsize}")[0])
    return {"value": float(v) if arr.dtype.kind == "f" or arr.dtype.name == "bfloat16" else int(v),
            "bits": f"0x{bits:0{2 * arr.dtype.itemsize}x}"}


_STATUS: dict[type[BackendError], Status] = {
    DispatchTimeout: Status.Timeout, BuildTimeout: Status.BuildTimeout, DeviceLost: Status.DeviceLost,
    WorkerCrashed: Status.Crash}


def status_of(exc: BackendError | None) -> Status:
    """The verdict of a case whose dispatch gave no result because of ``exc``: Timeout,
    BuildTimeout (its pipeline build exceeded its bound), DeviceLost, or Crash (a dead
    worker, or any other backend error)."""
    return _STATUS.get(type(exc), Status.Crash)


def describe(exc: BackendError | None) -> str:
    """The detail of such a verdict: the error's class and message."""
    return f"{type(exc).__name__}: {exc}"


def error_result(name: str, exc: BackendError) -> CaseResult:
    """The verdict of case ``name`` whose dispatch raised ``exc``."""
    return CaseResult(name, status_of(exc), describe(exc))
