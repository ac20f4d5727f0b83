"""The fuzzer finds catalogued bugs, shrinks them to the mutated rule, exports
repros that replay, and replays stored failures first."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.cli import main
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.model.tensor import ClampMode
from ctsgen.mutants.backend import MutantBackend
from ctsgen.mutants.catalogue import catalogue
from ctsgen.oracle.addressing import linear_to_span_coord, matrix_linear_index
from ctsgen.repro import export_case
from ctsgen.backends.supervise import SupervisedBackend


def fuzz(mutant: str, max_examples: int = 200, seed: int = 0, database: str | None = None):
    backend = SupervisedBackend(functools.partial(MutantBackend, mutant), name=f"mutant:{mutant}")
    try:
        return Fuzzer(backend, FuzzOptions(max_examples=max_examples, seed=seed, database=database)).run()
    finally:
        backend.close()


def raw_coords(case):
    """spanCoord + offset per axis, before clamping (LDim x rows x cols)."""
    t, m = case.layout(), case.shader.matrix
    span = linear_to_span_coord(t, matrix_linear_index(m.rows, m.cols))
    return [span[d] + t.offset[d] for d in range(t.LDim)], t


def test_the_catalogue_is_large_and_spread_over_the_rules() -> None:
    mutants = catalogue()
    assert len(mutants) >= 18
    assert len({m.name for m in mutants.values()}) == len(mutants)
    assert all(m.description and m.killed_by for m in mutants.values())


@pytest.mark.slow
def test_a_correct_backend_survives_the_fuzzer() -> None:
    report = Fuzzer(ReferenceBackend(), FuzzOptions(max_examples=60, database=None)).run()
    assert report.case is None and report.examples == 60 and report.cases >= 60


class _RecordingFuzzer(Fuzzer):
    """A Fuzzer that keeps every batch Hypothesis hands its test function."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[tuple[str, set[str]]] = []

    def check(self, batch) -> None:
        variant, cases = batch
        self.seen.append((variant.id, {c.name() for c in cases}))
        super().check(batch)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["tensor-layout", "coopvec-elementwise"])
def test_examples_are_fresh_batches_not_replays_of_the_last_one(family: str) -> None:
    """Hypothesis's mutator must not turn most examples into the previous batch with one case
    copied over another (same variant, its cases judged already): the fuzzer's reach is one new
    variant per example (the vts-drops-last regression drew one every ~6 examples). Its size
    probes stay single cases of new variants (a ~200-case probe let the next example reuse it)."""
    f = _RecordingFuzzer(ReferenceBackend(), FuzzOptions(families=(family,), max_examples=60, database=None))
    report = f.run()
    assert report.case is None
    assert len(f.seen[0][1]) == 1  # Hypothesis's simplest example, like its early size probes, is one case
    replays = sum(bool(prev[1] & cur[1]) for prev, cur in zip(f.seen, f.seen[1:]))
    assert replays <= len(f.seen) // 20, f"{replays} of {len(f.seen)} examples replay the previous batch"
    assert len({v for v, _ in f.seen}) >= 0.8 * len(f.seen)


@pytest.mark.slow
def test_setdimension_floor_shrinks_to_a_non_divisible_blocked_axis() -> None:
    report = fuzz("setdimension-floor")
    c = report.case
    assert c is not None and report.result.status.value == "Fail"
    assert c.blockSize is not None and c.stride is None  # the default strides are what is mutated
    assert any(d % b for d, b in zip(c.layoutDimension[1:], c.blockSize[1:]))  # ceiling != floor somewhere
    assert c.shader.matrix.elements == 64 and c.data_pattern == "iota"  # the smallest, most readable case


@pytest.mark.slow
def test_repeat_c_remainder_shrinks_to_a_negative_coordinate_under_repeat() -> None:
    report = fuzz("repeat-c-remainder")
    c = report.case
    assert c is not None and c.shader.clampMode is ClampMode.Repeat
    coords, t = raw_coords(c)
    assert any((x < 0).any() for x in coords)  # OpSMod and C's remainder differ only there
    assert sum(t.layoutDimension) <= 6


def test_oob_store_written_shrinks_to_a_store_out_of_bounds() -> None:
    report = fuzz("oob-store-written")
    c = report.case
    assert c is not None and c.shader.operation.value == "store"
    assert c.shader.clampMode in (ClampMode.ClampToEdge, ClampMode.Repeat, ClampMode.RepeatMirrored)
    coords, t = raw_coords(c)
    assert any(((x < 0) | (x >= d)).any() for x, d in zip(coords, t.layoutDimension))


