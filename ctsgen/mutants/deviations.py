"""Expected driver deviations: what a case must give when a documented deviation is expected.

A documented deviation (docs/validation.md, e.g. ``setdimension-floor``: the H100's
OpTensorLayoutSetDimensionNV divides the default strides by blockSize rounding down,
where SPV_NV_tensor_addressing says ceiling) is modelled by a mutant of the catalogue
(:mod:`ctsgen.mutants`). ``ctsgen fuzz``, ``ctsgen run`` and the pytest plugin take
``--expect-deviation NAME`` (repeatable): a case is then judged against what its
oracle gives with those mutants applied, so a session looks for everything else.

Rule (docs/spec-decisions.md, "expected-deviation"): a deviation changes what a case
must give, never what it is given. The inputs stay the spec case's (a pack's files, a
fuzz batch's drawn data: for a program, the tensor regions the spec's extents give);
the expected buffers are recomputed on those inputs by the family's oracle
(``FamilySpec.expectation``) inside the mutants' ``applied()`` block. A program's
oracle composes the single-operation oracles node by node, so its loads follow the
deviated layout semantics wherever they occur in it. A family that declares no
``expectation`` gets ``case.data()`` recomputed under the deviation, which must then
give the same inputs (else :class:`DeviationError` names the family and the fix).
:func:`data_under` gives a fuzz batch's data, recomputing under the deviations only the
cases whose computation reaches what a deviation replaces.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np

from ctsgen.core.shader import ShaderVariant
from ctsgen.errors import CtsgenError
from ctsgen.core.family import Case, CaseData, Family
from ctsgen.mutants.catalogue import get_mutant
from ctsgen.core.mutant import replaced, resolve
from ctsgen.oracle.addressing import UndefinedResultError
from ctsgen.toolchain.spirv_patch import OPCODES, opcodes


class DeviationError(CtsgenError):
    """An expected deviation cannot be applied to a case."""


def check_deviations(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` as a tuple, each a mutant of the catalogue (else UnknownNameError, one line). A
    command checks its deviations as it starts, and counts their reaches from here (:func:`reached`):
    a deviation an earlier command in the same process reached (``main(argv)`` called again, a test
    suite) is not taken as reached by this one."""
    for name in names:
        get_mutant(name)
    _REACHED.difference_update(names)
    return tuple(names)


#: The expected deviations whose replaced code has run in this process. One that never runs
#: changes no verdict (another family's mutant): ``ctsgen run`` and ``ctsgen fuzz`` say so.
_REACHED: set[str] = set()


def reached() -> frozenset[str]:
    """The expected deviations whose replaced code some oracle computation has run, in this process."""
    return frozenset(_REACHED)


