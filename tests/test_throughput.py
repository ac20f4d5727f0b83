"""The CPU-side levers of speed: the time breakdown, batches of many cases, parallel
generation that does not change the pack, and the glslang version without slangpy.
Speed is printed here, never asserted (targets live in bench/throughput.py)."""

from __future__ import annotations

import filecmp
import functools
import multiprocessing
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.cli import main
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.pack.workers import worker_pool
from ctsgen.timing import Breakdown
from ctsgen.toolchain import SpirvValidationError, glslang, toolchain_versions, validate_in_process

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))


def test_breakdown_sums_stages_and_splits_backend_time() -> None:
    t = Breakdown()
    t.add("draw", 1.0)
    t.merge({"draw": 0.5, "judge": 0.25})
    t.split_backend(2.0, {"pipeline_s": 1.0, "readback_s": 0.0}, {"pipeline_s": 1.5, "readback_s": 0.25})
    assert t.to_json() == {"draw": 1.5, "pipeline": 0.5, "dispatch": 1.25, "read-back": 0.25, "judge": 0.25}
    summary = t.summary(wall_s=4.0, cases=100)
    assert "draw" in summary and "15.000 ms/case" in summary  # 1.5 s over 100 cases
    with pytest.raises(ValueError, match="unknown stage"):
        with t.stage("drawing"):
            pass


