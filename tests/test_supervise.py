"""Supervised runs: a driver that hangs, crashes, loses the device or exits
inside otherwise passing batches yields exactly the right verdict per case,
the run ends by itself, bisection stays within its bound, and an
interrupted results file resumes cleanly."""

from __future__ import annotations

import functools
import io
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

from ctsgen.backends.fake import FaultyBackend
from ctsgen.device.profile import default_profile
from ctsgen.families import get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.ops.tensor_layout_case import LayoutVariant
from ctsgen.ops.tensor_layout import Operation
from ctsgen.model.tensor import ClampMode
from ctsgen.pack.read import load_pack
from ctsgen.pack.write import write_pack
from ctsgen.backends.supervise import SupervisedBackend
from ctsgen.runner.options import RunOptions
from ctsgen.results.results_file import JsonLinesSink, recover_results
from ctsgen.runner.run import run_pack
from ctsgen.core.verdict import Status
from ctsgen.strategies.sampling import draw_examples

FAST = RunOptions(batch_size=512, timeout_base_s=1.0, timeout_per_case_s=0.0)


def one_variant_pack(root: Path, n: int) -> Path:
    """A pack of ``n`` cases that all share one shader, so one dispatch holds them all."""
    family = get_family("tensor-layout")
    m = next(mt for mt in default_profile().matrix_types() if mt.rows * mt.cols == 256)
    v = LayoutVariant(Operation.load, 2, ClampMode.Repeat, m)
    cases = draw_examples(family.cases_for(v, StrategyOptions()), 3 * n, 11)
    unique = list({c.name(): c for c in cases}.values())[:n]
    assert len(unique) == n
    return write_pack(unique, root / f"pack{n}", header={"seed": 11})


@pytest.fixture(scope="module")
def pack12(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_variant_pack(tmp_path_factory.mktemp("sup"), 12)


def key(case) -> tuple[int, ...]:
    return tuple(int(w) for w in case.params)


def run(pack_dir: Path, backend, options: RunOptions = FAST) -> tuple[dict[str, dict], object]:
    out = io.StringIO()
    summary = run_pack(load_pack(pack_dir), backend, JsonLinesSink(out), options)
    return {json.loads(line)["name"]: json.loads(line) for line in out.getvalue().splitlines()}, summary


@pytest.mark.slow
def test_every_fault_gets_its_own_verdict_and_the_run_ends(pack12: Path) -> None:
    cases = load_pack(pack12).cases
    faults = {key(cases[1]): "hang", key(cases[4]): "crash", key(cases[6]): "device_lost",
              key(cases[8]): "exit", key(cases[10]): "wrong"}
    expected = {cases[1].name: Status.Timeout, cases[4].name: Status.Crash, cases[6].name: Status.DeviceLost,
                cases[8].name: Status.Crash, cases[10].name: Status.Fail}
    backend = SupervisedBackend(functools.partial(FaultyBackend, faults), grace_s=0.5)
    start = time.monotonic()
    try:
        results, summary = run(pack12, backend)
    finally:
        backend.close()
    assert time.monotonic() - start < 90  # bounded: no fault can stall the run
    assert len(results) == len(cases)
    for c in cases:
        assert Status(results[c.name]["status"]) is expected.get(c.name, Status.Pass), results[c.name]
    assert "culprit isolated by bisection" in results[cases[1].name]["detail"]
    assert summary.hang_detect_s and all(1.0 <= s < 1.5 + 0.5 for s in summary.hang_detect_s)
    assert backend.restarts >= 4  # hang, crash, device lost and exit each cost a worker


@pytest.mark.parametrize("n, culprit", [(2, 0), (2, 1), (5, 4), (8, 3), (12, 0), (12, 11), (12, 7)])
def test_bisection_isolates_one_culprit_within_log2_plus_one(tmp_path: Path, n: int, culprit: int) -> None:
    pack_dir = one_variant_pack(tmp_path, n)
    cases = load_pack(pack_dir).cases
    backend = FaultyBackend({key(cases[culprit]): "device_lost"})  # in-process: fast, same bisection
    results, summary = run(pack_dir, backend)
    assert summary.bisection_dispatches <= math.ceil(math.log2(n)) + 1
    assert [c.name for c in cases if results[c.name]["status"] != "Pass"] == [cases[culprit].name]
    assert results[cases[culprit].name]["status"] == "DeviceLost"


def test_two_culprits_in_one_batch_are_both_found(pack12: Path) -> None:
    cases = load_pack(pack12).cases
    backend = FaultyBackend({key(cases[2]): "device_lost", key(cases[9]): "error"})
    results, _ = run(pack12, backend)
    bad = {n: r["status"] for n, r in results.items() if r["status"] != "Pass"}
    assert bad == {cases[2].name: "DeviceLost", cases[9].name: "Crash"}


def test_a_variant_wide_failure_is_not_bisected_case_by_case(pack12: Path) -> None:
    from ctsgen.execute.bisect import MAX_CULPRITS_PER_VARIANT

    cases = load_pack(pack12).cases
    backend = FaultyBackend({key(c): "error" for c in cases})  # e.g. a pipeline the driver cannot build
    results, summary = run(pack12, backend)
    assert all(r["status"] == "Crash" for r in results.values()) and len(results) == len(cases)
    assert summary.dispatches < 4 * len(cases)
    assert sum("culprit isolated" in r["detail"] for r in results.values()) == MAX_CULPRITS_PER_VARIANT


def test_a_backend_that_cannot_start_is_an_error_not_a_hang() -> None:
    from ctsgen.errors import BackendError

    with pytest.raises(BackendError, match="unknown fault"):
        SupervisedBackend(functools.partial(FaultyBackend, {(1,): "melt"}))


def test_an_interrupted_results_file_resumes_to_the_same_verdicts(pack12: Path, tmp_path: Path) -> None:
    cases = load_pack(pack12).cases
    faults = {key(cases[3]): "wrong"}
    full, _ = run(pack12, FaultyBackend(faults))
    lines = [json.dumps(full[c.name], sort_keys=True) for c in cases]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(lines[:5]) + "\n" + lines[5][:17])  # killed while writing line 6
    done = recover_results(path)
    assert set(done) == {c.name for c in cases[:5]}
    assert [json.loads(line) for line in path.read_text().splitlines()] == [full[c.name] for c in cases[:5]]
    with open(path, "a") as fh:
        summary = run_pack(load_pack(pack12), FaultyBackend(faults), JsonLinesSink(fh), FAST, done_before=done)
    final = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(r["name"] for r in final) == sorted(c.name for c in cases)
    assert {r["name"]: r["status"] for r in final} == {n: r["status"] for n, r in full.items()}
    assert summary.resumed == 5 and not summary.ok  # the earlier Fail still counts


