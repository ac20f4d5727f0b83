"""ctsgen in a driver's CI (docs/ci.md): baselines, flakes, selection and deqp-runner's CSV files,
each shown on planted mutants (``--backend mutant:NAME``) of one tensor-layout pack."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.cli import main
from ctsgen.results.deqp_csv import CsvError, read_rows
from ctsgen.results.expectations import Expectations, ExpectationsError, Outcome, classify, load_expectations
from ctsgen.results.status import DeqpStatus, with_baseline
from ctsgen.core.verdict import Status

PACK_COUNT, PACK_SEED = 24, 1
#: a mutant that fails some of this pack's cases, and one that fails others
MUTANT, OTHER = "mirror-as-repeat", "constant-clamp-zero"
#: deqp-runner's reader (RunnerResults::from_csv): a name, a status, then anything
DEQP_LINE = re.compile(r"^([^,]+),([^,]+)")


def _run(pack: Path, *args: str, backend: str = f"mutant:{MUTANT}") -> int:
    return main(["run", str(pack), "--quiet", "--backend", backend, *args])


def _csv(pack: Path, backend: str, which: str) -> dict[str, str]:
    path = pack / f"results-{backend.replace(':', '-')}" / which
    return {name: status.value for _, name, status in read_rows(path)}


@pytest.fixture(scope="module")
def mutant_failures(pristine: Path, tmp_path_factory: pytest.TempPathFactory, spirv_cache_dir: Path) -> Path:
    """The failures.csv of MUTANT on the module's pack, run without a baseline."""
    pack = tmp_path_factory.mktemp("base") / "pack"
    shutil.copytree(pristine, pack)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
        assert _run(pack) == 1
    out = tmp_path_factory.mktemp("baseline") / "failures.csv"
    shutil.copy(pack / f"results-mutant-{MUTANT}" / "failures.csv", out)
    assert read_rows(out), "the mutant must fail some case of the pack for these tests to mean anything"
    return out


@pytest.mark.slow
def test_a_baseline_listing_the_mutants_failures_exits_0(pack: Path, mutant_failures: Path, capsys) -> None:
    assert _run(pack, "--baseline", str(mutant_failures)) == 0
    results = _csv(pack, f"mutant:{MUTANT}", "results.csv")
    listed = {name for _, name, _ in read_rows(mutant_failures)}
    assert {n for n, s in results.items() if s == "ExpectedFail"} == listed
    assert _csv(pack, f"mutant:{MUTANT}", "failures.csv") == {}
    assert "ci: pass: every failure is expected" in capsys.readouterr().out


@pytest.mark.slow
def test_one_extra_failure_exits_1(pack: Path, mutant_failures: Path, tmp_path: Path) -> None:
    rows = mutant_failures.read_text().splitlines()
    short = tmp_path / "short.csv"
    short.write_text("\n".join(rows[1:]) + "\n")
    assert _run(pack, "--baseline", str(short)) == 1
    assert _csv(pack, f"mutant:{MUTANT}", "failures.csv") == {rows[0].split(",")[0]: "Fail"}
    # another bug on top of the expected ones is also caught
    assert _run(pack, "--baseline", str(mutant_failures), backend=f"mutant:{OTHER}") == 1


def test_a_fixed_case_is_an_unexpected_improvement_that_exits_1_unless_improvements_pass(
        pack: Path, mutant_failures: Path, capsys) -> None:
    assert _run(pack, "--baseline", str(mutant_failures), backend="reference") == 1  # as deqp-runner
    listed = {name for _, name, _ in read_rows(mutant_failures)}
    assert _csv(pack, "reference", "failures.csv") == {n: "UnexpectedImprovement(Pass)" for n in listed}
    assert "the baseline can shrink" in capsys.readouterr().out
    assert _run(pack, "--baseline", str(mutant_failures), "--improvements-pass", backend="reference") == 0
    assert "--improvements-pass lets them pass" in capsys.readouterr().out
    # failures.csv doubles as the next baseline (deqp-runner's loop: --baseline last-run/failures.csv, the new
    # files elsewhere; the run it feeds never replaces it, docs/ci.md): with it the same run is clean
    assert _run(pack, "--baseline", str(pack / "results-reference" / "failures.csv"), "--csv-dir",
                str(pack / "next"), backend="reference") == 0
    assert "UnexpectedImprovement(Pass)" not in {st.value for _, _, st in read_rows(pack / "next" / "results.csv")}