def test_the_timeline_keeps_each_minutes_stages_and_cases_and_workers_add_up_by_minute(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage seconds and cases fall in the interval they were recorded in; a worker's timeline from
    its report adds interval by interval; the summary gives each minute's rate and ms per case and
    compares the last whole minute with the first."""
    import ctsgen.timing as timing

    clock = [1000.0]
    monkeypatch.setattr(timing.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(timing, "ORIGIN", 1000.0)
    t = Breakdown()
    t.add("draw", 3.0)
    t.count(100)
    clock[0] += 61.0  # the second minute: pipeline builds take over
    t.add("pipeline", 8.0)
    t.add("draw", 1.0)
    t.count(50)
    assert t.timeline == [{"draw": 3.0, "cases": 100}, {"pipeline": 8.0, "draw": 1.0, "cases": 50}]
    assert t.to_json() == {"draw": 4.0, "pipeline": 8.0}  # the sums are unchanged
    other = Breakdown()
    other.merge_timeline([{"draw": 1.0, "cases": 20}])
    other.merge(t)
    assert other.timeline == [{"draw": 4.0, "cases": 120}, {"pipeline": 8.0, "draw": 1.0, "cases": 50}]
    lines = other.timeline_summary(wall_s=150.0, workers=2).splitlines()
    assert lines[1].split() == ["minute", "cases", "cases/s", "draw", "pipeline"]
    assert lines[2].split() == ["1", "120", "2", "33.333", "0.000"]  # 4 s over 120 cases: 33.3 ms a case
    assert lines[3].split() == ["2", "50", "1", "20.000", "160.000"]
    assert lines[-1] == "  last whole minute 1 cases/s, 42% of the first's 2"
    timing.start_timeline(clock[0] - 130.0)  # a --workers worker counts from its parent's start
    late = Breakdown()
    late.count(7)
    assert late.timeline == [{}, {}, {"cases": 7}]


def test_a_fuzz_example_checks_many_cases_of_one_shader_and_times_every_stage() -> None:
    report = Fuzzer(ReferenceBackend(), FuzzOptions(max_examples=12, database=None)).run()
    assert report.case is None
    assert report.cases >= 20 * report.examples  # today's loop averaged about 4 cases an example
    assert {"draw", "data+oracle", "compile", "validate", "dispatch", "judge"} <= set(report.times.to_json())


def _tree_identical(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_tree_identical(a / d, b / d) for d in cmp.common_dirs)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["tensor-layout", "decode-vector", "cm2-program"])
def test_generate_makes_the_same_bytes_for_any_number_of_jobs(tmp_path: Path, family: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # decode-vector: no read-out profile exposes it, so its pack is the reference backend's
    profile = ["--profile", "reference"] if family == "decode-vector" else []
    for jobs in (1, 2):
        assert main(["generate", "--family", family, "--count", "60", "--seed", "7",
                     "--out", str(tmp_path / f"jobs{jobs}"), "--jobs", str(jobs), *profile]) == 0
    out = capsys.readouterr().out
    assert "where the time went" in out and "validate" in out
    assert _tree_identical(tmp_path / "jobs1", tmp_path / "jobs2")


def test_generate_refuses_zero_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["generate", "--count", "4", "--out", str(tmp_path / "p"), "--jobs", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "--jobs" in err[0] and "'0'" in err[0], err
    assert not (tmp_path / "p").exists()


def test_toolchain_versions_name_the_library_when_only_the_library_is_carried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = metadata.version

    def without_slangpy(name: str) -> str:
        if name == "slangpy":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", without_slangpy)
    versions = toolchain_versions()
    assert "slangpy" not in versions
    assert versions["glslang_library_version"] == glslang.library_version(glslang.library_path())
    assert glslang.library_version(Path("libslang-glslang-2026.12.so")) == "2026.12"


def test_in_process_validation_rejects_what_spirv_val_rejects() -> None:
    from ctsgen.toolchain import compile_glsl

    spirv = compile_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n")
    validate_in_process(spirv)
    broken = spirv[:20] + (0xFFFF).to_bytes(4, "little") + spirv[24:]  # the first instruction's word
    with pytest.raises(SpirvValidationError):
        validate_in_process(broken)


@pytest.mark.slow
def test_reference_fuzz_against_the_naive_loop_prints_the_ratio() -> None:
    """The fuzzer's rate against the naive loop's, printed (not asserted: speed lives in bench/throughput.py)."""
    from naive_loop import naive_loop

    backend = ReferenceBackend()
    n, wall, failures = naive_loop(backend, "tensor-layout", 3.0)
    report = Fuzzer(backend, FuzzOptions(max_examples=10**9, time_s=3.0, database=None)).run()
    assert n > 0 and failures == 0 and report.cases > 0 and report.case is None
    ratio = report.cases_per_s / (n / wall)
    print(f"\nreference fuzz {report.cases_per_s:.0f} cases/s vs naive loop {n / wall:.0f} cases/s: {ratio:.1f}x")


@pytest.mark.parametrize("results_taken", [0, 1])
def test_leaving_the_worker_pool_early_stops_its_workers_at_once(results_taken: int) -> None:
    """An interrupted ``generate`` must not wait for the work it handed out (CI saw SIGTERM take
    over a minute): before any result (still handing work out) or after one, leaving the block
    ends every worker without running the queued minute-long tasks."""
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with worker_pool(2) as pool:
            results = pool.imap(time.sleep, [0] + [60] * 5)
            for _ in range(results_taken):
                next(results)
            raise KeyboardInterrupt
    assert time.monotonic() - start < 20
    assert multiprocessing.active_children() == []


def test_a_signal_while_the_worker_pool_starts_still_stops_its_workers(monkeypatch) -> None:
    """A stop signal that lands while the pool starts (inside Pool(), as it was: a CI run's interrupted generate printed its line,
    then hung at exit on the half-built pool's workers) is raised once the pool can be
    terminated: the block ends with the interrupt and no worker is left. The workers themselves
    do not keep the parent's held-back signals blocked (terminate's SIGTERM must reach them)."""
    import os
    import signal

    from ctsgen.pack.workers import WorkerPool

    real = WorkerPool._start

    def workers_then_signal(self, processes):
        real(self, processes)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C after the workers started, inside the pool's start
        time.sleep(0.2)  # delivered by now, unless held back

    monkeypatch.setattr(WorkerPool, "_start", workers_then_signal)
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with worker_pool(2) as pool:
            reached.append(pool)
    assert reached == [] and multiprocessing.active_children() == []
    monkeypatch.undo()
    with worker_pool(1) as pool:
        (blocked,) = pool.imap(functools.partial(signal.pthread_sigmask, signal.SIG_BLOCK), [set()])
    assert not ({signal.SIGINT, signal.SIGTERM} & set(blocked))


def test_a_signal_that_raises_while_the_stops_are_being_held_leaves_no_holding_handler(monkeypatch) -> None:
    """A stop whose own handler raises between the two holding handlers' installations (a
    SIGTERM landing right after SIGINT's) ends the block, and both signals get their handlers
    back: a holding handler left installed would hold every later Ctrl-C of the process."""
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    real, installed = signal.signal, []

    def install_then_interrupt(signum, handler):
        previous = real(signum, handler)
        installed.append(signum)
        if len(installed) == 1:
            raise KeyboardInterrupt  # what SIGTERM's handler raised, right after SIGINT was held
        return previous

    monkeypatch.setattr(signal, "signal", install_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        with worker_pool(1):
            pass
    monkeypatch.undo()
    assert {s: signal.getsignal(s) for s in before} == before
    assert multiprocessing.active_children() == []


def test_a_worker_forked_while_stops_are_held_still_ends_on_sigterm() -> None:
    """A worker forked inside Pool() runs the parent's holding handler until its initializer
    replaces it: terminate's SIGTERM in that window must end the worker, not be held (a CI run
    hung in Pool.join on such a worker), and nothing is held for the parent."""
    import os
    import signal

    from ctsgen.signals import holding

    held: list[int] = []
    hold = holding(held)
    pid = os.fork()
    if pid == 0:  # the worker, before its initializer
        try:
            hold(signal.SIGINT, None)  # the parent's to decide: the worker goes on
            hold(signal.SIGTERM, None)
        finally:
            os._exit(0)  # reached only if the SIGTERM was held
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
    hold(signal.SIGTERM, None)  # in the parent it is held
    assert held == [signal.SIGTERM]



#: enter and leave worker_pool ``n`` times at once, as an interrupted ``generate`` does right after start
_POOL_AT_ONCE = """
import sys, time
from ctsgen.pack.workers import worker_pool
for _ in range(int(sys.argv[1])):
    try:
        with worker_pool(2) as pool:
            pool.imap(time.sleep, [0] + [60] * 5)
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
"""


@pytest.mark.slow
def test_a_pool_left_the_instant_it_started_never_hangs() -> None:
    """Left right after its start, 60 times over: a SIGTERM that reached a worker in the instant
    after its fork was dropped, and Pool.terminate then waited for that worker for good (about one
    such hang in 80 on a loaded 2-core machine); the pool is handed out only once its workers have
    started, so every run ends."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-c", _POOL_AT_ONCE, "60"], env=env, timeout=120, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr[-2000:]


