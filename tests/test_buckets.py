"""Findings are bucketed as distinct bugs: built from planted mutants, two mutants give two
buckets, one mutant seen in many shapes gives one; failures no mutant explains go by signature."""

from __future__ import annotations

import functools

import pytest

from ctsgen.families import get_family
from ctsgen.families.base import StrategyOptions
from ctsgen.fuzz.buckets import Buckets, bucket_all, case_size, fingerprint, run_with_mutant, signature
from ctsgen.mutants import get_mutant
from ctsgen.runner.verdict import CaseResult, Status
from ctsgen.strategies.sampling import draw_examples


@functools.cache
def tensor_layout_cases() -> tuple:
    return tuple(draw_examples(get_family("tensor-layout").cases(StrategyOptions()), 700, 11))


def planted(mutant: str) -> list:
    """Every drawn case the mutant makes fail with wrong values, with the mutant's verdict."""
    m = get_mutant(mutant)
    out = [(c, run_with_mutant(c, m)) for c in tensor_layout_cases()]
    return [(c, r) for c, r in out if r.status is Status.Fail]


def test_two_planted_mutants_give_two_buckets_whatever_the_shapes() -> None:
    floor, remainder = planted("setdimension-floor"), planted("repeat-c-remainder")
    for found in (floor, remainder):  # many shapes of each bug, not one case repeated
        assert len(found) >= 3 and len({c.variant().id for c, _ in found}) >= 2
    announced = []
    b = Buckets(on_new=announced.append)
    for case, result in [*floor, *remainder]:
        b.add(case, result)
    assert sorted(b.buckets) == ["mutant:repeat-c-remainder", "mutant:setdimension-floor"]
    assert [x.key for x in announced] == ["mutant:setdimension-floor", "mutant:repeat-c-remainder"]
    assert b.buckets["mutant:setdimension-floor"].count == len(floor)
    assert b.buckets["mutant:repeat-c-remainder"].count == len(remainder)
    smallest = min(case_size(c) for c, _ in remainder)
    assert b.buckets["mutant:repeat-c-remainder"].size == smallest
    assert case_size(get_family("tensor-layout").case_from_json(b.buckets["mutant:repeat-c-remainder"].case)) \
        == smallest


def test_one_mutant_in_many_shapes_is_one_bucket_with_its_smallest_repro() -> None:
    found = planted("repeat-c-remainder")
    buckets = bucket_all(reversed(found))
    assert len(buckets) == 1 and buckets[0].explained_by == "repeat-c-remainder"
    assert buckets[0].count == len(found) and len(buckets[0].names) == len({c.name() for c, _ in found})


def test_a_failure_is_explained_only_by_a_mutant_that_reproduces_it_exactly() -> None:
    case, result = planted("setdimension-floor")[0]
    assert Buckets().explain(case, result).name == "setdimension-floor"
    tampered = CaseResult(result.name, result.status, result.detail,
                          [{**m, "actual": {"value": 0, "bits": "0x7777"}} for m in result.mismatches])
    assert fingerprint(tampered.to_json()) != fingerprint(result.to_json())
    assert Buckets().explain(case, tampered) is None  # same case, other wrong bits: another bug
    assert Buckets().add(case, tampered).bucket.key.startswith("sig:")


def test_the_signature_names_family_operation_classes_pattern_and_verdict() -> None:
    case, result = planted("setdimension-floor")[0]
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
        b.add(c, CaseResult(c.name(), status, "the dispatch did not come back"))
    b.add(cases[0], CaseResult(cases[0].name(), Status.Fail, "1 of 64 elements of 'output' differ",
                               [{"buffer": "output", "element": 3, "actual": {"value": 0.0, "bits": "0x0000"}}]))
    kinds = {x.signature["verdict"]: x for x in b.buckets.values()}
    assert len(b.buckets) == 2 and set(kinds) == {status.value, "Fail"}
    assert kinds["Fail"].signature["wrong"] == "output:one:zero"
    assert all(x.explained_by is None for x in b.buckets.values())
    assert kinds[status.value].count == len(cases)
    assert kinds[status.value].size == min(case_size(c) for c in cases)


def test_a_fault_of_one_family_seen_through_another_lands_in_the_same_bucket() -> None:
    """setdimension-floor is a tensor-layout mutant, but decode loads through a tensor layout:
    the deviation seen in a decode case is the same bug."""
    m = get_mutant("setdimension-floor")
    decode = draw_examples(get_family("decode").cases(StrategyOptions()), 300, 2)
    failing = [(c, r) for c in decode for r in [run_with_mutant(c, m)] if r.status is Status.Fail]
    assert failing, "no decode case met the deviation"
    b = Buckets()
    for case, result in [*planted("setdimension-floor")[:3], *failing[:3]]:
        b.add(case, result)
    assert list(b.buckets) == ["mutant:setdimension-floor"]