def _noting(name: str, replacements: dict[str, Any]) -> dict[str, Any]:
    """``replacements`` with each function wrapped to note that deviation ``name`` was reached
    (a replaced class is noted as it is applied)."""
    def noted(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            _REACHED.add(name)
            return function(*args, **kwargs)
        return call

    out = {}
    for target, replacement in replacements.items():
        if isinstance(replacement, types.FunctionType):
            out[target] = noted(replacement)
        else:
            _REACHED.add(name)
            out[target] = replacement
    return out


@contextmanager
def applied(deviations: Sequence[str]) -> Iterator[None]:
    """The mutants named ``deviations`` applied for the ``with`` block (the oracle then computes
    what a driver with those documented deviations gives)."""
    with ExitStack() as stack:
        for name in deviations:
            stack.enter_context(replaced(_noting(name, get_mutant(name).factory())))
        yield


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def reaching(deviations: Sequence[str], variant: ShaderVariant) -> tuple[str, ...]:
    """The ``deviations`` the shader ``variant`` can show: those whose instructions
    (``Mutant.instructions``) its module contains, every one. A variant without SPIR-V (a
    backend that needs none) can show every deviation. Callers gate once per variant, then
    judge its cases with :func:`expected_under` or :func:`data_under`: the H100 suite ran
    ``--expect-deviation setdimension-floor`` on every family, and coopvec-elementwise spent
    0.9 ms a case, cm2-gemm 0.85 ms (its layouts set a dimension, never a block size),
    computing an oracle again for a deviation its shaders cannot show."""
    if not variant.spirv:
        return tuple(deviations)
    present = _opcodes(variant.spirv)
    return tuple(d for d in deviations if all(OPCODES[i] in present for i in get_mutant(d).instructions)
                 and _shows_in(get_mutant(d).shows_in, variant.spirv))


@functools.lru_cache(maxsize=256)
def _opcodes(spirv: bytes) -> frozenset[int]:
    return opcodes(spirv)


@functools.lru_cache(maxsize=256)
def _shows_in(condition: Callable[[bytes], bool] | None, spirv: bytes) -> bool:
    """``Mutant.shows_in`` of a module, once a module (None: every module)."""
    return condition is None or condition(spirv)


def expected_under(family: Family, case: Case, data: CaseData, deviations: Sequence[str]) -> CaseData:
    """``data`` (the case's inputs and spec expectation) with the expected buffers the case's
    oracle gives on the same inputs while the mutants named ``deviations`` are applied.

    Buffers ``data`` does not check stay unchecked; a recomputed buffer must have the size
    and type of the spec's. Tolerances are recomputed where the family declares
    ``FamilySpec.tolerance`` (a propagated bound follows the data a deviation moves: an H100
    cm2-program float case kept its spec bound, about 0 where the spec loads a clamp value, and
    failed by one ulp where the deviated load read data), else kept. Without deviations ``data``
    is returned as it is (pass the ones the case's variant can show: :func:`reaching`).

    Where the deviated oracle has no value to expect (UndefinedResultError: the deviation's
    addressing makes two stores race, reads an Undefined-clamped layout out of bounds, or leaves
    the case's memory), the case's buffers are all left unchecked: the spec leaves that result
    undefined, so no output of the deviation is wrong (decisions "store-races",
    "undefined-in-bounds"; docs/spec-decisions.md "expected-deviation").
    """
    if not deviations:
        return data
    try:
        return _expected_under(family, case, data, deviations)
    except UndefinedResultError:
        return CaseData(data.params, data.initial, [None] * len(data.expected), None)


def _expected_under(family: Family, case: Case, data: CaseData, deviations: Sequence[str]) -> CaseData:
    """:func:`expected_under` where the deviated oracle gives a value (else UndefinedResultError)."""
    with applied(deviations):
        if family.expectation is not None:
            expected = family.expectation(case, data.params, [np.array(a, copy=True) for a in data.initial])
            tolerance = data.tolerance if family.tolerance is None or data.tolerance is None else \
                family.tolerance(case, data.params, [np.array(a, copy=True) for a in data.initial])
        else:
            fresh = case.data()
            if not _same(fresh.params, data.params) or len(fresh.initial) != len(data.initial) or \
                    not all(_same(x, y) for x, y in zip(fresh.initial, data.initial)):
                raise DeviationError(
                    f"deviation {'+'.join(deviations)} changes the inputs of {family.name} case {case.name()} -> "
                    f"declare FamilySpec.expectation (the oracle on given inputs) in that family")
            expected, tolerance = fresh.expected, fresh.tolerance
    out: list[np.ndarray | None] = []
    for k, (spec, got) in enumerate(zip(data.expected, expected)):
        if spec is None:
            out.append(None)
            continue
        got = None if got is None else np.asarray(got)
        if got is None or got.size != spec.size or got.dtype != spec.dtype:
            gave = "nothing" if got is None else f"{got.size} x {got.dtype}"
            raise DeviationError(
                f"deviation {'+'.join(deviations)}: {family.name} case {case.name()} buffer {k} expects "
                f"{spec.size} x {spec.dtype}, the deviated oracle gave {gave} -> the family's expectation "
                f"must keep each checked buffer's shape and type")
        out.append(got.reshape(spec.shape))
    return CaseData(data.params, data.initial, out, tolerance)


def data_under(family: Family, cases: Sequence[Case], deviations: Sequence[str]) -> list[CaseData]:
    """``expected_under(family, case, case.data(), deviations)`` of each case (:func:`spec_and_under`)."""
    return spec_and_under(family, cases, deviations)[1]


def moved(spec: CaseData, deviated: CaseData) -> bool:
    """Whether a deviation changed what a case must give (an expected buffer or a tolerance, bit for
    bit), so that the case's verdict can differ between the spec and the deviation."""
    def same(x: np.ndarray | None, y: np.ndarray | None) -> bool:
        return x is y or (x is not None and y is not None and _same(x, y))

    if spec is deviated:
        return False
    tol_a, tol_b = spec.tolerance or [None] * len(spec.expected), deviated.tolerance or [None] * len(spec.expected)
    return not (all(same(x, y) for x, y in zip(spec.expected, deviated.expected))
                and all(same(x, y) for x, y in zip(tol_a, tol_b)))


def spec_and_under(family: Family, cases: Sequence[Case], deviations: Sequence[str]
                   ) -> tuple[list[CaseData], list[CaseData]]:
    """Each case's spec data and its data under ``deviations``: ``expected_under(family, case,
    case.data(), deviations)``, without the second ``case.data()`` where it cannot differ (the
    spec data itself, the same object, where it is not recomputed).

    A family without ``expectation`` has its expectation recomputed by ``case.data()`` itself
    under the mutants. Every case's spec ``data()`` runs with the mutants' targets replaced by
    forwarders that note a call: a case that called none of them would run the same code on the
    same seeded draws with the mutants applied (a mutant changes nothing but its targets), so
    its spec data is its deviated data. Only the cases that called one are recomputed (e.g.
    ``setdimension-floor`` replaces ``default_strides``: cm2-gemm's shaders use tensor
    addressing, so the deviation reaches them (:func:`reaching`), but no cm2-gemm case's data
    calls it). Families with an ``expectation``, and targets that are not plain functions
    (a class), are recomputed as :func:`expected_under` does."""
    if not deviations:
        spec = [c.data() for c in cases]
        return spec, spec
    targets = tuple(t for name in deviations for t in get_mutant(name).targets())
    with _calls_to(targets if family.expectation is None else ()) as calls:
        spec, touched = [], []
        for c in cases:
            before = calls[0] if calls else 0
            spec.append(c.data())
            touched.append(calls is None or calls[0] != before)
    return spec, [expected_under(family, c, d, deviations) if hit else d for c, d, hit in zip(cases, spec, touched)]


@contextmanager
def _calls_to(targets: Sequence[str]) -> Iterator[list[int] | None]:
    """``targets`` replaced by forwarders to what is there now, which count their calls in the
    yielded one-element list. Where ``targets`` is empty, or one of them is not a plain function
    (a class, whose replacement would not be the same type), nothing is replaced and None is
    yielded: calls cannot be told apart, every case counts as calling one."""
    resolved = [resolve(t) for t in targets]
    if not targets or not all(inspect.isfunction(original) for _, _, original in resolved):
        yield None
        return
    calls = [0]

    def forwarder(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            return original(*args, **kwargs)
        return call

    with replaced({t: forwarder(original) for t, (_, _, original) in zip(targets, resolved)}):
        yield calls