@pytest.mark.slow
def test_report_judges_the_results_file_as_the_run_did(pack: Path, mutant_failures: Path, tmp_path: Path,
                                                       capsys) -> None:
    short = tmp_path / "short.csv"
    short.write_text("\n".join(mutant_failures.read_text().splitlines()[1:]) + "\n")
    for baseline, code in ((mutant_failures, 0), (short, 1)):
        capsys.readouterr()
        assert _run(pack, "--baseline", str(baseline)) == code
        run_lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(("ci:", "  "))]
        jsonl = pack / f"results-mutant-{MUTANT}.jsonl"
        assert main(["report", str(jsonl), "--baseline", str(baseline)]) == code
        report_lines = capsys.readouterr().out.splitlines()
        ci = lambda lines: [ln for ln in lines if ln.startswith(("ci:", "  Fail: "))]  # noqa: E731
        assert ci(run_lines) == ci(report_lines) and ci(run_lines)


class FailsFirstDispatch(ReferenceBackend):
    """A flaky driver: the first dispatch of the process returns one output bit flipped."""

    dispatched = 0

    def run(self, dispatch, timeout_s):
        out = super().run(dispatch, timeout_s)
        FailsFirstDispatch.dispatched += 1
        if FailsFirstDispatch.dispatched == 1:
            last = out[-1].view(np.uint8)
            last[0] ^= 1
        return out