#: leave worker_pool on an error ``n`` times while its workers send results larger than a pipe holds
_POOL_LEFT_WHILE_SENDING = """
import sys
from ctsgen.pack.workers import in_order, worker_pool

def big(n):
    return bytes(8 << 20)

for k in range(int(sys.argv[1])):
    try:
        with worker_pool(2) as pool:
            for got, _ in enumerate(in_order(pool, big, range(100))):
                if got == k % 3:
                    raise RuntimeError("injected")
    except RuntimeError:
        pass
"""


@pytest.mark.slow
def test_a_pool_left_while_its_workers_send_results_never_hangs() -> None:
    """Left on an error while the other worker is still sending results, 40 times over: on
    multiprocessing.Pool, terminate could end a worker that held the result queue's lock
    mid-send, and the pool's task thread then waited for that lock for good (3 runs of 48 hung
    here with 8 MiB results, so this fails on that pool in most runs, not all; tests/test_pack.py's
    injected-failure test hung 2 times in 91 under CPU load). Each worker has a pipe of its own now."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-c", _POOL_LEFT_WHILE_SENDING, "40"], env=env, timeout=120,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def _ends_its_process(n: int) -> int:
    import os

    if n == 3:
        os._exit(9)  # a worker killed mid-task (out of memory, a stray SIGKILL)
    return n


def test_a_worker_that_dies_mid_task_is_an_error_not_a_wait() -> None:
    """A worker that ends without its result fails the pool's iteration at once (multiprocessing.Pool
    re-forked the worker and waited for the lost task for good: on it this test hangs until the
    suite's timeout)."""
    from ctsgen.pack.workers import WorkerError

    got = []
    with pytest.raises(WorkerError, match="ended without its result"):
        with worker_pool(2) as pool:
            for value in pool.imap(_ends_its_process, range(8)):
                got.append(value)
    assert got == list(range(len(got)))[:3] and multiprocessing.active_children() == []  # results in order, before it