@pytest.mark.slow
def test_exported_repro_fails_on_the_mutant_and_passes_on_the_reference(tmp_path: Path, capsys) -> None:
    report = fuzz("span-axes-reversed")
    assert report.case is not None
    out = export_case(report.case, tmp_path / "repro", failure=report.result.to_json(),
                      backend="mutant:span-axes-reversed")
    text = (out / "REPORT.md").read_text()
    assert f"Observed: **{report.result.status.value}**" in text and "repro.spv" in text
    assert "const uint BAKED" in (out / "repro.comp").read_text()
    assert main(["run", str(out), "--quiet", "--backend", "mutant:span-axes-reversed"]) == 1
    assert main(["run", str(out), "--quiet", "--backend", "reference",
                 "--results", str(tmp_path / "ref.jsonl")]) == 0


@pytest.mark.slow
def test_the_database_replays_a_stored_failure_first(tmp_path: Path) -> None:
    db = str(tmp_path / "db")
    first = fuzz("set-stride-ignored", database=db, seed=3)
    assert first.case is not None and first.first_failure_example > 1
    again = fuzz("set-stride-ignored", database=db, seed=99)
    assert again.first_failure_example == 1
    assert again.case.name() == first.case.name()


@pytest.mark.slow
def test_expecting_a_documented_deviation_turns_it_into_a_pass() -> None:
    backend = SupervisedBackend(functools.partial(MutantBackend, "setdimension-floor"), name="m")
    try:
        report = Fuzzer(backend, FuzzOptions(max_examples=80, database=None,
                                             expect_deviations=("setdimension-floor",))).run()
    finally:
        backend.close()
    assert report.case is None and report.examples == 80


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mirror-period-off-by-one", "offset-unsigned", "span-outer-axis-no-wrap"])
def test_more_mutants_are_killed_within_a_small_budget(name: str) -> None:
    """Each within the kill budget declared beside it (ctsgen/families/tensor_layout/mutants.py)."""
    budget = catalogue()[name].kill_budget
    report = fuzz(name, max_examples=budget)
    assert report.case is not None, f"{name} survived {budget} examples"
    assert report.first_failure_example <= budget and math.isfinite(report.wall_s)
    assert 0 < report.first_failure_s <= report.wall_s  # the seconds `ctsgen bench mutation` reports


@pytest.mark.slow
def test_the_mutation_bench_reports_seconds_to_kill() -> None:
    """Seconds to kill, not only examples (a larger batch costs more an example): row and table carry both."""
    from ctsgen.fuzz.mutation import bench_mutant, markdown
    from ctsgen.mutants.catalogue import get_mutant

    row = bench_mutant(get_mutant("repeat-as-clamp-to-edge"), seeds=[0], max_examples=150, reference_budget=0)
    assert row.killed == 1 and row.median_seconds is not None and 0 < row.median_seconds < 120
    table = markdown([row], [0], 150, "ctsgen bench mutation", reference_budget=0)
    header, _, line = table.splitlines()[-3:]
    assert "seconds to kill (median)" in header
    assert line.split(" | ")[4] == f"{row.median_seconds:.2f}"


@pytest.mark.slow
def test_workers_share_the_database_so_every_worker_replays_a_stored_failure(tmp_path: Path) -> None:
    import re
    import subprocess
    import sys

    base = [sys.executable, "-m", "ctsgen", "fuzz", "--backend", "mutant:set-stride-ignored", "--max-examples",
            "100", "--database", str(tmp_path / "db"), "--repro-dir", str(tmp_path / "repros"), "--shrink-time", "3"]
    first = subprocess.run(base + ["--seed", "3"], capture_output=True, text=True, timeout=300)
    assert first.returncode == 1 and "first failure after" in first.stdout
    both = subprocess.run(base + ["--workers", "2", "--seed", "77"], capture_output=True, text=True, timeout=300)
    found = re.findall(r"\[worker (\d)\] first failure after (\d+) examples", both.stdout)
    assert both.returncode == 1 and {w for w, _ in found} == {"0", "1"}, both.stdout
    assert all(int(n) <= 3 for _, n in found)  # replayed from the shared database, not found afresh


