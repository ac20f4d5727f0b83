"""Findings bucketed as distinct bugs, not distinct cases.

A failing case goes into the bucket of what explains it:

1. **A mutant that explains it** (the catalogue, ``ctsgen mutants``, models
   both injected bugs and documented driver deviations such as
   ``setdimension-floor``): the output buffers the device gave for the case
   pass the judge (:func:`ctsgen.execute.judge.judge`, the case's own compare
   rule) against what the case's oracle gives with the mutant applied, its
   tolerance recomputed there too (:func:`ctsgen.mutants.deviations.expected_under`):
   the case passes as it would under ``--expect-deviation NAME``. So the
   match is exact where the judge is exact, the sign of a zero counts only
   where the judge counts it, and a float-domain result matches within the
   same bounds as any float result (docs/campaign.md, "Buckets"). Every
   mutant is a candidate, whatever its family (a tensor-layout fault shows
   in decode and tensor-view cases too); those that already explain a
   bucket are tried first, so one bug seen in many shapes stays one
   bucket, then those modelling a driver's deviation (``Mutant.instructions``
   declared), so outputs two mutants explain go to the known deviation. Bucket key ``mutant:NAME``.
2. **Otherwise a signature**: the family, the operation, the failing
   parameter classes (the variant's categorical fields, e.g. clampMode and
   component types, and which optional run-time parameters the case sets;
   their numeric values, offsets included, sizes, seeds and the choice of
   input data such as ``edges`` are shapes, not classes),
   the wrong-element pattern (which buffer, how many of its elements: one,
   some, most or all, and what the wrong values are: zero, NaN, values
   moved from elsewhere in the expected output, or other) and the verdict
   kind (Fail, Timeout, DeviceLost, Crash, ...). Bucket key ``sig:`` + a
   digest of it.

Each bucket keeps a count of the failing cases it received and its smallest
repro (fewest elements over all buffers).

A **route finding** (a case that passes along one compiler route and fails along
another, ``fuzz --routes``) goes into a :class:`RouteBucket` keyed
``route:ROUTE:`` + the digest of its signature along the failing route, holding
both verdicts of its smallest case. ``bench/triage_with_mutant.py``
uses :func:`fingerprint` (same verdict, detail and wrong bits) for whole packs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ctsgen.backends.base import Backend
from ctsgen.core.shader import ShaderVariant
from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.mutants.deviations import expected_under
from ctsgen.families import get_family
from ctsgen.core.family import Case, CaseData
from ctsgen.core.mutant import Mutant
from ctsgen.mutants.catalogue import catalogue, get_mutant
from ctsgen.execute.run import drawn, judged, run_cases
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.toolchain.variants import compile_variant

#: A case's output buffers as a device gave them, in binding order (None: the dispatch gave none).
Outputs = list[np.ndarray] | None

#: Variant fields that name an operation, in the order they are looked for.
OPERATION_FIELDS = ("operation", "op", "kind", "mode", "decoder")
#: Run-time parameters that are noise, not a class: data seeds and which input values are drawn
#: (coopvec's ``values``, coopvec-elementwise's ``edges``: the same op and types on other inputs,
#: docs/campaign.md).
NOISE_FIELDS = ("seed", "data", "family", "variant", "values", "edges")
_DIFFER = re.compile(r"(\d+) of (\d+) elements of '([^']*)' differ")


def case_size(case: Case) -> int:
    """Elements over all of a case's buffers: what a repro makes a reader look at."""
    return int(sum(a.size for a in case.data().initial))


def fingerprint(record: dict[str, Any]) -> tuple:
    """What must agree for two runs of a case to fail the same way: verdict, detail, and
    each reported wrong element with its bits (a results-file record or ``CaseResult.to_json()``)."""
    return (record["status"], record.get("detail", ""),
            [(m.get("buffer"), m["element"], (m.get("actual") or {}).get("bits"))
             for m in record.get("mismatches", [])])


def shader_of(case: Case) -> ShaderVariant:
    """The case's variant as a backend that needs no SPIR-V (the reference backend) takes it."""
    return compile_variant(case.variant(), case.family, validation="no-module")