def test_a_case_larger_than_the_device_allows_is_not_supported(pack12: Path) -> None:
    from ctsgen.backends.reference import ReferenceBackend, UniversalProfile

    class SmallDevice(ReferenceBackend):
        def __init__(self) -> None:
            super().__init__()
            self._profile = UniversalProfile(name="small", properties={"maxStorageBufferRange": 600})

    results, summary = run(pack12, SmallDevice())
    sizes = {c.name: max(int(np.prod(shape)) * np.dtype(spec.dtype).itemsize
                         for spec, shape in zip(c.buffers, c.shapes()))
             for c in load_pack(pack12).cases}
    for name, r in results.items():
        if sizes[name] > 600:
            assert r["status"] == "NotSupported" and "maxStorageBufferRange 600" in r["detail"]
        else:
            assert r["status"] == "Pass"
    assert any(s > 600 for s in sizes.values()) and any(s <= 600 for s in sizes.values())
    assert summary.dispatches > 1  # batches were split to stay under the limit


@pytest.mark.slow
def test_a_slow_pipeline_build_is_a_build_timeout_naming_the_variant_not_a_timeout(pack12: Path) -> None:
    backend = SupervisedBackend(functools.partial(FaultyBackend, {}, build_s=30.0), build_timeout_s=1.0)
    try:
        results, _ = run(pack12, backend)
    finally:
        backend.close()
    variant = load_pack(pack12).cases[0].variant_id
    assert {r["status"] for r in results.values()} == {"BuildTimeout"}
    detail = next(iter(results.values()))["detail"]
    assert variant in detail and "took more than 1 s" in detail and "no dispatch of its cases was submitted" in detail


@pytest.mark.slow
def test_a_build_within_its_bound_does_not_eat_the_dispatch_bound(pack12: Path) -> None:
    """The dispatch bound (1 s here) starts when the build ends: a 1.5 s build passes."""
    backend = SupervisedBackend(functools.partial(FaultyBackend, {}, build_s=1.5), build_timeout_s=10.0)
    try:
        results, _ = run(pack12, backend)
    finally:
        backend.close()
    assert {r["status"] for r in results.values()} == {"Pass"}


class Interrupted(Exception):
    """Stands for the exception a SIGTERM or Ctrl-C handler raises inside a wait."""


@pytest.mark.slow
def test_a_request_abandoned_mid_wait_does_not_hand_its_answer_to_the_next(pack12: Path) -> None:
    """A campaign worker stopped by SIGTERM while a dispatch was in flight closed its backend and
    read that dispatch's answer as the stats reply (a ValueError).
    After an abandoned request the worker is replaced: the next run gets its own answers, and close
    is clean."""
    import signal

    backend = SupervisedBackend(functools.partial(FaultyBackend, {}, build_s=1.0))
    previous = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(Interrupted()))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(Interrupted):
            run(pack12, backend)
        signal.setitimer(signal.ITIMER_REAL, 0)
        time.sleep(1.5)  # the abandoned dispatch's answer is now waiting in the pipe
        results, _ = run(pack12, backend)
        assert {r["status"] for r in results.values()} == {"Pass"}
        assert backend.restarts == 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        backend.close()


