"""The Vulkan tier on lavapipe: packs pass, a short fuzz of every family runs or is skipped naming
what the device lacks, the supervised worker's Timeout and Crash verdicts on a real device, the
pipeline cache, and the pytest plugin's Vulkan backend (conftest.py: how lavapipe is found)."""

from __future__ import annotations

import functools
import io
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from ctsgen.core.shader import BufferSpec, Dispatch, ShaderVariant
from ctsgen.errors import DispatchTimeout
from ctsgen.backends.supervise import WORKER_LAUNCHER_ENV, SupervisedBackend
from ctsgen.backends.vulkan import VulkanBackend
from ctsgen.cli import main
from ctsgen.device.profile import load_profile
from ctsgen.families import families, get_family
from ctsgen.families.gating import families_it_runs
from ctsgen.families.cm2_reduce.case import ReduceCase, ReduceVariant
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.pack.read import load_pack
from ctsgen.pack.write import write_pack
from ctsgen.runner.options import RunOptions
from ctsgen.results.results_file import JsonLinesSink
from ctsgen.runner.run import run_pack
from ctsgen.core.verdict import Status
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl
from lavapipe_support import DEVIATION, REPO, Lavapipe, PlantedVulkan
from repro_docs import Repro, lavapipe_repros

#: every test drives lavapipe in supervised worker processes or ctsgen subprocesses
pytestmark = pytest.mark.slow

#: Families whose packs are judged under lavapipe's documented reduce deviation: a program's Row or Column
#: reduction of its 16 x 16 matrices meets the reduce finding (docs/validation.md, "lavapipe").
UNDER_DEVIATION = ("cm2-program",)


#: lavapipe's fixture profile, captured from the live driver with `ctsgen profile`.
LAVAPIPE_PROFILE = REPO / "ctsgen" / "device" / "profiles" / "mesa-lavapipe-26.2.6.txt"

#: Families lavapipe (Mesa 26.2.6) runs, by each family's ``needs`` against its fixture: packs of them
#: must pass (a new family the fixture admits is run here with no edit).
RUNS = tuple(families_it_runs(load_profile(LAVAPIPE_PROFILE)))


def test_lavapipe_runs_a_share_of_the_families() -> None:
    """At least six families (those that need no tensor addressing, Mesa has none: cm2-gemm and
    cm2-program through KHR loads and stores, coopmat-khr), and no family that needs it."""
    assert len(RUNS) >= 6
    assert not [f for f in RUNS if "cooperativeMatrixTensorAddressing" in get_family(f).needs.features]


