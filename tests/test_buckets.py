"""Findings are bucketed as distinct bugs: built from planted mutants, two mutants give two
buckets, one mutant seen in many shapes gives one; failures no mutant explains go by signature."""

from __future__ import annotations

import functools

import pytest

from ctsgen.families import get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.mutants.backend import MutantBackend
from ctsgen.fuzz.buckets import Buckets, bucket_all, case_size, fingerprint, observe, run_with_mutant, signature
from ctsgen.mutants.catalogue import get_mutant
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.strategies.sampling import draw_examples


@functools.cache
def tensor_layout_cases() -> tuple:
    return tuple(draw_examples(get_family("tensor-layout").cases(StrategyOptions()), 700, 11))


def planted(mutant: str, cases: tuple | None = None) -> list:
    """Every drawn case the mutant makes fail with wrong values, with the mutant's verdict and outputs."""
    device = MutantBackend(mutant)
    out = [(c, *observe(device, c)) for c in (tensor_layout_cases() if cases is None else cases)]
    return [(c, r, o) for c, r, o in out if r.status is Status.Fail]


@pytest.mark.slow
def test_two_planted_mutants_give_two_buckets_whatever_the_shapes() -> None:
    floor, remainder = planted("setdimension-floor"), planted("repeat-c-remainder")
    for found in (floor, remainder):  # many shapes of each bug, not one case repeated
        assert len(found) >= 3 and len({c.variant().id for c, _, _ in found}) >= 2
    announced = []
    b = Buckets(on_new=announced.append)
    for case, result, outputs in [*floor, *remainder]:
        b.add(case, result, outputs)
    assert sorted(b.buckets) == ["mutant:repeat-c-remainder", "mutant:setdimension-floor"]
    assert [x.key for x in announced] == ["mutant:setdimension-floor", "mutant:repeat-c-remainder"]
    assert b.buckets["mutant:setdimension-floor"].count == len(floor)
    assert b.buckets["mutant:repeat-c-remainder"].count == len(remainder)
    smallest = min(case_size(c) for c, _, _ in remainder)
    assert b.buckets["mutant:repeat-c-remainder"].size == smallest
    assert case_size(get_family("tensor-layout").case_from_json(b.buckets["mutant:repeat-c-remainder"].case)) \
        == smallest


@pytest.mark.slow
def test_one_mutant_in_many_shapes_is_one_bucket_with_its_smallest_repro() -> None:
    found = planted("repeat-c-remainder")
    buckets = bucket_all(reversed(found))
    assert len(buckets) == 1 and buckets[0].explained_by == "repeat-c-remainder"
    assert buckets[0].count == len(found) and len(buckets[0].names) == len({c.name() for c, _, _ in found})


@pytest.mark.slow
def test_a_failure_is_explained_only_by_a_mutant_whose_oracle_passes_its_outputs() -> None:
    case, result, outputs = planted("setdimension-floor")[0]
    assert Buckets().explain(case, result, outputs).name == "setdimension-floor"
    names = [b.name for b in case.variant().buffers()]
    k = names.index(result.mismatches[0]["buffer"])
    tampered = [o.copy() for o in outputs]
    tampered[k].reshape(-1).view(f"uint{8 * tampered[k].dtype.itemsize}")[result.mismatches[0]["element"]] ^= 0x77
    assert Buckets().explain(case, result, tampered) is None  # same case, other wrong bits: another bug
    assert Buckets().add(case, result, tampered).bucket.key.startswith("sig:")
    assert Buckets().explain(case, result, None) is None  # no buffers came back: nothing to explain


@pytest.mark.slow
def test_the_signature_names_family_operation_classes_pattern_and_verdict() -> None:
    case, result, _ = planted("setdimension-floor")[0]
    sig = signature(case, result)
    assert sig["family"] == "tensor-layout" and sig["operation"] == "load" and sig["verdict"] == "Fail"
    assert sig["classes"]["blockSize"] == "set" and "stride" not in sig["classes"]  # default strides
    assert sig["wrong"].startswith("output:") and sig["wrong"].split(":")[2] in ("moved", "other", "zero")
    assert "seed" not in sig["classes"] and "Dim" not in sig["classes"]  # shapes and noise are not classes


@pytest.mark.parametrize("status", [Status.Timeout, Status.DeviceLost, Status.Crash])
def test_hangs_and_crashes_go_by_signature_one_bucket_per_kind(status: Status) -> None:
    """Cases of one operation and one set of parameter classes, of different shapes, all hanging:
    one bucket; a wrong value among them is another bug."""
    groups: dict[str, list] = {}
    for c in tensor_layout_cases():
        sig = signature(c, CaseResult(c.name(), status))
        groups.setdefault(repr(sorted(sig["classes"].items())), []).append(c)
    cases = max(groups.values(), key=len)[:8]
    assert len({c.layoutDimension for c in cases}) >= 2  # different shapes
    b = Buckets()
    for c in cases:
        b.add(c, CaseResult(c.name(), status, "the dispatch did not come back"), None)
    b.add(cases[0], CaseResult(cases[0].name(), Status.Fail, "1 of 64 elements of 'output' differ",
                               [{"buffer": "output", "element": 3, "actual": {"value": 0.0, "bits": "0x0000"}}]),
          None)
    kinds = {x.signature["verdict"]: x for x in b.buckets.values()}
    assert len(b.buckets) == 2 and set(kinds) == {status.value, "Fail"}
    assert kinds["Fail"].signature["wrong"] == "output:one:zero"
    assert all(x.explained_by is None for x in b.buckets.values())
    assert kinds[status.value].count == len(cases)
    assert kinds[status.value].size == min(case_size(c) for c in cases)