def test_a_repro_is_written_on_a_host_without_a_validator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU host compiles on the fly but may lack spirv-val: the fuzzer's repro must still be written
    (an H100 session lost its two repros to this); an invalid module is still refused elsewhere."""
    from ctsgen.toolchain import spirv_val
    from ctsgen.families.coopvec import FAMILY
    from ctsgen.core.family import StrategyOptions
    from ctsgen.strategies.sampling import draw_examples

    monkeypatch.setattr(spirv_val, "_candidate_dirs", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    case = draw_examples(FAMILY.cases(StrategyOptions()), 1, 3)[0]
    out = export_case(case, tmp_path / "repro")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["toolchain"]["spirv_val"] == "not installed"
    assert (out / "repro.spv").read_bytes()[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number


class _FailsOnce:
    """The reference backend, except that its first dispatch of 2+ cases returns poison: a
    failure Hypothesis cannot reproduce when it replays the example (as a one-off hang)."""

    name = "fails-once"

    def __init__(self) -> None:
        self._ref = ReferenceBackend()
        self._failed = False

    def profile(self):
        return self._ref.profile()

    def run(self, dispatch, timeout_s):
        out = self._ref.run(dispatch, timeout_s)
        if not self._failed and dispatch.workgroups >= 2:
            self._failed = True
            out = [np.full_like(a, 0x7F) if i else a for i, a in enumerate(out)]
        return out

    def close(self) -> None:
        self._ref.close()


def test_a_failure_that_does_not_recur_is_reported_as_a_flake_not_raised() -> None:
    """Hypothesis raises FlakyFailure when a failing example passes on replay; the fuzzer
    reports the failure it saw (an H100 session crashed on this after a one-off timeout) as a
    flake, deqp-runner's word for it, not as a bug (docs/ci.md)."""
    report = Fuzzer(_FailsOnce(), FuzzOptions(max_examples=40, database=None, shrink_time_s=5)).run()
    assert not report.failures and report.case is None
    assert [r.status.value for _, r in report.flakes] == ["Fail"]


class _AlwaysWrong:
    """The reference backend, except that every output buffer comes back as poison: every
    example fails. Counts its dispatches."""

    name = "always-wrong"

    def __init__(self) -> None:
        self._ref = ReferenceBackend()
        self.dispatches = 0

    def profile(self):
        return self._ref.profile()

    def run(self, dispatch, timeout_s):
        self.dispatches += 1
        return [np.full_like(a, 0x7F) if i else a for i, a in enumerate(self._ref.run(dispatch, timeout_s))]

    def close(self) -> None:
        self._ref.close()


@pytest.mark.slow
def test_every_keep_going_round_stops_shrinking_at_the_shrink_budget() -> None:
    """With --keep-going each round's failure gets --shrink-time, not only the first: a 30-minute
    H100 session shrank later rounds' failures without bound (Hypothesis's own five minutes) and
    three fuzz processes grew to 5-16 GB. With no shrink budget a round ends at the first check
    after its failure: one batch plus its isolating re-runs."""
    from ctsgen.fuzz.loop import ISOLATION_TRIES

    backend = _AlwaysWrong()
    report = Fuzzer(backend, FuzzOptions(families=("cm2-elementwise",), keep_going=True, time_s=6,
                                         shrink_time_s=0, max_examples=50, database=None)).run()
    assert len(report.failures) >= 3
    assert backend.dispatches <= len(report.failures) * (1 + ISOLATION_TRIES)


@pytest.mark.slow
def test_workers_end_with_their_totals_and_a_signal_ends_every_worker_with_its_report(tmp_path: Path) -> None:
    """``--workers`` prints the workers' cases summed (each worker's own line adds up to it), and a
    SIGTERM to the parent reaches every worker once: each ends like an interrupted fuzz, with its
    report, instead of being orphaned to run out its ``--time``."""
    import re
    import signal
    import subprocess
    import sys
    import time

    argv = [sys.executable, "-m", "ctsgen", "fuzz", "--workers", "2", "--family", "cm2-reduce", "--time", "120",
            "--database", "none", "--repro-dir", str(tmp_path / "repros")]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    time.sleep(8)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert time.monotonic() - began < 30, out
    each = [int(n) for n in re.findall(r"\[worker \d\] fuzzed reference .*?: \d+ examples, (\d+) cases", out)]
    total = re.search(r"^2 workers together: \d+ examples, (\d+) cases in", out, re.M)
    assert len(each) == 2 and total is not None, out
    assert int(total.group(1)) == sum(each) > 0


@pytest.mark.slow
def test_a_batch_floor_makes_every_batch_of_more_than_one_that_large_within_each_familys_cap() -> None:
    """--min-batch M: an example is one case (Hypothesis's probes, and where shrinking ends) or
    M..max_batch cases; a program family's batches stop at its cap (Hypothesis's choice budget)."""
    from ctsgen.families import get_family

    sizes: list[int] = []
    seen = [0]

    def progress(report) -> None:
        sizes.append(report.cases - seen[0])
        seen[0] = report.cases

    cap = get_family("cm2-program").batch_cap
    assert cap is not None and cap < 100
    for family, least, most in (("tensor-layout", 100, 150), ("cm2-program", cap, cap)):
        sizes.clear()
        seen[0] = 0
        Fuzzer(ReferenceBackend(), FuzzOptions(families=(family,), max_examples=12, seed=4, database=None,
                                               min_batch=100, max_batch=150), progress=progress).run()
        # identical cases of a batch are judged once, so a batch may count a few fewer
        assert all(s == 1 or 0.9 * least <= s <= most for s in sizes), (family, sizes)
        assert max(sizes) >= least * 0.9, (family, sizes)