def observe(backend: Backend, case: Case, sv: ShaderVariant | None = None, data: CaseData | None = None,
            timeout_s: float = 10.0) -> tuple[CaseResult, Outputs]:
    """``case`` run alone on ``backend`` (``sv``: its compiled variant; default: one without SPIR-V),
    judged as ``ctsgen run`` judges it against ``data`` (default ``case.data()``), with the output
    buffers the backend gave (None when the dispatch gave none: Timeout, DeviceLost, Crash)."""
    sv = sv or shader_of(case)
    data = data or case.data()
    try:
        done = run_cases(backend, sv, [drawn(case, data)], timeout_s)
    except Exception as exc:  # noqa: BLE001 - an injected fault may raise anything: its verdict is Crash
        return CaseResult(case.name(), Status.Crash, f"{type(exc).__name__}: {exc}"), None
    return done.results[0], None if done.outputs is None else done.outputs[0]


def run_with_mutant(case: Case, mutant: Mutant | None) -> CaseResult:
    """``case`` run in-process on the reference backend with ``mutant`` applied (None: as the spec
    says), judged as ``ctsgen run`` judges. The expectation is computed before the mutant is applied."""
    return observe(ReferenceBackend() if mutant is None else MutantBackend(mutant.name), case)[0]


def explains(mutant: Mutant, case: Case, outputs: list[np.ndarray]) -> bool:
    """Whether ``outputs`` (what a device gave for ``case``) fail the spec's judge and pass the judge
    against the case's oracle with ``mutant`` applied: the verdict ``--expect-deviation NAME`` would
    give them. Outputs the spec's judge passes need no explanation (a failure that does not recur when
    its case runs alone is explained by no deviation, whichever its oracle leaves unchanged)."""
    names = [b.name for b in case.variant().buffers()]
    try:
        spec = case.data()
        if not judged(drawn(case, spec), names, outputs).status.is_failure:
            return False
        data = expected_under(get_family(case.family), case, spec, [mutant.name])
    except Exception:  # noqa: BLE001 - a mutant may make another family's oracle raise: no explanation
        return False
    if all(e is None for e in data.expected) and any(e is not None for e in spec.expected):
        return _gives(mutant, case, spec, outputs)
    return not judged(drawn(case, data), names, outputs).status.is_failure


def _gives(mutant: Mutant, case: Case, spec: CaseData, outputs: list[np.ndarray]) -> bool:
    """Where the deviation leaves a case's result undefined (its oracle has no value to expect), the
    mutant explains ``outputs`` only if they are, bit for bit, what its own software device gives:
    the case's reference semantics with the mutant applied, on the case's inputs. Any other wrong
    output is another bug."""
    buffers = [np.array(b, copy=True) for b in spec.initial]
    try:
        with mutant.applied():
            case.variant().execute(np.asarray(spec.params)[None, :], np.zeros((1, len(buffers)), np.int64), buffers)
    except Exception:  # noqa: BLE001 - the mutant's device cannot run this case: no explanation
        return False
    return all(np.asarray(o).tobytes() == b.tobytes()
               for o, b, e in zip(outputs, buffers, spec.expected) if e is not None)


