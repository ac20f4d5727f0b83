"""Running a pack on a backend: one dispatch per batch of cases of a variant.

Results are appended to a JSON-lines file as each batch completes, so an
interrupted run keeps what it finished. A failing case's result names the
first differing elements with what the family says about them (for
tensor layouts: the (row, col) and the tensor coordinates the oracle used).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ctsgen.backends.base import Backend, BackendError, DeviceLost, DispatchTimeout
from ctsgen.families import get_family
from ctsgen.pack.read import Pack, PackCase
from ctsgen.runner.batch import build_batch, case_outputs
from ctsgen.runner.verdict import CaseResult, Status, differing_elements

MAX_MISMATCHES = 8


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

    @property
    def ok(self) -> bool:
        return not any(Status(s).is_failure for s in self.counts)


def _chunks(items: list[PackCase], size: int) -> Iterator[list[PackCase]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _explain(case: PackCase, buffer: int, element: int) -> dict[str, Any]:
    family = get_family(case.record["family"])
    model = family.case_from_json(case.record["parameters"])
    locate = getattr(model, "locate", None)
    return locate(buffer, element) if locate else {}


def judge(case: PackCase, outputs: list, expected: list) -> CaseResult:
    """Compare one case's output buffers against the expected ones."""
    for b, (got, want) in enumerate(zip(outputs, expected)):
        if want is None:
            continue
        bad = differing_elements(got, want, case.record["compare"])
        if bad.size:
            spec = case.buffers[b]
            mism = []
            for k in bad[:MAX_MISMATCHES]:
                k = int(k)
                entry = {"buffer": spec.name, "element": k,
                         "expected": _scalar(want, k), "actual": _scalar(got, k)}
                entry.update(_explain(case, b, k))
                mism.append(entry)
            return CaseResult(case.name, Status.Fail,
                              f"{bad.size} of {want.size} elements of '{spec.name}' differ", mism)
    return CaseResult(case.name, Status.Pass)


def _scalar(arr: Any, k: int) -> Any:
    if k >= arr.size:
        return None
    v = arr[k]
    bits = int(arr[k:k + 1].view(f"uint{8 * arr.dtype.itemsize}")[0])
    return {"value": float(v) if arr.dtype.kind == "f" or arr.dtype.name == "bfloat16" else int(v),
            "bits": f"0x{bits:0{2 * arr.dtype.itemsize}x}"}


def run_pack(pack: Pack, backend: Backend, results: IO[str], options: RunOptions = RunOptions(),
             skip: set[str] = frozenset(),
             progress: Callable[[int, int, Counter], None] | None = None) -> RunSummary:
    """Run every case of ``pack`` not in ``skip``; write one JSON line per case to ``results``."""
    start = time.monotonic()
    summary = RunSummary()
    profile = backend.profile()
    by_variant: dict[str, list[PackCase]] = {}
    for c in pack.cases:
        if c.name not in skip:
            by_variant.setdefault(c.variant_id, []).append(c)
    total = sum(len(v) for v in by_variant.values())
    done = 0
    prepare = getattr(backend, "prepare", None)
    if prepare is not None:  # optional: build every pipeline up front, in parallel
        prepare([pack.variants[vid] for vid in by_variant
                 if not profile.unsupported_reason(pack.variants[vid].requirements)])

    def record(r: CaseResult) -> None:
        nonlocal done
        summary.counts[r.status.value] += 1
        if r.status.is_failure:
            summary.failures.append(r)
        results.write(json.dumps(r.to_json(), sort_keys=True) + "\n")
        done += 1

    for vid, cases in by_variant.items():
        variant = pack.variants[vid]
        reason = profile.unsupported_reason(variant.requirements)
        if reason:
            for c in cases:
                record(CaseResult(c.name, Status.NotSupported, reason))
        else:
            for chunk in _chunks(cases, options.batch_size):
                arrays = [c.arrays() for c in chunk]
                batch = build_batch(variant, [c.params for c in chunk], [a[0] for a in arrays])
                try:
                    out = backend.run(batch.dispatch, options.timeout_for(len(chunk)))
                except (DispatchTimeout, DeviceLost, BackendError) as exc:
                    status = {DispatchTimeout: Status.Timeout, DeviceLost: Status.DeviceLost}.get(
                        type(exc), Status.Crash)
                    for c in chunk:
                        record(CaseResult(c.name, status, f"{type(exc).__name__}: {exc}"))
                    continue
                for i, c in enumerate(chunk):
                    record(judge(c, case_outputs(batch, out, i), arrays[i][1]))
        results.flush()
        if progress:
            progress(done, total, summary.counts)
    summary.wall_s = time.monotonic() - start
    return summary


def read_done(path: Path) -> set[str]:
    """Names of cases already in a results file (for --resume); a torn last line is ignored."""
    done = set()
    try:
        with open(path) as fh:
            for line in fh:
                try:
                    done.add(json.loads(line)["name"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue
    except FileNotFoundError:
        pass
    return done