def test_a_case_failing_once_is_a_flake_with_retries_and_a_fail_without(pack: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    flaky = ["--isolation", "none"]
    FailsFirstDispatch.dispatched = 0
    assert _run(pack, *flaky, backend="test_ci:FailsFirstDispatch") == 1
    failed = _csv(pack, "test_ci:FailsFirstDispatch", "failures.csv")
    assert list(failed.values()) == ["Fail"]
    FailsFirstDispatch.dispatched = 0
    assert _run(pack, *flaky, "--flake-retries", "2", backend="test_ci:FailsFirstDispatch") == 0
    results = _csv(pack, "test_ci:FailsFirstDispatch", "results.csv")
    assert [n for n, s in results.items() if s == "Flake"] == list(failed)
    assert FailsFirstDispatch.dispatched == len(results) + 1  # one re-run dispatch, for the one case


@pytest.mark.slow
def test_a_flakes_file_excuses_only_the_cases_it_matches(pack: Path, mutant_failures: Path, tmp_path: Path) -> None:
    first = read_rows(mutant_failures)[0][1]
    flakes = tmp_path / "flakes.txt"
    flakes.write_text("# known flaky\n" + re.escape(first) + "\n")
    code = _run(pack, "--flakes", str(flakes))
    results = _csv(pack, f"mutant:{MUTANT}", "results.csv")
    assert results[first] == "KnownFlake"  # deqp-runner: a flakes regex, not a re-run
    assert code == (0 if len(read_rows(mutant_failures)) == 1 else 1)


def test_include_exclude_and_caselist_select_what_they_say(pack: Path, tmp_path: Path) -> None:
    assert _run(pack, backend="reference") == 0
    every = set(_csv(pack, "reference", "results.csv"))
    assert _run(pack, "--include", r"\.load\.", "--exclude", "clamp_constant", backend="reference") == 0
    got = set(_csv(pack, "reference", "results.csv"))
    assert got == {n for n in every if ".load." in n and "clamp_constant" not in n} and got
    listed = sorted(every)[:3]
    caselist = tmp_path / "cases.txt"
    caselist.write_text("\n".join(listed + ["tensor_layout.not.in.this.pack.case_0000000000"]) + "\n")
    assert _run(pack, "--caselist", str(caselist), backend="reference") == 1  # the unknown name is Missing
    assert _csv(pack, "reference", "results.csv") == {**{n: "Pass" for n in listed},
                                                     "tensor_layout.not.in.this.pack.case_0000000000": "Missing"}


def test_fractions_shard_by_variant_and_cover_the_pack_once(pack: Path) -> None:
    shards = []
    for start in (1, 2, 3):
        assert _run(pack, "--fraction", "3", "--fraction-start", str(start), backend="reference") == 0
        shards.append(set(_csv(pack, "reference", "results.csv")))
    assert all(shards) and not (shards[0] & shards[1] or shards[1] & shards[2] or shards[0] & shards[2])
    assert len(set.union(*shards)) == PACK_COUNT
    variant = lambda name: name.rsplit(".", 1)[0]  # noqa: E731
    assert not ({variant(n) for n in shards[0]} & {variant(n) for n in shards[1]})
    with pytest.raises(SystemExit) as exc:
        _run(pack, "--fraction", "2", "--fraction-start", "3", backend="reference")
    assert exc.value.code == 2


def test_results_and_failures_csv_parse_as_deqp_runners_layout(pack: Path) -> None:
    assert _run(pack) == 1
    folder = pack / f"results-mutant-{MUTANT}"
    statuses = {s.value for s in DeqpStatus}
    lines = (folder / "results.csv").read_text().splitlines()
    assert len(lines) == PACK_COUNT and lines == sorted(lines)
    for line in lines:
        name, status, duration = line.split(",")
        assert DEQP_LINE.match(line).groups() == (name, status) and status in statuses
        assert float(duration) >= 0
    assert any(float(ln.split(",")[2]) > 0 for ln in lines)  # durations are measured, not zero
    failures = (folder / "failures.csv").read_text().splitlines()
    assert failures and all(len(ln.split(",")) == 2 and ln.split(",")[1] == "Fail" for ln in failures)
    assert {ln.split(",")[0] for ln in failures} == {ln.split(",")[0] for ln in lines if ",Fail," in ln}


@pytest.mark.slow
def test_a_deviation_rule_expects_exactly_the_failures_the_deviation_explains(pack: Path, tmp_path: Path) -> None:
    rule = tmp_path / "h100.csv"
    rule.write_text("# the H100's SetDimension stride deviation (docs/validation.md)\n"
                    "deviation:setdimension-floor,Fail\n")
    assert _run(pack, backend="mutant:setdimension-floor") == 1
    failing = set(_csv(pack, "mutant:setdimension-floor", "failures.csv"))
    assert failing, "this pack must reach the deviation"
    assert _run(pack, "--baseline", str(rule), backend="mutant:setdimension-floor") == 0
    results = _csv(pack, "mutant:setdimension-floor", "results.csv")
    assert {n for n, s in results.items() if s == "ExpectedFail"} == failing
    assert _run(pack, "--baseline", str(rule), backend=f"mutant:{MUTANT}") == 1  # explains nothing else


def test_statuses_follow_deqp_runners_baseline_rules() -> None:
    D = DeqpStatus
    assert with_baseline(D.Fail, D.Fail) is D.ExpectedFail
    assert with_baseline(D.Fail, D.Crash) is D.ImprovedFail  # milder than expected
    assert with_baseline(D.Crash, D.Fail) is D.Crash
    assert with_baseline(D.Pass, D.Fail) is D.ImprovedPass
    assert with_baseline(D.Pass, D.ExpectedFail) is D.Pass  # deqp-runner 0.20: a results.csv's ExpectedFail
    assert with_baseline(D.Timeout, D.Timeout) is D.ExpectedFail
    assert with_baseline(D.Fail, None) is D.Fail and with_baseline(D.Skip, D.Fail) is D.ImprovedSkip
    assert not D.ImprovedPass.is_success and D.Flake.is_success and D.KnownFlake.is_success
    exp = Expectations()
    for status, mapped in ((Status.QualityWarning, D.Warn), (Status.NotSupported, D.Skip),
                           (Status.BuildTimeout, D.Timeout), (Status.DeviceLost, D.Crash),
                           (Status.ModelMismatch, D.Warn)):
        assert classify(Outcome("x", status), exp) is mapped


def test_a_regex_rule_expects_failures_but_never_makes_a_pass_unexpected(tmp_path: Path) -> None:
    base = tmp_path / "fails.txt"
    base.write_text(r"re:^coopvec_elementwise\.log\.float32\.,Fail" + "\n")
    exp = load_expectations([base])
    name = "coopvec_elementwise.log.float32.n48.case_ce18379263"
    assert classify(Outcome(name, Status.Fail), exp) is DeqpStatus.ExpectedFail
    assert classify(Outcome(name, Status.Pass), exp) is DeqpStatus.Pass
    assert classify(Outcome("coopvec_elementwise.exp.float32.n48.case_0", Status.Fail), exp) is DeqpStatus.Fail


@pytest.mark.parametrize("text, match", [
    ("a.case,Fial\n", "unknown status 'Fial'"),
    ("a.case\n", "expected 'name,Status'"),
    ("a.case,Fail\na.case,Crash\n", "already listed on line 1"),
    ("re:(,Fail\n", "not a regular expression"),
    ("deviation:no-such-deviation,Fail\n", "no-such-deviation"),
])
def test_a_bad_baseline_is_one_line_naming_the_line(tmp_path: Path, text: str, match: str) -> None:
    base = tmp_path / "fails.txt"
    base.write_text(text)
    with pytest.raises((CsvError, ExpectationsError), match=match) as exc:
        load_expectations([base])
    assert "\n" not in str(exc.value) and str(base) in str(exc.value)


SHIPPED = Path(__file__).resolve().parent.parent / "expectations"


def test_the_shipped_lavapipe_file_expects_its_two_findings_by_their_deviations() -> None:
    """A reduce failure lavapipe-reduce-tiles reproduces, and a kernel failure lavapipe-muladd-accumulator
    reproduces, are expected; any other failure, a reduce one included, is not (the rule is the
    deviation, not a name pattern)."""
    exp = load_expectations([SHIPPED / "lavapipe-26.csv"])
    assert set(exp.deviations) == {"lavapipe-reduce-tiles", "lavapipe-muladd-accumulator"} and not exp.names
    kernel = "coopmat_kernel.float16.float32.16x16x16.kfa0bc3c7f1.case_0123456789"
    assert classify(Outcome(kernel, Status.Fail, explained_by=("lavapipe-muladd-accumulator",)), exp) \
        is DeqpStatus.ExpectedFail
    assert classify(Outcome(kernel, Status.Fail), exp) is DeqpStatus.Fail
    name = "cm2_reduce.row.sum.sint32.accumulator_16x24.subgroup.to_16x1.case_0123456789"
    explained = Outcome(name, Status.Fail, explained_by=("lavapipe-reduce-tiles",))
    assert classify(explained, exp) is DeqpStatus.ExpectedFail
    assert classify(Outcome(name, Status.Fail), exp) is DeqpStatus.Fail
    assert classify(Outcome(name, Status.Fail, explained_by=("setdimension-floor",)), exp) is DeqpStatus.Fail


def test_the_shipped_h100_file_expects_its_two_documented_findings() -> None:
    exp = load_expectations([SHIPPED / "nvidia-h100-580.csv"])
    assert set(exp.deviations) == {"setdimension-floor"} and not exp.names
    log = Outcome("coopvec_elementwise.log.float32.n48.case_ce18379263", Status.Fail)
    assert classify(log, exp) is DeqpStatus.ExpectedFail
    assert classify(Outcome("coopvec_elementwise.log.float16.n48.case_0", Status.Fail), exp) is DeqpStatus.Fail
    explained = Outcome("tensor_layout.load.dim2.x.case_0", Status.Fail, explained_by=("setdimension-floor",))
    assert classify(explained, exp) is DeqpStatus.ExpectedFail
    assert classify(Outcome("tensor_layout.load.dim2.x.case_0", Status.Fail), exp) is DeqpStatus.Fail


def test_a_fuzz_finding_that_does_not_recur_is_a_flake_and_exits_0(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    monkeypatch.chdir(tmp_path)
    FailsFirstDispatch.dispatched = 0
    assert main(["fuzz", "--backend", "test_ci:FailsFirstDispatch", "--isolation", "none", "--max-examples", "30",
                 "--database", "none", "--repro-dir", str(tmp_path / "r"), "--shrink-time", "5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Flake: \S+: Fail \(.*\); it did not recur on replay", out) and "(1 flake(s) above)" in out
    assert not any((tmp_path / "r").glob("*"))  # no repro: it is not a bug


class PlantedValidationMessage(ReferenceBackend):
    """A driver under the validation layer whose first dispatch draws one message (as
    VulkanBackend(validation=True) reports them: ctsgen.backends.validation)."""

    taken = 0

    def validation_messages(self) -> list[str]:
        PlantedValidationMessage.taken += 1
        return ["VUID-planted: a message on the first dispatch"] if PlantedValidationMessage.taken == 1 else []


def test_a_validation_message_is_its_own_status_never_a_pass_nor_a_fail(pack: Path, monkeypatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    PlantedValidationMessage.taken = 0
    assert _run(pack, "--isolation", "none", backend="test_ci:PlantedValidationMessage") == 1
    results = _csv(pack, "test_ci:PlantedValidationMessage", "results.csv")
    flagged = [n for n, s in results.items() if s == "ValidationError"]
    assert len(flagged) == 1 and set(results.values()) == {"Pass", "ValidationError"}
    assert _csv(pack, "test_ci:PlantedValidationMessage", "failures.csv") == {flagged[0]: "ValidationError"}
    record = (pack / "results-test_ci-PlantedValidationMessage.jsonl").read_text()
    assert "1 validation message(s) on its dispatch (outputs: Pass): VUID-planted" in record


def test_validation_needs_the_vulkan_backend(pack: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        _run(pack, "--validation", backend="reference")
    assert exc.value.code == 2 and "--validation runs the Khronos validation layer" in capsys.readouterr().err


@pytest.mark.slow
def test_fuzz_passes_over_the_findings_a_baseline_expects(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    rule = tmp_path / "fails.txt"
    rule.write_text(r"re:^tensor_layout\.,Fail" + "\n")
    args = ["fuzz", "--backend", f"mutant:{MUTANT}", "--max-examples", "60", "--database", "none",
            "--repro-dir", str(tmp_path / "r"), "--shrink-time", "3"]
    assert main(args) == 1
    assert main(args + ["--baseline", str(rule)]) == 0
    out = capsys.readouterr().out
    assert "\nno failure found\nabsorbed by the expectations:\n  re:^tensor_layout\\.: " in out