def _classes(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Categorical fields as they are, numbers and lists as 'set'; None is absent."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in NOISE_FIELDS:
                out.update(_classes(v, f"{prefix}{k}."))
        return out
    key = prefix[:-1]
    if obj is None:
        return out
    if isinstance(obj, (bool, str)):
        out[key] = obj
    else:  # a number (a value, an offset, a size) or a list: set, its value a shape
        out[key] = "set"
    return out


def _categorical(obj: Any, prefix: str = "") -> dict[str, Any]:
    """A variant's categorical fields (strings, booleans); its sizes are shapes."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(_categorical(v, f"{prefix}{k}."))
        elif isinstance(v, (bool, str)):
            out[f"{prefix}{k}"] = v
    return out


def operation(variant_json: dict[str, Any], family: str) -> str:
    """The variant's operation (its first OPERATION_FIELDS field), or the family's name."""
    return next((str(variant_json[k]) for k in OPERATION_FIELDS if k in variant_json), family)


def wrong_elements(case: Case, result: CaseResult) -> str:
    """The wrong-element pattern: buffer, extent (one/some/most/all) and value kind."""
    if result.status is not Status.Fail:
        return "-"
    m = _DIFFER.search(result.detail)
    if not m:
        return "?"
    bad, total, buffer = int(m.group(1)), int(m.group(2)), m.group(3)
    extent = "one" if bad == 1 else "all" if bad == total else "most" if 2 * bad > total else "some"
    data = case.data()
    names = [b.name for b in case.variant().buffers()]
    expected = data.expected[names.index(buffer)] if buffer in names else None
    actual = [int(x["actual"]["bits"], 16) for x in result.mismatches if x.get("actual")]
    values = [x["actual"]["value"] for x in result.mismatches if x.get("actual")]
    if actual and all(b == 0 for b in actual):
        kind = "zero"
    elif values and all(isinstance(v, float) and np.isnan(v) for v in values):
        kind = "nan"
    elif expected is not None and actual:
        bits = expected.reshape(-1).view(f"uint{8 * expected.dtype.itemsize}")
        kind = "moved" if np.isin(np.array(actual, dtype=np.uint64), bits.astype(np.uint64)).all() else "other"
    else:
        kind = "other"
    return f"{buffer}:{extent}:{kind}"


def signature(case: Case, result: CaseResult) -> dict[str, Any]:
    """The signature of a failure no mutant explains (see the module docstring)."""
    vj = case.variant().to_json()
    params = {k: v for k, v in case.to_json().items() if k != "variant"}
    return {"family": case.family, "operation": operation(vj, case.family),
            "classes": {**_categorical(vj), **_classes(params)},
            "wrong": wrong_elements(case, result), "verdict": result.status.value}


@dataclass
class Bucket:
    """One distinct bug: what explains it, how often it was seen, its smallest repro."""

    key: str
    title: str
    explained_by: str | None  # the mutant's name, for an exact explanation
    signature: dict[str, Any]
    count: int = 0
    size: int = 0  # elements over all buffers of the smallest repro
    case: dict[str, Any] = field(default_factory=dict)  # the smallest repro, as Case.to_json()
    result: dict[str, Any] = field(default_factory=dict)  # its verdict, as CaseResult.to_json()
    names: set[str] = field(default_factory=set)  # distinct failing cases

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "explained_by": self.explained_by,
                "signature": self.signature, "count": self.count, "size": self.size,
                "case": self.case, "result": self.result, "distinct_cases": len(self.names)}


@dataclass
class Placement:
    """Where one failure went."""

    bucket: Bucket
    new: bool  # the first failure of its bucket
    smaller: bool  # its case is now the bucket's smallest repro


class Buckets:
    """Buckets failures as they come (see the module docstring).

    ``mutants``: the candidate explanations (default: the whole catalogue;
    an empty sequence buckets by signature only). ``on_new`` is called with
    each new bucket, as it appears.
    """

    def __init__(self, mutants: Sequence[Mutant] | None = None,
                 on_new: Callable[[Bucket], None] | None = None) -> None:
        self.mutants = list(catalogue().values()) if mutants is None else list(mutants)
        self.on_new = on_new
        self.buckets: dict[str, Bucket] = {}

    def explain(self, case: Case, result: CaseResult, outputs: Outputs) -> Mutant | None:
        """The first mutant that explains ``outputs`` (:func:`explains`; mutants that already
        explain a bucket first, then those modelling a driver's deviation), or None. Hangs, lost devices and crashes are never explained."""
        if result.status is not Status.Fail or outputs is None:
            return None
        seen = {b.explained_by for b in self.buckets.values()}
        # every mutant: one family's fault shows in others (decode and tensor-view load through
        # tensor layouts); those explaining a bucket first, then those modelling a driver's deviation
        # (declaring the instructions it shows through, as an expected deviation must), then the case's
        # family's own: outputs two mutants explain go to the deviation a driver is known to have
        for m in sorted(self.mutants, key=lambda m: (m.name not in seen, not m.instructions,
                                                     m.family != case.family)):
            if explains(m, case, outputs):
                return m
        return None

    def classify(self, case: Case, result: CaseResult, outputs: Outputs
                 ) -> tuple[str, str, str | None, dict[str, Any]]:
        """(key, title, explaining mutant's name, signature) of a failure."""
        sig = signature(case, result)
        m = self.explain(case, result, outputs)
        if m is not None:
            return f"mutant:{m.name}", f"{m.family}: {m.description} (explained by mutant {m.name})", \
                m.name, sig
        digest = hashlib.sha256(json.dumps(sig, sort_keys=True).encode()).hexdigest()[:12]
        classes = ", ".join(f"{k}={v}" for k, v in sorted(sig["classes"].items()))
        title = f"{sig['family']} {sig['operation']}: {sig['verdict']}, wrong {sig['wrong']} [{classes}]"
        return f"sig:{digest}", title, None, sig

    def add(self, case: Case, result: CaseResult, outputs: Outputs) -> Placement:
        """Put one failure (``outputs``: the device's buffers for it) in its bucket."""
        key, title, by, sig = self.classify(case, result, outputs)
        new = key not in self.buckets
        b = self.buckets.setdefault(key, Bucket(key, title, by, sig))
        b.count += 1
        b.names.add(case.name())
        size = case_size(case)
        smaller = new or size < b.size
        if smaller:
            b.size, b.case, b.result = size, case.to_json(), result.to_json()
        if new and self.on_new:
            self.on_new(b)
        return Placement(b, new, smaller)

    def explained(self, case: Case, result: CaseResult, outputs: Outputs) -> Bucket | None:
        """The existing bucket whose mutant explains this failure, if any (cheap: only the
        mutants of existing buckets are tried)."""
        if result.status is not Status.Fail or outputs is None:
            return None
        for b in self.buckets.values():
            if b.explained_by and explains(get_mutant(b.explained_by), case, outputs):
                return b
        return None


def bucket_all(failures: Iterable[tuple[Case, CaseResult, Outputs]], mutants: Sequence[Mutant] | None = None
               ) -> list[Bucket]:
    """Bucket a list of failures (each with the device's output buffers); buckets by decreasing count."""
    b = Buckets(mutants)
    for case, result, outputs in failures:
        b.add(case, result, outputs)
    return sorted(b.buckets.values(), key=lambda x: -x.count)


def documented_deviations() -> list[Mutant]:
    """The catalogue's mutants that model a driver's documented deviation (docs/validation.md): those
    declaring the instructions it shows through, as ``--expect-deviation`` needs."""
    return [m for m in catalogue().values() if m.instructions]


def deviation_explaining(backend: Backend, case: Case, result: CaseResult,
                         sv: ShaderVariant | None = None) -> Mutant | None:
    """The documented deviation that explains ``case``'s failure on ``backend``, as a campaign's
    bucket is explained (:meth:`Buckets.explain`: the buffers ``backend`` gives for the case, run
    again alone, pass the judge under the deviation's oracle), or None (``sv``: the case's compiled
    variant, for a backend that needs SPIR-V)."""
    if result.status is not Status.Fail:
        return None
    return Buckets(documented_deviations()).explain(case, result, observe(backend, case, sv)[1])


@dataclass
class RouteBucket:
    """One route finding: cases that pass along one compiler route and fail along another, by the
    failing route and the failure's signature; both verdicts of its smallest case."""

    key: str
    route: str  # the route along which the cases fail
    passing_route: str  # a route along which the same cases pass
    signature: dict[str, Any]
    count: int = 0
    size: int = 0
    case: dict[str, Any] = field(default_factory=dict)
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # route -> CaseResult.to_json()
    names: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "route": self.route, "passing_route": self.passing_route,
                "signature": self.signature, "count": self.count, "size": self.size, "case": self.case,
                "verdicts": self.verdicts, "distinct_cases": len(self.names)}


class RouteBuckets:
    """Route findings bucketed by failing route and signature (docs/spec-decisions.md "compiler-routes")."""

    def __init__(self) -> None:
        self.buckets: dict[str, RouteBucket] = {}

    def add(self, case: Case, failing: tuple[str, CaseResult], passing: tuple[str, CaseResult]) -> RouteBucket:
        """Put one disagreement in its bucket: ``failing`` and ``passing`` are (route, verdict)."""
        route, result = failing
        sig = signature(case, result)
        key = f"route:{route}:" + hashlib.sha256(json.dumps(sig, sort_keys=True).encode()).hexdigest()[:12]
        b = self.buckets.setdefault(key, RouteBucket(key, route, passing[0], sig))
        b.count += 1
        b.names.add(case.name())
        size = case_size(case)
        if not b.case or size < b.size:
            b.size, b.case, b.passing_route = size, case.to_json(), passing[0]
            b.verdicts = {route: result.to_json(), passing[0]: passing[1].to_json()}
        return b
