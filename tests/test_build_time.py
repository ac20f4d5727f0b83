"""A variant's pipeline build is measured and bounded on its own (docs/validation.md, "lavapipe build
time"): its seconds go to the ``build`` stage of the stage table and to each of its cases' results
(``build_s``), and a build past its budget (``--build-budget``) is a BuildTimeout of that variant,
never a dispatch Timeout. The backends with slow builds are planted (tests/build_time_support.py); the
Vulkan backend's own measurement on lavapipe is tests/lavapipe/test_build_time.py."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from build_time_support import QuickBuilds, SlowBuilds, UnboundedSlowBuilds

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.backends.supervise import SupervisedBackend
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.errors import BuildTimeout
from ctsgen.execute.run import drawn, run_cases
from ctsgen.families.cm2_reduce.case import ReduceCase, ReduceVariant
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.pack.read import load_pack
from ctsgen.pack.write import write_pack
from ctsgen.results.results_file import JsonLinesSink
from ctsgen.runner.options import RunOptions
from ctsgen.runner.run import run_pack
from ctsgen.timing import STAGES, Breakdown
from ctsgen.toolchain.variants import compile_variant

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def _cases(n: int) -> list[ReduceCase]:
    source = MatrixType(ComponentType.sint32, Scope.Subgroup, 8, 16, MatrixUse.Accumulator, workgroup_size=8)
    return [ReduceCase(ReduceVariant(ReduceMode.Row, Combine.max, source, source), seed) for seed in range(n)]


def _run(backend, cases: list[ReduceCase], times: Breakdown | None = None):  # noqa: ANN001, ANN202
    sv = compile_variant(cases[0].variant(), cases[0].family, validation="if-installed")
    return sv, run_cases(backend, sv, [drawn(c, c.data()) for c in cases], 10.0, times)


def test_the_build_stage_is_the_part_of_the_pipeline_seconds_the_backend_counts_as_builds() -> None:
    assert STAGES.index("validate") < STAGES.index("build") < STAGES.index("pipeline")
    t = Breakdown()
    t.split_backend(2.0, {"pipeline_s": 1.0, "build_s": 0.5}, {"pipeline_s": 2.5, "build_s": 1.7})
    assert t.seconds["build"] == pytest.approx(1.2) and t.seconds["pipeline"] == pytest.approx(0.3)
    assert t.seconds["dispatch"] == pytest.approx(0.5)
    # never more than the pipeline seconds the caller waited for (builds ahead ran alongside)
    capped = Breakdown()
    capped.split_backend(1.0, {}, {"pipeline_s": 0.2, "build_s": 5.0})
    assert capped.seconds["build"] == pytest.approx(0.2) and capped.seconds["pipeline"] == 0.0
    # a backend that counts no builds: all of it is the pipeline stage, as before
    plain = Breakdown()
    plain.split_backend(1.0, {}, {"pipeline_s": 0.4})
    assert plain.seconds["pipeline"] == pytest.approx(0.4) and "build" not in plain.to_json()
    assert "build" in t.summary(wall_s=2.0)


def test_a_case_result_records_its_variants_build_seconds_only_where_known() -> None:
    assert CaseResult("c", Status.Pass, build_s=1.23456789).to_json()["build_s"] == 1.234568
    assert "build_s" not in CaseResult("c", Status.Pass).to_json()


class _Built(ReferenceBackend):
    """The reference backend that says every variant took 2.5 s to build (in its stats too)."""

    def __init__(self) -> None:
        super().__init__()
        self.stats = {"pipeline_s": 0.0, "build_s": 0.0}

    def run(self, dispatch, timeout_s):  # noqa: ANN001, ANN201 - the Backend signature
        self.stats["pipeline_s"] += 2.5
        self.stats["build_s"] += 2.5
        return super().run(dispatch, timeout_s)

    def build_seconds(self, variant_id: str) -> float | None:
        return 2.5


class _OverBudget(ReferenceBackend):
    def run(self, dispatch, timeout_s):  # noqa: ANN001, ANN201 - the Backend signature
        raise BuildTimeout(dispatch.variant.id, 0.0, 30.0)


def test_every_case_of_a_dispatch_carries_its_variants_build_seconds_and_the_build_stage_gets_them() -> None:
    times = Breakdown()
    _, done = _run(_Built(), _cases(3), times)
    assert [(r.status, r.build_s) for r in done.results] == [(Status.Pass, 2.5)] * 3
    assert times.seconds["build"] == pytest.approx(2.5)
    _, plain = _run(ReferenceBackend(), _cases(2))
    assert [r.build_s for r in plain.results] == [None, None]  # the reference says nothing: no field


def test_a_build_past_its_budget_is_each_cases_build_timeout_with_the_seconds_waited() -> None:
    times = Breakdown()
    sv, done = _run(_OverBudget(), _cases(2), times)
    assert {r.status for r in done.results} == {Status.BuildTimeout}
    assert all(r.build_s == 0.0 and sv.id in r.detail and "more than 30 s, its build budget" in r.detail for r in done.results)
    assert Status.BuildTimeout.is_failure


@pytest.mark.slow
def test_a_supervised_worker_hands_its_build_seconds_to_the_supervisor() -> None:
    backend = SupervisedBackend(QuickBuilds, build_timeout_s=30.0)
    try:
        times = Breakdown()
        _, done = _run(backend, _cases(2), times)
        assert [(r.status, r.build_s) for r in done.results] == [(Status.Pass, QuickBuilds.BUILD_S)] * 2
        assert backend.stats["builds"] == 1 and times.seconds["build"] >= QuickBuilds.BUILD_S
        _, again = _run(backend, _cases(1))  # built once: the same seconds, no second build
        assert again.results[0].build_s == QuickBuilds.BUILD_S and backend.stats["builds"] == 1
    finally:
        backend.close()


@pytest.mark.slow
@pytest.mark.parametrize("planted", [SlowBuilds, UnboundedSlowBuilds], ids=["worker-bound", "supervisor-bound"])
def test_a_build_past_the_budget_is_a_build_timeout_whichever_side_sees_it_first(planted: type) -> None:
    """The worker gives its backend the supervisor's budget (SlowBuilds raises BuildTimeout itself, at
    once); a backend that does not bound its builds is killed at the budget (UnboundedSlowBuilds).
    Both are BuildTimeout, naming the variant; neither is a dispatch Timeout."""
    backend = SupervisedBackend(planted, build_timeout_s=2.0)
    try:
        sv, done = _run(backend, _cases(2))
    finally:
        backend.close()
    assert {r.status for r in done.results} == {Status.BuildTimeout}, done.results[0].detail
    assert sv.id in done.results[0].detail
    waited = done.results[0].build_s
    assert waited is not None and (waited < 2.0 if planted is SlowBuilds else waited >= 2.0)


@pytest.mark.slow
def test_a_variants_build_timeout_is_neither_bisected_nor_built_again_for_its_later_batches(tmp_path: Path) -> None:
    """12 cases of one variant in batches of 4: the first batch's build is stopped at the budget, and
    every case is BuildTimeout with the seconds waited, without a bisection step or a further build
    (each would wait out the budget again). Before, the batch was bisected: 4 more builds of 1 s each."""
    pack = load_pack(write_pack(_cases(12), tmp_path / "pack", header={"seed": 0}))
    backend = SupervisedBackend(UnboundedSlowBuilds, build_timeout_s=1.0)
    out = io.StringIO()
    try:
        summary = run_pack(pack, backend, JsonLinesSink(out), RunOptions(batch_size=4, timeout_base_s=5.0))
        builds_tried = backend.restarts  # a worker is replaced once per build it was killed in, after the first
    finally:
        backend.close()
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == 12 and {r["status"] for r in records} == {"BuildTimeout"}
    assert all(r["build_s"] >= 1.0 for r in records)
    assert summary.bisection_dispatches == 0
    assert builds_tried <= 1  # the pack's prepare (killed at its own bound), then the first batch's build


def _ctsgen(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "ctsgen", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.mark.slow
def test_fuzz_reports_a_build_over_its_budget_as_build_timeout_and_shows_the_build_stage(tmp_path: Path) -> None:
    out = _ctsgen("fuzz", "--backend", "build_time_support:SlowBuilds", "--build-budget", "1", "--family",
                  "cm2-reduce", "--max-examples", "2", "--database", "none", "--shrink-time", "0",
                  "--repro-dir", str(tmp_path / "repros"))
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "BuildTimeout" in text and "took more than 1 s, its build budget" in text, text
    assert "Timeout:" not in text.replace("BuildTimeout:", ""), text
    replay = next(line for line in text.splitlines() if "replay: " in line).split("replay: ", 1)[1]
    assert replay.endswith("--backend build_time_support:SlowBuilds --build-budget 1"), replay  # as judged
    [report] = (tmp_path / "repros").glob("*/REPORT.md")
    assert "--build-budget 1\n" in report.read_text()
    replayed = _ctsgen(*shlex.split(replay)[1:], "--results", str(tmp_path / "replay.jsonl"))
    assert replayed.returncode == 1 and "BuildTimeout" in replayed.stdout, replayed.stdout + replayed.stderr
    quick = _ctsgen("fuzz", "--backend", "build_time_support:QuickBuilds", "--family", "cm2-reduce",
                    "--max-examples", "2", "--database", "none")
    assert quick.returncode == 0, quick.stdout + quick.stderr
    assert any(line.split()[:1] == ["build"] for line in quick.stdout.splitlines()), quick.stdout


@pytest.mark.slow
def test_run_records_each_cases_build_seconds_in_the_results_file(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    made = _ctsgen("generate", "--family", "cm2-reduce", "--count", "4", "--out", str(pack))
    assert made.returncode == 0, made.stderr
    ran = _ctsgen("run", str(pack), "--backend", "build_time_support:QuickBuilds", "--results",
                  str(tmp_path / "r.jsonl"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()[1:]]
    assert records and {r["build_s"] for r in records} == {QuickBuilds.BUILD_S}


@pytest.mark.parametrize("option", ["--build-budget", "--timeout"])
@pytest.mark.parametrize("seconds", ["0", "-1", "soon", "nan", "inf", "1e300", "1000001"])
def test_a_wait_bound_that_is_not_a_number_of_seconds_up_to_11_days_is_a_usage_error(option: str,
                                                                                     seconds: str) -> None:
    """1e300 was a traceback (OverflowError: timestamp too large) once the first wait began."""
    out = _ctsgen("fuzz", option, seconds, "--max-examples", "1", "--database", "none", timeout=60)
    assert out.returncode == 2 and option in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
