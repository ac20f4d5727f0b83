"""``fuzz --time T`` ends on time: the example in flight at the deadline is abandoned OVERTIME_S
after it (the 420 s device runs ended at 481 s and 512 s, a worker's last pipeline build running
on), and the backend's close is bounded as a campaign worker's is."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import ctsgen.fuzz.deadline as deadline_module
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.fuzz.deadline import CLOSE_BY_S, CLOSE_RESERVE_S, OVERTIME_S, example_bound, examples_deadline
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions

ROOT = Path(__file__).resolve().parent.parent


class SlowDispatch(ReferenceBackend):
    """The reference backend whose every dispatch after the first ``fast`` takes ``slow_s`` seconds."""

    def __init__(self, fast: int, slow_s: float) -> None:
        super().__init__()
        self.fast, self.slow_s, self.dispatches = fast, slow_s, 0

    def run(self, dispatch, timeout_s):  # noqa: ANN001, ANN201 - the Backend signature
        self.dispatches += 1
        if self.dispatches > self.fast:
            time.sleep(self.slow_s)
        return super().run(dispatch, timeout_s)


def test_the_alarm_is_armed_overtime_after_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    armed: list[tuple[float | None, Callable[[], None]]] = []

    @contextmanager
    def recording(at: float | None, act: Callable[[], None]) -> Iterator[None]:
        armed.append((at, act))
        yield

    monkeypatch.setattr(deadline_module, "alarm_at", recording)

    def stop() -> None:
        pass

    with example_bound(100.0, stop):
        pass
    with example_bound(None, stop):
        pass
    assert armed == [(100.0 + OVERTIME_S, stop), (None, stop)]


@pytest.mark.slow
def test_an_example_in_flight_at_the_deadline_is_abandoned_and_the_run_reports(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A dispatch that would take a minute, begun before the deadline: the run returns its report
    OVERTIME_S after the deadline (shortened here), with the examples finished before it."""
    monkeypatch.setattr(deadline_module, "OVERTIME_S", 0.3)
    backend = SlowDispatch(fast=1, slow_s=60.0)
    fuzzer = Fuzzer(backend, FuzzOptions(families=("cm2-reduce",), time_s=30.0, max_examples=10**6, database=None))

    def stop() -> None:
        fuzzer.request_stop()
        raise KeyboardInterrupt

    began = time.monotonic()
    with example_bound(began + 3.0, stop):
        report = fuzzer.run()
    assert backend.dispatches == 2  # the slow one began, and no example began after it was abandoned
    assert time.monotonic() - began < 10.0  # not the minute the dispatch would take
    assert report.examples == 2 and report.wall_s < 10.0


@pytest.mark.slow
def test_fuzz_time_with_workers_ends_within_5_s_of_its_budget_whatever_the_last_example_does(
        tmp_path: Path) -> None:
    """Every dispatch takes 30 s (a pipeline build in flight at the deadline) and the backend's close
    a minute: the workers stop drawing examples before the end (their backend builds pipelines),
    abandon the example in flight OVERTIME_S past that, and their supervised backend is stopped
    CLOSE_BY_S past it, so the session ends within 5 s of ``--time``, counted from before Python
    started (its start-up is inside the budget)."""
    budget = 10.0
    env = {**os.environ, "CTSGEN_TEST_DISPATCH_S": "30", "CTSGEN_TEST_CLOSE_S": "60",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ctsgen", "fuzz", "--workers", "2", "--family", "cm2-reduce",
                           "--backend", "tests.planted_device:SlowToEnd", "--time", str(budget),
                           "--database", "none", "--repro-dir", str(tmp_path / "repros")],
                          capture_output=True, text=True, timeout=150, env=env, cwd=ROOT)
    wall = time.monotonic() - began
    assert "past the deadline" in done.stdout and "2 workers together" in done.stdout, done.stdout + done.stderr
    assert wall <= budget + 5.0, (wall, done.stdout, done.stderr)


def test_a_budget_counts_from_the_process_start_python_start_up_included() -> None:
    """process_started() is this process's start, not when ctsgen was imported: a child that sleeps
    before importing ctsgen sees that sleep inside its age."""
    probe = ("import time; time.sleep(0.5); from ctsgen.fuzz.deadline import process_started; "
             "print(time.time() - process_started())")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    age = float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                               env=env, timeout=60).stdout)
    assert 0.5 <= age < 30.0, age


def test_only_a_backend_that_builds_pipelines_stops_its_examples_before_the_end() -> None:
    """The close of a backend that builds pipelines publishes them, so its examples stop
    CLOSE_RESERVE_S before the end (a twentieth of a short budget); the reference fuzzes to the end."""
    assert examples_deadline(100.0, 480.0, builds_pipelines=False) == 100.0
    assert examples_deadline(100.0, 480.0, builds_pipelines=True) == 100.0 - CLOSE_RESERVE_S
    assert examples_deadline(100.0, 10.0, builds_pipelines=True) == 99.5
    assert CLOSE_RESERVE_S < CLOSE_BY_S  # the close's bound lands past the end, by their difference


def test_a_budget_spent_before_the_first_example_is_an_error_not_a_pass(capsys: pytest.CaptureFixture[str]) -> None:
    """--time counts from the command's start: a budget shorter than opening the backend judges
    nothing, which is exit 2 with what to do, never "no failure found" and exit 0."""
    from ctsgen.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["fuzz", "--time", "1e-9", "--database", "none"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "nothing was judged" in err[0] and "--time" in err[0]
