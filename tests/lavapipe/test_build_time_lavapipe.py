"""lavapipe compiles a pipeline at its first dispatch (docs/validation.md, "lavapipe build time"): the
repro's C runner times that build at small sizes, and ctsgen's Vulkan backend measures the build there
(its zero-workgroup dispatch), records it in each case's results and bounds it by --build-budget as a
BuildTimeout, never a dispatch Timeout. Small sizes only: each build takes well under a second."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctsgen.backends.supervise import WORKER_LAUNCHER_ENV, SupervisedBackend
from ctsgen.backends.vulkan import VulkanBackend
from ctsgen.core.verdict import Status
from ctsgen.execute.run import drawn, run_cases
from ctsgen.families.cm2_reduce.case import ReduceCase, ReduceVariant
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.toolchain.variants import compile_variant
from lavapipe_support import REPO, Lavapipe

pytestmark = pytest.mark.slow

REPRO = REPO / "docs" / "repros" / "lavapipe-build-time"
#: cold builds: neither Mesa's on-disk shader cache nor ctsgen's pipeline cache
COLD = {"MESA_SHADER_CACHE_DISABLE": "true", "CTSGEN_PIPELINE_CACHE": "0"}
ROW = re.compile(r"^\| (\d+)x(\d+)x(\d+) \| (\d+) \|(?: [0-9.]+ s \|)+ all (\d+) \|$", re.MULTILINE)


@pytest.mark.parametrize("zero_first", [False, True], ids=["first-dispatch", "zero-first"])
def test_the_build_time_repros_runner_builds_and_prints_its_table(lavapipe: Lavapipe, c_compiler: str,
                                                                   tmp_path: Path, zero_first: bool) -> None:
    """README.md's build line and a run at two small sizes: one row each, D all K, exit 0."""
    include = Path(lavapipe.launcher).resolve().parent / "usr" / "include"
    built = subprocess.run([c_compiler, "-O2", "-Wall", "-Werror", "-I", str(include), "-o", str(tmp_path / "run"),
                            str(REPRO / "run.c"), "-ldl"], capture_output=True, text=True, timeout=120, check=False)
    assert built.returncode == 0, built.stderr
    args = [lavapipe.launcher, str(tmp_path / "run"), *(["--zero-first"] if zero_first else []), "muladd.spv",
            "8x8x8", "16x16x16"]
    ran = subprocess.run(args, cwd=REPRO, env={**lavapipe.env, **COLD}, capture_output=True, text=True, timeout=120,
                         check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "MESA_SHADER_CACHE_DISABLE=true" in ran.stdout
    rows = [tuple(map(int, m)) for m in ROW.findall(ran.stdout)]
    assert rows == [(8, 8, 8, 1, 8), (16, 16, 16, 8, 16)], ran.stdout
    assert ("0-workgroup submit+wait" in ran.stdout) == zero_first
    bad = subprocess.run([lavapipe.launcher, str(tmp_path / "run"), "muladd.spv", "12x8x8"], cwd=REPRO,
                         env=lavapipe.env, capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "multiple of 8" in bad.stderr


def _cases(n: int) -> list[ReduceCase]:
    source = MatrixType(ComponentType.sint32, Scope.Subgroup, 8, 16, MatrixUse.Accumulator, workgroup_size=8)
    return [ReduceCase(ReduceVariant(ReduceMode.Row, Combine.max, source, source), seed) for seed in range(n)]


def test_the_vulkan_backend_measures_a_build_once_and_every_case_carries_it(
        lavapipe: Lavapipe, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, lavapipe.launcher)
    for key, value in COLD.items():
        monkeypatch.setenv(key, value)
    cases = _cases(3)
    sv = compile_variant(cases[0].variant(), cases[0].family)
    backend = SupervisedBackend(VulkanBackend, name="vulkan")
    try:
        first = run_cases(backend, sv, [drawn(c, c.data()) for c in cases[:2]], 30.0)
        second = run_cases(backend, sv, [drawn(cases[2], cases[2].data())], 30.0)
        stats = backend.stats
    finally:
        backend.close()
    assert {r.status for r in first.results + second.results} == {Status.Pass}
    built = first.results[0].build_s
    assert built is not None and built > 0
    assert [r.build_s for r in first.results + second.results] == [built] * 3  # the variant's, built once
    assert stats["builds"] == 1 and stats["build_s"] == pytest.approx(built)


@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_a_cold_build_past_the_budget_is_a_build_timeout_of_its_variant(lavapipe: Lavapipe, tmp_path: Path,
                                                                        isolation: str) -> None:
    """The reduce repro's variant, built cold: once within the default budget (its seconds in the
    results), then under a fifth of those seconds: BuildTimeout with the seconds waited, not a Timeout;
    in a supervised worker, and in ctsgen's own process (where the budget was ignored at first)."""
    repro = REPO / "docs" / "repros" / "lavapipe-reduce-row"
    cold = {**lavapipe.env, **COLD}

    def run(*extra: str) -> dict:
        results = tmp_path / "r.jsonl"
        out = subprocess.run([lavapipe.launcher, sys.executable, "-m",
                              "ctsgen", "run", str(repro), "--backend", "vulkan", "--results", str(results), "--isolation", isolation, *extra],
                             cwd=REPO, env=cold, capture_output=True, text=True, timeout=300, check=False)
        assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
        [record] = [json.loads(line) for line in results.read_text().splitlines() if '"status"' in line]
        return record

    within = run()
    assert within["status"] == "Fail" and within["build_s"] > 0  # the known reduce finding, built
    budget = within["build_s"] / 5
    over = run("--build-budget", f"{budget:.6f}")
    assert over["status"] == "BuildTimeout", over
    assert "cm2_reduce.row.sum.sint32.accumulator_16x24" in over["detail"] and "build budget" in over["detail"]
    assert over["build_s"] >= budget