def _drawn_batch(n: int):
    """``n`` tensor-layout cases of one variant, its ShaderVariant (the reference backend needs no
    SPIR-V) and each case's data."""
    from ctsgen.core.shader import ShaderVariant

    family = get_family("tensor-layout")
    m = next(mt for mt in default_profile().matrix_types() if mt.rows * mt.cols == 256)
    v = LayoutVariant(Operation.load, 2, ClampMode.Repeat, m)
    cases = list({c.name(): c for c in draw_examples(family.cases_for(v, StrategyOptions()), 3 * n, 5)}.values())[:n]
    sv = ShaderVariant(id=v.id, spirv=b"", local_size_x=v.local_size_x, buffers=v.buffers(),
                       family=family.name, signature=v.to_json())
    return sv, cases, [c.data() for c in cases]


@pytest.mark.slow
def test_a_pipeline_built_soon_runs_while_the_caller_works_and_is_reported_as_overlapped() -> None:
    """prepare_soon returns at once; a 1.5 s build overlaps the caller's 1.5 s of its own work, so the
    dispatch that follows waits for little of it, and the breakdown counts the build as overlapped,
    not as pipeline time. Without it the dispatch waits for the whole build."""
    from ctsgen.execute.run import drawn_cases, run_cases
    from ctsgen.timing import Breakdown

    sv, cases, datas = _drawn_batch(4)
    backend = SupervisedBackend(functools.partial(FaultyBackend, {}, build_s=1.5), build_timeout_s=10.0)
    try:
        t0 = time.perf_counter()
        backend.prepare_soon([sv])
        assert time.perf_counter() - t0 < 0.5
        time.sleep(1.5)  # the caller's own work: drawing, data and oracle
        times = Breakdown()
        t0 = time.perf_counter()
        results = run_cases(backend, sv, drawn_cases(cases, datas), 5.0, times).results
        waited = time.perf_counter() - t0
        assert {r.status for r in results} == {Status.Pass}
        assert waited < 1.0 and times.overlapped_s > 0.5 and times.seconds.get("pipeline", 0.0) < 1.0
    finally:
        backend.close()
    cold = SupervisedBackend(functools.partial(FaultyBackend, {}, build_s=1.5), build_timeout_s=10.0)
    try:
        t0 = time.perf_counter()
        run_cases(cold, sv, drawn_cases(cases, datas), 5.0).results
        assert time.perf_counter() - t0 >= 1.5
    finally:
        cold.close()


@pytest.mark.slow
def test_a_build_started_soon_that_overruns_its_bound_is_a_build_timeout_of_that_variant() -> None:
    """The build bound, not the dispatch bound, covers a prepare_soon build: the dispatch that waits
    for it raises BuildTimeout naming the variant (a slow driver compile is not a hang)."""
    from ctsgen.execute.run import drawn_cases, run_cases

    sv, cases, datas = _drawn_batch(2)
    backend = SupervisedBackend(functools.partial(FaultyBackend, {}, build_s=30.0), build_timeout_s=1.0)
    try:
        backend.prepare_soon([sv])
        results = run_cases(backend, sv, drawn_cases(cases, datas), 60.0).results
        assert {r.status for r in results} == {Status.BuildTimeout}
        assert sv.id in results[0].detail
        t0 = time.perf_counter()
        backend.prepare_soon([sv])  # a fresh worker builds again; closing does not wait for it
    finally:
        backend.close()
    assert time.perf_counter() - t0 < 10.0


def test_a_build_started_soon_that_fails_is_reported_by_that_variants_dispatch_only() -> None:
    """Nobody waits for a prepare_soon answer: a failed build must not hand its error to the next
    request (another variant's dispatch, which passes); the failing variant's own dispatch builds
    again and gets the error as its verdict."""
    import dataclasses

    from ctsgen.execute.run import drawn_cases, run_cases

    good, cases, datas = _drawn_batch(2)
    bad = dataclasses.replace(good, id=good.id + ".broken")
    backend = SupervisedBackend(functools.partial(FaultyBackend, {}, failing_builds=[bad.id]))
    try:
        backend.prepare_soon([bad])
        assert {r.status for r in run_cases(backend, good, drawn_cases(cases, datas), 5.0).results} == {Status.Pass}
        broken = run_cases(backend, bad, drawn_cases(cases, datas), 5.0).results
        assert all(r.status.is_failure and "injected" in r.detail for r in broken), broken
    finally:
        backend.close()
