"""Running a pack on a backend: one dispatch per batch of cases of a variant.

Results are appended to a JSON-lines file as each batch completes, so an
interrupted run keeps what it finished and ``--resume`` skips it. A batch
that hangs, loses the device or kills the worker is bisected until the
culprit is alone: each step runs one half, so a single culprit in a batch
of n is isolated in ceil(log2(n)) dispatches plus one that confirms it
alone; the other halves are then run as ordinary batches. After
MAX_CULPRITS_PER_VARIANT culprits in one variant, its remaining failing
batches are recorded whole (the failure is then variant-wide). A failing
case's result names the first differing elements with what the family
says about them (for tensor layouts: the (row, col) and the tensor
coordinates the oracle used).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from ctsgen.backends.base import Backend, BackendError, DeviceLost, DispatchTimeout, ShaderVariant
from ctsgen.families import get_family
from ctsgen.pack.read import Pack, PackCase
from ctsgen.runner.batch import ALIGN_BYTES, build_batch, case_outputs
from ctsgen.runner.contract import check_outputs
from ctsgen.runner.supervise import WorkerCrashed
from ctsgen.runner.verdict import CaseResult, Status, judge_buffer

MAX_MISMATCHES = 8
#: Culprits isolated per variant before the rest of its failing batches are
#: recorded as they are: beyond that the failure looks variant-wide (a
#: pipeline that cannot be built), and bisecting every case would cost O(n).
MAX_CULPRITS_PER_VARIANT = 4
_STATUS: dict[type[BackendError], Status] = {
    DispatchTimeout: Status.Timeout, DeviceLost: Status.DeviceLost, WorkerCrashed: Status.Crash}


@dataclass
class RunOptions:
    batch_size: int = 512
    timeout_base_s: float = 10.0
    timeout_per_case_s: float = 0.01

    def timeout_for(self, n_cases: int) -> float:
        """The bounded wait for a dispatch of ``n_cases`` cases."""
        return self.timeout_base_s + self.timeout_per_case_s * n_cases


@dataclass
class RunSummary:
    counts: Counter = field(default_factory=Counter)
    wall_s: float = 0.0
    failures: list[CaseResult] = field(default_factory=list)
    dispatches: int = 0
    bisection_dispatches: int = 0
    hang_detect_s: list[float] = field(default_factory=list)
    resumed: int = 0  # cases whose verdict came from the results file of an earlier run

    @property
    def ok(self) -> bool:
        return not any(Status(s).is_failure for s in self.counts)


def _case_bytes(case: PackCase) -> list[int]:
    """Bytes each buffer of ``case`` needs (from the .npy headers, without reading the data)."""
    return [int(np.prod(shape)) * np.dtype(spec.dtype).itemsize
            for spec, shape in zip(case.buffers, case.shapes())]


def _oversized(case: PackCase, limit: int | None) -> str | None:
    """Why ``case`` cannot run on a device whose storage buffers hold ``limit`` bytes, if so."""
    if not limit:
        return None
    for spec, size in zip(case.buffers, _case_bytes(case)):
        if size > limit:
            return f"buffer '{spec.name}' needs {size} bytes > maxStorageBufferRange {limit}"
    return None


def _chunks(items: list[PackCase], size: int, limit: int | None = None) -> Iterator[list[PackCase]]:
    """Batches of at most ``size`` cases whose buffers each stay within ``limit`` bytes."""
    batch: list[PackCase] = []
    totals: list[int] = []
    for case in items:
        need = [b + ALIGN_BYTES for b in _case_bytes(case)] if limit else []
        if batch and (len(batch) == size or (limit and any(t + n > limit for t, n in zip(totals, need)))):
            yield batch
            batch, totals = [], []
        batch.append(case)
        totals = [t + n for t, n in zip(totals, need)] if totals else need
    if batch:
        yield batch


def _locator(case: PackCase) -> Callable[[int, int], dict[str, Any]]:
    """What the family says about (buffer, element) of ``case`` (built once per failing case)."""
    model = get_family(case.record["family"]).case_from_json(case.record["parameters"])
    return getattr(model, "locate", None) or (lambda buffer, element: {})


def judge(case: PackCase, outputs: list, expected: list, tolerances: list | None = None) -> CaseResult:
    """Compare one case's output buffers against the expected ones.

    A tolerance rule whose largest error exceeds ``warn_fraction`` (default
    0.75) of the tolerance anywhere, while staying within it, gives
    QualityWarning: acceptable, but close to the edge of what the rule allows.
    """
    rule = case.record["compare"]
    worst = None
    for b, (got, want) in enumerate(zip(outputs, expected)):
        if want is None:
            continue
        j = judge_buffer(got, want, rule, tolerances[b] if tolerances else None)
        if rule.get("rule") != "bitwise":
            worst = max(worst or 0.0, j.max_ratio)
        if j.bad.size:
            spec = case.buffers[b]
            locate = _locator(case)
            mism = []
            for k in j.bad[:MAX_MISMATCHES]:
                k = int(k)
                entry = {"buffer": spec.name, "element": k,
                         "expected": _scalar(want, k), "actual": _scalar(got, k)}
                if tolerances and tolerances[b] is not None:
                    entry["tolerance"] = float(np.broadcast_to(tolerances[b], want.shape).ravel()[k])
                entry.update(locate(b, k))
                mism.append(entry)
            return CaseResult(case.name, Status.Fail,
                              f"{j.bad.size} of {want.size} elements of '{spec.name}' differ", mism, worst)
    if worst is not None and worst > rule.get("warn_fraction", 0.75):
        return CaseResult(case.name, Status.QualityWarning,
                          f"within tolerance, but an error reaches {worst:.2f} of it", max_error_ratio=worst)
    return CaseResult(case.name, Status.Pass, max_error_ratio=worst)


def _scalar(arr: Any, k: int) -> Any:
    if k >= arr.size:
        return None
    v = arr[k]
    bits = int(arr[k:k + 1].view(f"uint{8 * arr.dtype.itemsize}")[0])
    return {"value": float(v) if arr.dtype.kind == "f" or arr.dtype.name == "bfloat16" else int(v),
            "bits": f"0x{bits:0{2 * arr.dtype.itemsize}x}"}


class _VariantRun:
    """Runs the cases of one variant, bisecting dispatches that fail as a whole."""

    def __init__(self, backend: Backend, variant: ShaderVariant, options: RunOptions, summary: RunSummary,
                 record: Callable[[CaseResult], None]) -> None:
        self.backend, self.variant, self.options = backend, variant, options
        self.summary, self.record = summary, record
        self.culprits = 0

    def dispatch(self, group: list[PackCase]) -> tuple[list[CaseResult] | None, BackendError | None]:
        arrays = [c.arrays() for c in group]
        batch = build_batch(self.variant, [c.params for c in group], [a[0] for a in arrays])
        self.summary.dispatches += 1
        start = time.monotonic()
        try:
            out = self.backend.run(batch.dispatch, self.options.timeout_for(len(group)))
        except BackendError as exc:
            if isinstance(exc, DispatchTimeout):  # the wait itself, without replacing a dead worker
                self.summary.hang_detect_s.append(getattr(self.backend, "last_wait_s", time.monotonic() - start))
            return None, exc
        check_outputs(getattr(self.backend, "name", type(self.backend).__name__), batch.dispatch, out)
        return [judge(c, case_outputs(batch, out, i), arrays[i][1], c.tolerances())
                for i, c in enumerate(group)], None

    def run(self, group: list[PackCase]) -> None:
        results, exc = self.dispatch(group)
        if results is not None:
            for r in results:
                self.record(r)
        elif len(group) == 1:
            self.record(CaseResult(group[0].name, _status(exc), _describe(exc)))
        elif self.culprits >= MAX_CULPRITS_PER_VARIANT:
            for c in group:
                self.record(CaseResult(c.name, _status(exc), f"{_describe(exc)}; not bisected: this variant "
                                       f"already has {self.culprits} culprits, the failure looks variant-wide"))
        else:
            self.isolate(group, exc)

    def isolate(self, group: list[PackCase], exc: BackendError) -> None:
        """``group`` failed as a whole with ``exc``: find the culprit by halving."""
        size, steps, deferred = len(group), 0, []
        while len(group) > 1:
            first, second = group[:len(group) // 2], group[len(group) // 2:]
            results, err = self.dispatch(first)
            steps += 1
            if results is not None:
                for r in results:
                    self.record(r)
                group = second  # the failure is in the other half, which need not run whole
            else:
                deferred.append(second)
                group, exc = first, err
        results, err = self.dispatch(group)  # confirm the culprit alone
        steps += 1
        self.summary.bisection_dispatches += steps
        where = f"isolated by bisection from a batch of {size} in {steps} dispatches"
        if results is not None:
            r = results[0]
            r.detail = (f"{r.detail}; " if r.detail else "") + \
                f"passed alone after its batch failed with {_describe(exc)} ({where}): flaky?"
            self.record(r)
        else:
            self.culprits += 1
            self.record(CaseResult(group[0].name, _status(err), f"{_describe(err)}; culprit {where}"))
        for rest in deferred:
            self.run(rest)


def _status(exc: BackendError | None) -> Status:
    return _STATUS.get(type(exc), Status.Crash)


def _describe(exc: BackendError | None) -> str:
    return f"{type(exc).__name__}: {exc}"


def run_pack(pack: Pack, backend: Backend, results: IO[str], options: RunOptions = RunOptions(),
             done_before: dict[str, Status] | None = None,
             progress: Callable[[int, int, Counter], None] | None = None) -> RunSummary:
    """Run every case of ``pack`` not in ``done_before`` (verdicts of an earlier,
    resumed run, which count toward the summary); write one JSON line per case run."""
    start = time.monotonic()
    summary = RunSummary()
    skip = {}
    for c in pack.cases:
        if done_before and c.name in done_before:
            skip[c.name] = done_before[c.name]
            summary.counts[done_before[c.name].value] += 1
    profile = backend.profile()
    by_variant: dict[str, list[PackCase]] = {}
    for c in pack.cases:
        if c.name not in skip:
            by_variant.setdefault(c.variant_id, []).append(c)
    total = sum(len(v) for v in by_variant.values())
    done = 0

    def record(r: CaseResult) -> None:
        nonlocal done
        summary.counts[r.status.value] += 1
        if r.status.is_failure:
            summary.failures.append(r)
        results.write(json.dumps(r.to_json(), sort_keys=True) + "\n")
        results.flush()
        done += 1

    supported = {vid: pack.variants[vid].requirements for vid in by_variant}
    reasons = {vid: profile.unsupported_reason(req) for vid, req in supported.items()}
    prepare = getattr(backend, "prepare", None)
    if prepare is not None:  # optional: build every pipeline up front, in parallel
        try:
            prepare([pack.variants[vid] for vid in by_variant if not reasons[vid]])
        except BackendError:
            pass  # each variant's own dispatch will say what is wrong with it
    limit = profile.properties.get("maxStorageBufferRange")
    for vid, cases in by_variant.items():
        if reasons[vid]:
            for c in cases:
                record(CaseResult(c.name, Status.NotSupported, reasons[vid]))
            continue
        fitting = []
        for c in cases:
            too_big = _oversized(c, limit)
            if too_big:
                record(CaseResult(c.name, Status.NotSupported, too_big))
            else:
                fitting.append(c)
        runner = _VariantRun(backend, pack.variants[vid], options, summary, record)
        for chunk in _chunks(fitting, options.batch_size, limit):
            runner.run(chunk)
        if progress:
            progress(done, total, summary.counts)
    summary.wall_s = time.monotonic() - start
    summary.resumed = len(skip)
    return summary


def recover_results(path: Path) -> dict[str, Status]:
    """The verdicts a results file already holds (name -> status), for ``--resume``.

    A run killed mid-write can leave a torn last line; the file is rewritten
    (atomically) without it, so appending continues a valid file.
    """
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return {}
    good, done = [], {}
    for line in lines:
        try:
            rec = json.loads(line)
            done[rec["name"]] = Status(rec["status"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
        good.append(line)
    if len(good) != len(lines):
        fd, tmp = tempfile.mkstemp(dir=Path(path).parent, prefix=".results-")
        with os.fdopen(fd, "w") as fh:
            fh.write("".join(g + "\n" for g in good))
        os.replace(tmp, path)
    return done