def _statuses(results: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in results.read_text().splitlines():
        status = json.loads(line).get("status")
        if status:
            counts[status] = counts.get(status, 0) + 1
    return counts


@pytest.mark.parametrize("family", RUNS)
def test_a_pack_passes_with_lavapipes_shipped_expectations(family: str, lavapipe: Lavapipe,
                                                              tmp_path: Path) -> None:
    pack = tmp_path / family
    assert main(["generate", "--family", family, "--count", "24", "--seed", "25", "--out", str(pack),
                 "--profile", str(LAVAPIPE_PROFILE)]) == 0
    results = tmp_path / "results.jsonl"
    deviation = ["--expect-deviation", DEVIATION] if family in UNDER_DEVIATION else []
    run = lavapipe.ctsgen("run", str(pack), "--backend", "vulkan", "--results", str(results), "--timeout", "60",
                          "--baseline", str(REPO / "expectations" / "lavapipe-26.csv"), *deviation)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "llvmpipe" in run.stdout
    counts = _statuses(results)
    assert counts.get("Pass", 0) >= 1 and set(counts) <= {"Pass", "NotSupported", "Fail"}, counts
    if counts.get("Fail"):  # only the reduce finding, which the baseline expects
        assert family == "cm2-reduce" and f"ExpectedFail: {counts['Fail']}" in run.stdout, run.stdout[-2000:]


@pytest.mark.parametrize("family", families())
def test_a_short_fuzz_runs_or_skips_naming_what_the_device_lacks(family: str, lavapipe: Lavapipe) -> None:
    # --timeout 60: lavapipe compiles a pipeline at its first dispatch, which for a long cm2-program takes
    # longer than the default 10 s on a loaded 2-core machine (docs/validation.md, "The khr route: cm2-gemm
    # and cm2-program on Mesa")
    run = lavapipe.ctsgen("fuzz", "--backend", "vulkan", "--family", family, "--max-examples", "6",
                          "--database", "none", "--seed", "2026", "--shrink-time", "5", "--timeout", "60",
                          "--expect-deviation", DEVIATION)
    out = run.stdout + run.stderr
    ran = run.returncode == 0 and "no failure found" in out
    skipped = run.returncode == 2 and re.search(
        rf"runs none of the families asked for \({re.escape(family)}: [^)]*(VK_\w+|cooperative\w+)", out)
    assert ran or skipped, out[-3000:]


def test_the_reduce_finding_is_found_and_explained_by_its_deviation(lavapipe: Lavapipe, tmp_path: Path) -> None:
    args = ["fuzz", "--backend", "vulkan", "--family", "cm2-reduce", "--max-examples", "30", "--database", "none",
            "--seed", "1", "--shrink-time", "5", "--repro-dir", str(tmp_path)]
    found = lavapipe.ctsgen(*args)
    assert found.returncode == 1, found.stdout[-2000:] + found.stderr[-2000:]
    assert re.search(r"found: Fail in cm2_reduce\.(row|column)\.", found.stdout + found.stderr)
    explained = lavapipe.ctsgen(*args, "--expect-deviation", DEVIATION)
    assert explained.returncode == 0 and "no failure found" in explained.stdout, explained.stdout[-2000:]


@pytest.mark.parametrize("repro", lavapipe_repros(), ids=[r.path.name for r in lavapipe_repros()])
def test_a_shipped_lavapipe_repro_replays_as_its_documented_failure(repro: Repro, lavapipe: Lavapipe,
                                                                     tmp_path: Path) -> None:
    """docs/repros/*'s README promise, as written: `PREFIX/run python -m ctsgen run REPRO --backend vulkan`
    fails with REPORT.md's observed detail, and its deviation explains it."""
    results = tmp_path / "r.jsonl"
    out = lavapipe.ctsgen("run", str(repro.path), "--backend", "vulkan", "--results", str(results))
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    failed = [json.loads(line) for line in results.read_text().splitlines() if '"status"' in line]
    assert [(r["status"], r.get("detail")) for r in failed] == [("Fail", repro.detail)], failed
    assert f"  {repro.detail}" in out.stdout
    explained = lavapipe.ctsgen("run", str(repro.path), "--backend", "vulkan", "--expect-deviation", DEVIATION,
                                "--results", str(tmp_path / "e.jsonl"))
    assert explained.returncode == 0, explained.stdout[-2000:]


def test_the_reduce_repros_c_runner_builds_with_the_prefixs_headers_and_prints_its_log(
        lavapipe: Lavapipe, tmp_path: Path) -> None:
    """The README's build line, on this machine's C compiler and glibc: the runner links no Vulkan
    library, so only the prefix's headers (.ci/lavapipe.sh unpacks libvulkan-dev) are needed."""
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (cc) on PATH: the runner's build line needs one")
    repro = REPO / "docs" / "repros" / "lavapipe-reduce-row"
    include = Path(lavapipe.launcher).resolve().parent / "usr" / "include"
    assert (include / "vulkan" / "vulkan_core.h").exists(), \
        f"{include} has no Vulkan headers -> run .ci/lavapipe.sh PREFIX again (it unpacks libvulkan-dev)"
    built = subprocess.run([compiler, "-O2", "-I", str(include), "-o", str(tmp_path / "run"), str(repro / "run.c"),
                            "-ldl"], capture_output=True, text=True, timeout=120, check=False)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([lavapipe.launcher, str(tmp_path / "run"), "reduce.spv"], cwd=repro, env=lavapipe.env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 1 and ran.stdout == (repro / "run.log").read_text(), ran.stdout + ran.stderr


def _reduce_cases(n: int) -> list[ReduceCase]:
    """Row max reductions of an 8x16 subgroup accumulator, in lavapipe's subgroup of 8 invocations."""
    source = MatrixType(ComponentType.sint32, Scope.Subgroup, 8, 16, MatrixUse.Accumulator, workgroup_size=8)
    return [ReduceCase(ReduceVariant(ReduceMode.Row, Combine.max, source, source), seed) for seed in range(n)]


def _worker_through(lavapipe: Lavapipe, monkeypatch: pytest.MonkeyPatch) -> None:
    """A supervised worker started from here runs through lavapipe's launcher, with the session's caches."""
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, lavapipe.launcher)
    for key in ("CTSGEN_CACHE_DIR", "MESA_SHADER_CACHE_DIR"):
        monkeypatch.setenv(key, lavapipe.env[key])


def test_a_hang_and_a_crash_on_a_real_device_are_the_culprits_verdicts(
        lavapipe: Lavapipe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process supervises; the worker, started through lavapipe's launcher, holds the device."""
    cases = _reduce_cases(6)
    pack = load_pack(write_pack(cases, tmp_path / "pack", header={"seed": 0}))
    faults = {cases[1].data().initial[0].tobytes().hex(): "hang", cases[4].data().initial[0].tobytes().hex(): "crash"}
    _worker_through(lavapipe, monkeypatch)
    backend = SupervisedBackend(functools.partial(PlantedVulkan, faults), name="vulkan", grace_s=0.5)
    out = io.StringIO()
    try:
        assert "llvmpipe" in backend.profile().name
        run_pack(pack, backend, JsonLinesSink(out), RunOptions(batch_size=64, timeout_base_s=2.0,
                                                               timeout_per_case_s=0.0))
    finally:
        backend.close()
    results = {r["name"]: r["status"] for r in map(json.loads, out.getvalue().splitlines()) if "status" in r}
    assert results == {c.name(): {1: "Timeout", 4: "Crash"}.get(i, "Pass") for i, c in enumerate(cases)}
    assert backend.restarts >= 2


#: A shader that never ends on any device: x[0] stays 0 and every iteration stores (a side effect).
NEVER_ENDS = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Params { uint params[]; };
layout(set = 0, binding = 1) coherent buffer Data { uint x[]; };
void main() { uint i = 0u; while (x[0] == 0u) { i++; x[1] = i; } }
"""


def test_a_shader_that_never_ends_is_a_timeout_and_the_next_case_runs_on_a_new_worker(
        lavapipe: Lavapipe, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's own fence wait ends the dispatch (the worker reports the timeout), and the
    supervisor replaces the worker whose device is busy for ever."""
    _worker_through(lavapipe, monkeypatch)
    variant = ShaderVariant("never-ends", compile_glsl(NEVER_ENDS, "never_ends.comp"), 1,
                            (BufferSpec(1, "data", "uint32"),))
    backend = SupervisedBackend(VulkanBackend, name="vulkan", grace_s=5.0)
    try:
        start = time.monotonic()
        with pytest.raises(DispatchTimeout, match="did not finish within 2 s"):
            backend.run(Dispatch(variant, 1, [np.zeros(1, np.uint32), np.zeros(2, np.uint32)]), 2.0)
        assert time.monotonic() - start < 7.0  # the worker's own bound, not the supervisor's grace
        assert check_case(backend, _reduce_cases(1)[0]).status is Status.Pass
        assert backend.restarts == 1
    finally:
        backend.close()


def test_the_pipeline_cache_is_published_where_the_driver_gives_a_whole_header(lavapipe: Lavapipe,
                                                                              tmp_path: Path) -> None:
    """lavapipe (Mesa 26.2.6) says its pipeline cache data is 32 bytes, then writes 20: no whole
    VkPipelineCacheHeaderVersionOne, so nothing is published and every run builds its own pipelines
    (docs/validation.md, "lavapipe: the pipeline cache"). A lavapipe that writes a whole header gets
    its blob written to a part at close and folded into the next run's cache."""
    pack = write_pack(_reduce_cases(3), tmp_path / "pack", header={"seed": 0})
    stats = []
    for i in range(2):
        run = lavapipe.run(["-m", "ctsgen", "run", str(pack), "--backend", "vulkan", "--results",
                            str(tmp_path / f"r{i}.jsonl")], env={"CTSGEN_CACHE_DIR": str(tmp_path / "spirv")})
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        stats.append(dict(re.findall(r"(pipeline_cache_\w+) (\d+)", run.stdout)))
    if list((tmp_path / "pipelines").glob("*.bin")):
        assert stats[1]["pipeline_cache_parts_folded"] == "1"
    else:
        assert "pipeline_cache_saved_bytes" not in stats[0] and stats[1]["pipeline_cache_loaded_bytes"] == "0"
        assert stats[1]["pipeline_cache_parts_folded"] == "0"
        assert not list((tmp_path / "pipelines").glob("*.bin"))


#: ``ctsgen ARGS`` through lavapipe's launcher with the pipeline cache's header check relaxed (lavapipe's own
#: data has a short header, which the check refuses), so the part path runs on a real driver (in this
#: process: ``--isolation none``, as a worker process would not have the check relaxed).
RELAXED_HEADER_CHECK = """
import sys
import ctsgen.backends.pipeline_cache as pipeline_cache
pipeline_cache.header_mismatch = lambda blob, identity: None if blob else "empty"
from ctsgen.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_closing_run_writes_a_part_that_the_next_run_folds(lavapipe: Lavapipe, tmp_path: Path) -> None:
    """vulkan.py's part path on a driver: each run's close writes its cache's data to a part, and the next
    run merges it into its cache (vkMergePipelineCaches through a cache created from it), then leaves
    one part, its own: the part it folded is gone."""
    pack = write_pack(_reduce_cases(2), tmp_path / "pack", header={"seed": 0})
    parts, folded = [], []
    for i in range(2):
        run = lavapipe.run(["-c", RELAXED_HEADER_CHECK, "run", str(pack), "--backend", "vulkan", "--isolation",
                            "none", "--results", str(tmp_path / f"r{i}.jsonl")],
                           env={"CTSGEN_CACHE_DIR": str(tmp_path / "spirv")})
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        folded.append(re.search(r"pipeline_cache_parts_folded (\d+)", run.stdout).group(1))
        parts.append(sorted(p.name for p in (tmp_path / "pipelines").glob("*.part-*.bin")))
    assert folded == ["0", "1"]
    assert len(parts[0]) == 1 and len(parts[1]) == 1 and parts[0] != parts[1], parts


def test_the_pytest_plugin_runs_a_pack_on_the_vulkan_backend(lavapipe: Lavapipe, tmp_path: Path) -> None:
    pack = write_pack(_reduce_cases(4), tmp_path / "pack", header={"seed": 0})
    run = lavapipe.run(["-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "--ctsgen-pack",
                        str(pack), "--ctsgen-backend", "vulkan", "-q"], cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert re.search(r"\b4 passed\b", run.stdout), run.stdout[-2000:]


#: Run through lavapipe's launcher: a backend under the validation layer, then an invalid vkCreateBuffer (size 0:
#: VUID-VkBufferCreateInfo-size-00912), whose message the backend must hand back.
PLANTED_INVALID_CALL = """
import ctypes
from ctsgen.backends.vulkan import VulkanBackend
b = VulkanBackend(validation=True)
print("clean:", b.validation_messages())
vk = b._vk
info = vk.VkBufferCreateInfo(size=0, usage=0x20)
handle = vk.VkBuffer()
b._device.vkCreateBuffer(ctypes.byref(info), None, ctypes.byref(handle))
print("planted:", b.validation_messages())
b.close()
"""


def test_the_validation_layer_reports_an_invalid_call_and_a_clean_pack_stays_clean(lavapipe: Lavapipe,
                                                                                    tmp_path: Path) -> None:
    """The layer the launcher names (sid's vulkan-validationlayers, which knows these extensions) is loaded:
    a planted invalid call gets its VUID, and a pack run under --validation has no ValidationError."""
    planted = lavapipe.run(["-c", PLANTED_INVALID_CALL])
    assert planted.returncode == 0, planted.stderr[-2000:]
    assert "clean: []" in planted.stdout and "VUID-VkBufferCreateInfo-size-00912" in planted.stdout, planted.stdout
    pack = write_pack(_reduce_cases(3), tmp_path / "pack", header={"seed": 0})
    results = tmp_path / "results.jsonl"
    run = lavapipe.ctsgen("run", str(pack), "--backend", "vulkan", "--validation", "--results", str(results))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert _statuses(results) == {"Pass": 3}
    no_layer = lavapipe.run(["-m", "ctsgen", "run", str(pack), "--backend", "vulkan", "--validation",
                             "--results", str(tmp_path / "again.jsonl")], env={"VK_ADD_LAYER_PATH": str(tmp_path)})
    assert no_layer.returncode == 2 and "finds no VK_LAYER_KHRONOS_validation" in no_layer.stderr, no_layer.stderr