@pytest.mark.slow
def test_a_fault_of_one_family_seen_through_another_lands_in_the_same_bucket() -> None:
    """setdimension-floor is a tensor-layout mutant, but decode loads through a tensor layout:
    the deviation seen in a decode case is the same bug."""
    decode = tuple(draw_examples(get_family("decode").cases(StrategyOptions()), 300, 2))
    failing = planted("setdimension-floor", decode)
    assert failing, "no decode case met the deviation"
    b = Buckets()
    for case, result, outputs in [*planted("setdimension-floor")[:3], *failing[:3]]:
        b.add(case, result, outputs)
    assert list(b.buckets) == ["mutant:setdimension-floor"]


@pytest.mark.slow
def test_the_deviation_seen_through_a_device_within_the_spec_is_one_bucket() -> None:
    """The planted device applies setdimension-floor and gives what a device may give within the spec:
    float arithmetic rounded toward zero (the other faithful neighbour, so a float-domain program's
    later values move within their bounds) and float zeros of the other sign where the judge ignores
    it. Every failure of cm2-program (both domains), tensor-layout and decode on it is the deviation's
    bucket, though most are not the mutant's bits (the H100 campaign's sig: buckets)."""
    from tests.planted_device import PlantedDevice

    device = PlantedDevice()
    program = tuple(draw_examples(get_family("cm2-program").cases(StrategyOptions()), 300, 5))
    decode = tuple(draw_examples(get_family("decode").cases(StrategyOptions()), 150, 2))
    failing = planted_on(device, (*program, *tensor_layout_cases()[:200], *decode))
    floor = get_mutant("setdimension-floor")
    domains = {c.domain for c, _, _ in failing if c.family == "cm2-program"}
    inexact = [c for c, r, _ in failing if fingerprint(r.to_json()) != fingerprint(run_with_mutant(c, floor).to_json())]
    assert domains == {"exact", "float"} and {c.family for c in inexact} >= {"cm2-program"}, domains
    assert any(c.domain == "float" for c in inexact) and any(c.domain == "exact" for c in inexact)
    buckets = bucket_all(failing)
    assert [b.key for b in buckets] == ["mutant:setdimension-floor"]
    assert buckets[0].count == len(failing)


def planted_on(device, cases: tuple) -> list:
    out = [(c, *observe(device, c)) for c in cases]
    return [(c, r, o) for c, r, o in out if r.status is Status.Fail]


@pytest.mark.slow
def test_two_distinct_mutants_on_the_planted_device_still_give_two_buckets() -> None:
    from tests.planted_device import PlantedDevice

    program = tuple(draw_examples(get_family("cm2-program").cases(StrategyOptions()), 300, 5))
    failing = [*planted_on(PlantedDevice(), program)[:6], *planted("repeat-c-remainder")[:6]]
    assert sorted(b.key for b in bucket_all(failing)) == ["mutant:repeat-c-remainder", "mutant:setdimension-floor"]


@pytest.mark.slow
def test_one_op_failing_with_and_without_edge_inputs_or_offsets_is_one_bucket() -> None:
    """The H100's Log finding split into signature buckets on whether a case set ``edges`` and on
    whether its ``loadOffset`` and ``storeOffset`` were zero: which inputs were drawn and where they
    sit are shapes, not classes of the bug (docs/campaign.md, "Buckets")."""
    import dataclasses

    import numpy as np

    from ctsgen.backends.reference import ReferenceBackend
    from ctsgen.execute.run import drawn as case_input, judged

    drawn = draw_examples(get_family("coopvec-elementwise").cases(StrategyOptions()), 400, 3)
    log = next(c for c in drawn if c.variant().op.value == "log" and c.loadOffset > 0 and c.storeOffset > 0)
    shapes = [dict(edges=False), dict(edges=True), dict(loadOffset=0), dict(storeOffset=0),
              dict(loadOffset=0, storeOffset=0)]
    failing = []
    for case in (dataclasses.replace(log, **shape) for shape in shapes):
        _, outputs = observe(ReferenceBackend(), case)
        data = case.data()
        k = [i for i, e in enumerate(data.expected) if e is not None][-1]
        wrong = [o.copy() for o in outputs]
        wrong[k].reshape(-1)[0] = np.float32(-7.0)  # a log far outside its bound, one element
        result = judged(case_input(case, data), [b.name for b in case.variant().buffers()], wrong)
        assert result.status is Status.Fail, result
        failing.append((case, result, wrong))
    buckets = bucket_all(failing)
    assert len(buckets) == 1 and buckets[0].key.startswith("sig:") and buckets[0].count == len(shapes)
    assert "edges" not in buckets[0].signature["classes"]
    assert buckets[0].signature["classes"]["loadOffset"] == "set"