@pytest.mark.slow
def test_with_a_batch_floor_a_mutant_is_still_found_and_its_case_fails_alone() -> None:
    from ctsgen.testing import check_case

    mutant = "set-stride-ignored"
    backend = SupervisedBackend(functools.partial(MutantBackend, mutant), name=f"mutant:{mutant}")
    try:
        report = Fuzzer(backend, FuzzOptions(max_examples=200, seed=0, database=None, min_batch=64)).run()
        assert report.case is not None
        assert check_case(backend, report.case).status.is_failure
    finally:
        backend.close()


def test_a_requested_stop_ends_the_run_at_the_next_example() -> None:
    """A signal's KeyboardInterrupt raised inside a ctypes callback (glslang's output) is printed
    and dropped: a CI run's SIGTERM to a --workers worker was lost that way and the worker fuzzed
    on to its --time. The handler also calls request_stop(), which ends the run at the next example."""
    import time

    fuzzer: list[Fuzzer] = []

    def progress(report) -> None:
        if report.examples == 3:
            fuzzer[0].request_stop()  # what the handler does; its KeyboardInterrupt is taken as lost

    fuzzer.append(Fuzzer(ReferenceBackend(), FuzzOptions(families=("cm2-reduce",), time_s=120, max_examples=10**6,
                                                         database=None), progress=progress))
    began = time.monotonic()
    report = fuzzer[0].run()
    assert report.examples == 3 and time.monotonic() - began < 60


def test_the_workers_summary_says_when_the_hosts_cpu_bounds_them() -> None:
    """The 2-GPU H100 host's 32 workers spent about 80% of their time drawing and in oracles: a
    second GPU cannot raise that, more cores could."""
    from ctsgen.fuzz.workers import bound_by
    from ctsgen.timing import Breakdown

    cpu = Breakdown({"draw": 45.0, "data+oracle": 35.0, "judge": 5.0, "pipeline": 8.0, "dispatch": 7.0})
    assert bound_by(cpu, 32, 32).startswith("bound by the host's CPU: 85% of the workers' time")
    assert "not with GPUs" in bound_by(cpu, 32, 32)
    assert "bound by" not in bound_by(cpu, 8, 32)  # cores left idle: more workers first
    gpu = Breakdown({"draw": 10.0, "pipeline": 50.0, "dispatch": 40.0})
    assert bound_by(gpu, 32, 32) == "the host's CPU stages take 10% of the workers' time, the device's 90%"


class _CostlyBuilds(ReferenceBackend):
    """The reference backend reporting ``build_s`` seconds of pipeline build for each new variant (stats)."""

    def __init__(self, build_s: float) -> None:
        super().__init__()
        self.build_s, self.built, self.stats = build_s, set(), {"pipeline_s": 0.0}

    def run(self, dispatch, timeout_s):  # noqa: ANN001, ANN201 - the Backend signature
        if dispatch.variant.id not in self.built:
            self.built.add(dispatch.variant.id)
            self.stats["pipeline_s"] += self.build_s
        return super().run(dispatch, timeout_s)


@pytest.mark.slow
def test_a_family_whose_pipelines_cost_more_gets_larger_batches_from_the_next_round() -> None:
    """--min-batch 8: builds of 0.4 s an example (4x PIPELINE_REF_S) raise the floor to 32 cases for
    the next round; free builds leave it at 8; a floor of 1 (the reference backend) never moves."""
    from ctsgen.fuzz.loop import PIPELINE_REF_S

    def batch_sizes(build_s: float, min_batch: int) -> tuple[list[int], Fuzzer]:
        sizes, seen = [], [0]

        def progress(report) -> None:
            sizes.append(report.cases - seen[0])
            seen[0] = report.cases

        fz = Fuzzer(_CostlyBuilds(build_s), FuzzOptions(families=("cm2-reduce",), max_examples=15, seed=3,
                                                         database=None, min_batch=min_batch, max_batch=64,
                                                         time_s=10**6), progress=progress)
        fz.build_s["cm2-reduce"] = build_s  # as a first round would have learnt it
        floor = fz.floor("cm2-reduce", 64)
        fz._one_round(3)
        return sizes, floor

    costly, floor = batch_sizes(4 * PIPELINE_REF_S, 8)
    assert floor == 32
    # identical cases of a batch are judged once, so a batch may count a few fewer
    assert all(s == 1 or s >= 0.9 * 32 for s in costly) and max(costly) >= 0.9 * 32, costly
    cheap, floor = batch_sizes(0.0, 8)
    assert floor == 8 and min(s for s in cheap if s > 1) < 0.9 * 32, cheap
    assert batch_sizes(4 * PIPELINE_REF_S, 1)[1] == 1
