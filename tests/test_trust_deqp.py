"""The CI gate reads today's deqp-runner files with today's deqp-runner rules, and never passes an
empty or masked run (docs/ci.md). Each test here failed before its fix.

deqp-runner 0.20.3's ``runner_results.rs`` is the reference: ``RunnerStatus``'s ``FromStr`` (the
statuses a baseline may hold), ``is_success`` (what fails a run), ``with_baseline`` (a run's status
against the listed one) and ``RunnerResults::from_csv`` (its line pattern, :data:`DEQP_LINE`).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from ctsgen.cli import main
from ctsgen.core.verdict import Status
from ctsgen.results.deqp_csv import DEQP_LINE, Row, format_failures, format_results, read_rows
from ctsgen.results.expectations import Outcome, classify, load_expectations, read_regexes
from ctsgen.results.results_file import describe_header, driver_version_name, format_cts, load_results, \
    make_header, read_header
from ctsgen.results.status import FROM_CTSGEN, DeqpStatus as D, with_baseline
from ctsgen.runner.select import read_caselist
from one_line_errors import fails_with

PACK_COUNT, PACK_SEED = 24, 1
MUTANT = "mirror-as-repeat"
#: every status deqp-runner 0.20's ``RunnerStatus::from_str`` accepts
DEQP_RUNNER_STATUSES = {"Pass", "Fail", "Crash", "Skip", "Flake", "KnownFlake", "Warn", "Missing", "ExpectedFail",
                        "Timeout"} | {f"UnexpectedImprovement({s})" for s in
                                      ("Pass", "Fail", "Crash", "Skip", "Warn", "Timeout")}
pytest_plugins = ["pytester"]
A, B, C = "tensor_layout.load.a.case_01", "tensor_layout.load.b.case_02", "tensor_layout.load.c.case_03"


def _results(path: Path, *records: tuple[str, str], explain: tuple[str, ...] = ()) -> Path:
    """A ctsgen JSON-lines results file: a header, then one record per (name, ctsgen status)."""
    header = make_header("0" * 64, "reference", "ref", None, (), None, explain)
    path.write_text("".join(json.dumps(r) + "\n" for r in
                            [header, *({"name": n, "status": s, "detail": ""} for n, s in records)]))
    return path


def _report(capsys, jsonl: Path, *baseline_lines: str, flags: tuple[str, ...] = ()) -> tuple[int, str]:
    base = jsonl.with_name("base.csv")
    base.write_text("".join(ln + "\n" for ln in baseline_lines))
    code = main(["report", str(jsonl), "--baseline", str(base), *flags])
    return code, capsys.readouterr().out


# -- today's deqp-runner: names, rules, files ---------------------------------------------

#: the issue's table, as deqp-runner 0.20's with_baseline has it
TABLE = [(D.Skip, D.Fail, D.ImprovedSkip), (D.Timeout, D.ExpectedFail, D.Timeout), (D.Fail, D.Crash, D.ImprovedFail),
         (D.Warn, D.Warn, D.ExpectedFail), (D.Pass, D.ExpectedFail, D.Pass)]


@pytest.mark.parametrize("run, listed, judged", TABLE)
def test_the_baseline_table_is_deqp_runners(run: D, listed: D, judged: D) -> None:
    assert with_baseline(run, listed) is judged
    assert judged.is_success is (judged in (D.ExpectedFail, D.Pass))  # the three improvements and Timeout fail


def test_with_baseline_matches_deqp_runner_on_every_pair() -> None:
    """Every (run status, listed status) pair, against a transcription of runner_results.rs's match."""
    improved = {"Pass": D.ImprovedPass, "Fail": D.ImprovedFail, "Warn": D.ImprovedWarn, "Skip": D.ImprovedSkip}

    def deqp_runner(run: str, listed: str) -> D:
        if run == "Fail":
            return D.ExpectedFail if listed in ("Fail", "ExpectedFail") else \
                improved["Fail"] if listed in ("Crash", "Timeout") else D.Fail
        if run in ("Pass", "Skip"):
            return improved[run] if listed in ("Fail", "Crash", "Missing", "Timeout") else D(run)
        if run == "Crash":
            return D.ExpectedFail if listed in ("Crash", "ExpectedFail") else D.Crash
        if run == "Warn":
            return improved["Warn"] if listed in ("Fail", "Crash") else D.ExpectedFail if listed == "Warn" else D.Warn
        if run == "Timeout":
            return D.ExpectedFail if listed == "Timeout" else D.Timeout
        return D(run)  # Flake, KnownFlake

    for run in ("Pass", "Fail", "Skip", "Crash", "Warn", "Timeout", "Flake", "KnownFlake"):
        for listed in DEQP_RUNNER_STATUSES:
            assert with_baseline(D(run), D(listed)) is deqp_runner(run, listed), (run, listed)


def test_a_current_deqp_runner_failures_csv_is_a_baseline(tmp_path: Path, capsys) -> None:
    base = tmp_path / "failures.csv"  # as deqp-runner 0.20 writes it, and a results.csv's three fields
    base.write_text(f"{A},UnexpectedImprovement(Fail)\n{B},KnownFlake\n{C},Fail,0.25\n"
                    "x.case_04,UnexpectedImprovement(Skip)\n")
    assert [s for _, _, s in read_rows(base)] == [D.ImprovedFail, D.KnownFlake, D.Fail, D.ImprovedSkip]
    jsonl = _results(tmp_path / "r.jsonl", (A, "Fail"), (B, "Pass"), (C, "Fail"))
    assert main(["report", str(jsonl), "--baseline", str(base)]) == 1  # as deqp-runner: a listed UI(Fail)
    out = capsys.readouterr().out
    assert f"  Fail: {A}" in out and f"  Fail: {C}" not in out and f"  Fail: {B}" not in out


@pytest.mark.slow
def test_ctsgen_failures_csv_parses_with_deqp_runners_line_pattern_and_back(pack: Path, tmp_path: Path) -> None:
    assert main(["run", str(pack), "--quiet", "--backend", f"mutant:{MUTANT}"]) == 1
    failures = pack / f"results-mutant-{MUTANT}" / "failures.csv"
    base = tmp_path / "base.csv"  # make every kind of line: Fail, ExpectedFail, UnexpectedImprovement(Pass)
    rows = read_rows(failures)
    base.write_text(f"{rows[0][1]},Fail\n" + "".join(f"{r.name},Fail\n" for r in _passing(pack)[:2]))
    assert main(["run", str(pack), "--quiet", "--backend", f"mutant:{MUTANT}", "--baseline", str(base)]) == 1
    for name in ("failures.csv", "results.csv"):
        path = pack / f"results-mutant-{MUTANT}" / name
        text = path.read_text()
        for line in text.splitlines():
            m = DEQP_LINE.match(line)
            assert m and m.group(2) in DEQP_RUNNER_STATUSES, line
        back = [Row(n, s) for _, n, s in read_rows(path)]
        assert {r.status for r in back} >= ({D.ImprovedPass, D.Fail} if name == "failures.csv" else {D.ExpectedFail})
        if name == "failures.csv":
            assert format_failures(back) == text  # read back and written again: the same bytes


def _passing(pack: Path) -> list[Row]:
    return [Row(n, s) for _, n, s in read_rows(pack / f"results-mutant-{MUTANT}" / "results.csv") if s is D.Pass]


def test_results_csv_round_trips_every_status(tmp_path: Path) -> None:
    rows = [Row(f"c.case_{i:02d}", s, 0.5) for i, s in enumerate(D)]
    path = tmp_path / "results.csv"
    path.write_text(format_results(rows))
    assert all(DEQP_LINE.match(line) for line in path.read_text().splitlines())
    assert [(n, s) for _, n, s in read_rows(path)] == [(r.name, r.status) for r in rows]


def test_old_unexpected_pass_lines_still_read_but_are_never_written(tmp_path: Path) -> None:
    base = tmp_path / "old.csv"
    base.write_text(f"{A},UnexpectedPass\n")
    assert read_rows(base) == [(1, A, D.UnexpectedPass)]
    assert with_baseline(D.Pass, D.UnexpectedPass) is D.Pass  # it lists no failure
    assert D.UnexpectedPass not in {with_baseline(r, l) for r in FROM_CTSGEN.values() for l in D}  # from any verdict


# -- 4: a run that judged no case ----------------------------------------------------------

@pytest.mark.parametrize("argv", [["--include", "ZZZ"], ["--exclude", "."], ["--fraction", "1000",
                                                                             "--fraction-start", "999"]])
def test_an_empty_selection_exits_2_and_keeps_the_previous_results(pack: Path, capsys, argv: list[str]) -> None:
    assert main(["run", str(pack), "--quiet"]) == 0
    kept = {p: p.read_bytes() for p in pack.rglob("results*") if p.is_file()}
    capsys.readouterr()
    line = fails_with(capsys, ["run", str(pack), "--quiet", *argv])
    assert "judged no case" in line and "selected 0 of 24" in line
    assert {p: p.read_bytes() for p in pack.rglob("results*") if p.is_file()} == kept


def test_a_pack_without_cases_exits_2(pack: Path, capsys) -> None:
    manifest = json.loads((pack / "manifest.json").read_text())
    manifest.update(cases=[], count=0, variants={})
    (pack / "manifest.json").write_text(json.dumps(manifest))
    shutil.rmtree(pack / "cases")
    (pack / "cases").mkdir()
    line = fails_with(capsys, ["run", str(pack), "--quiet"])
    assert "judged no case" in line and "the pack has no case" in line
    assert not list(pack.glob("results*"))


@pytest.mark.parametrize("content", ["", "HEADER", "not json at all\n", "\ufeff\r\n"])
def test_report_on_a_file_without_case_records_exits_2(tmp_path: Path, capsys, content: str) -> None:
    jsonl = tmp_path / "r.jsonl"
    if content == "HEADER":
        _results(jsonl)
    else:
        jsonl.write_text(content)
    (tmp_path / "base.csv").write_text(f"{A},Fail\n")
    line = fails_with(capsys, ["report", str(jsonl), "--baseline", str(tmp_path / "base.csv")])
    assert "judged no case" in line


# -- 5, 6, 7: masked runs ---------------------------------------------------------------------

@pytest.mark.parametrize("run, listed, shown", [
    ("Timeout", "ExpectedFail", "Timeout"),                       # 5: a hang is no expected failure
    ("NotSupported", "Fail", "UnexpectedImprovement(Skip)"),      # 6: an expected failure gone as a Skip
    ("Crash", "Fail", "Crash"),
    ("Fail", "Crash", "UnexpectedImprovement(Fail)"),             # 7: a Crash that now Fails
])
def test_a_masked_failure_is_shown_and_exits_1(tmp_path: Path, capsys, run: str, listed: str, shown: str) -> None:
    jsonl = _results(tmp_path / "r.jsonl", (A, run), (B, "Pass"))
    code, out = _report(capsys, jsonl, f"{A},{listed}")
    assert code == 1 and f"  {shown}: {A}" in out


def test_improvements_pass_is_a_flag_and_never_covers_a_skip(tmp_path: Path, capsys) -> None:
    jsonl = _results(tmp_path / "r.jsonl", (A, "Fail"), (B, "Pass"), (C, "NotSupported"))
    assert _report(capsys, jsonl, f"{A},Crash", f"{B},Fail", flags=("--improvements-pass",))[0] == 0
    code, out = _report(capsys, jsonl, f"{A},Crash", f"{C},Fail", flags=("--improvements-pass",))
    assert code == 1 and f"UnexpectedImprovement(Skip): {C}" in out


def test_a_flakes_regex_is_a_known_flake_and_a_rerun_a_flake() -> None:
    exp = load_expectations()
    exp.flakes.append(re.compile("case_01"))
    assert classify(Outcome(A, Status.Fail), exp) is D.KnownFlake
    assert classify(Outcome(B, Status.Fail, reruns=(Status.Pass,)), exp) is D.Flake
    assert classify(Outcome(B, Status.Fail), exp) is D.Fail


# -- 8: a byte-order mark or CRLF kills no line ---------------------------------------------

BOM = "\ufeff"


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_every_line_based_input_reads_a_bom_and_crlf(tmp_path: Path, eol: str) -> None:
    def write(name: str, *lines: str) -> Path:
        path = tmp_path / name
        path.write_bytes((BOM + eol.join(lines) + eol).encode())
        return path

    assert [p.pattern for p in read_regexes(write("skips.txt", "clamp_repeat_mirrored", "# c", "x$"))] == [
        "clamp_repeat_mirrored", "x$"]
    assert [p.pattern for p in read_regexes(write("flakes.txt", "case_01"))] == ["case_01"]
    assert read_rows(write("base.csv", f"{A},Fail", f"{B},Crash")) == [(1, A, D.Fail), (2, B, D.Crash)]
    exp = load_expectations([write("dev.csv", "deviation:mirror-as-repeat,Fail")])
    assert exp.deviations == {"mirror-as-repeat": D.Fail}
    assert read_caselist(write("list.txt", A, f"{B},Fail,0.1")) == [A, B]
    # two files pasted together: the second's BOM starts a line in the middle
    assert read_caselist(write("cat.txt", A, BOM + B)) == [A, B]


def test_a_skips_file_with_a_bom_skips(pack: Path, tmp_path: Path) -> None:
    skips = tmp_path / "s.txt"
    skips.write_bytes(b"\xef\xbb\xbfclamp_repeat_mirrored\r\n")
    assert main(["run", str(pack), "--quiet", "--skips", str(skips)]) == 0
    names = [json.loads(ln).get("name") for ln in (pack / "results-reference.jsonl").read_text().splitlines()]
    assert names[1:] and not [n for n in names[1:] if "clamp_repeat_mirrored" in n]


# -- 9: report agrees with run on deviation rules ---------------------------------------------

@pytest.mark.slow
def test_report_and_run_agree_on_a_deviation_rule(pack: Path, tmp_path: Path, capsys) -> None:
    rule = tmp_path / "b_dev.csv"
    rule.write_text(f"deviation:{MUTANT},Fail\n")
    jsonl = pack / f"results-mutant-{MUTANT}.jsonl"
    assert main(["run", str(pack), "--quiet", "--backend", f"mutant:{MUTANT}"]) == 1
    # the run had no such rule, so its records cannot tell: a refusal, never a false Fail
    line = fails_with(capsys, ["report", str(jsonl), "--baseline", str(rule)])
    assert f"did not check deviation:{MUTANT}" in line
    assert main(["run", str(pack), "--quiet", "--backend", f"mutant:{MUTANT}", "--baseline", str(rule)]) == 0
    run_out = capsys.readouterr().out
    assert main(["report", str(jsonl), "--baseline", str(rule)]) == 0
    ci = lambda text: [ln for ln in text.splitlines() if ln.startswith("ci: ")]  # noqa: E731
    assert ci(capsys.readouterr().out) == ci(run_out)


# -- 12: re: rules holding commas ---------------------------------------------------------------

def test_a_regex_rule_may_hold_commas(tmp_path: Path) -> None:
    base = tmp_path / "rules.csv"
    base.write_text("re:^tensor_layout\\.load\\.[a-c]{1,3}\\.,Fail\nre:x{2,},Crash,0.5\n")
    exp = load_expectations([base])
    assert [(p.pattern, s) for p, s in exp.patterns] == [("^tensor_layout\\.load\\.[a-c]{1,3}\\.", D.Fail),
                                                         ("x{2,}", D.Crash)]
    assert classify(Outcome(A, Status.Fail), exp) is D.ExpectedFail


# -- the driver's version as its vendor spells it -------------------------------------------

def test_the_header_spells_the_driver_version_per_vendor() -> None:
    # NVIDIA 10.8.8.6 bits: 580 << 22 = 2432696320, 159 << 14 = 2605056, 4 << 6 = 256; their sum:
    assert 2432696320 + 2605056 + 256 == 2435301632
    assert driver_version_name(2435301632, 0x10DE) == "580.159.4"
    # Mesa's VK_MAKE_VERSION, 10.10.12 bits: 26 << 22 = 109051904, 2 << 12 = 8192, and 6
    assert 109051904 + 8192 + 6 == 109060102
    for vendor in (0x10005, 0x1002, 0x8086):
        assert driver_version_name(109060102, vendor) == "26.2.6"
    assert driver_version_name(109060102, 0x13B5) is None  # a packing not known: the raw number only
    header = make_header("0" * 64, "vulkan", "NVIDIA H200", 2435301632, (), None, vendor_id=0x10DE)
    assert header["device"] == {"name": "NVIDIA H200", "driver_version": 2435301632,
                                "driver_version_name": "580.159.4"}
    assert "(driver 580.159.4)" in describe_header(header)


# -- fuzz --baseline says what the baseline absorbed ------------------------------------------

@pytest.mark.slow
def test_fuzz_ends_with_what_each_baseline_rule_absorbed(tmp_path: Path, capsys) -> None:
    base = tmp_path / "b.csv"
    base.write_text(f"deviation:{MUTANT},Fail\nre:^never{{1,3}}\\.,Fail\n")
    argv = ["fuzz", "--backend", f"mutant:{MUTANT}", "--family", "tensor-layout", "--max-examples", "20",
            "--database", "none", "--repro-dir", str(tmp_path / "r")]
    assert main([*argv, "--baseline", str(base)]) == 0
    tail = capsys.readouterr().out.splitlines()
    at = tail.index("absorbed by the expectations:")
    counted = dict(re.fullmatch(r"  (\S+): (\d+).*", ln).groups() for ln in tail[at + 1:])
    assert int(counted[f"deviation:{MUTANT}"]) > 0 and counted["re:^never{1,3}\\."] == "0"
    base.write_text("re:clamp_repeat_mirrored,Fail\n")  # a rule the fuzzer's findings meet as failures
    assert main([*argv, "--baseline", str(base)]) == 0
    assert re.search(r"  re:clamp_repeat_mirrored: [1-9]\d* failing example\(s\) passed over",
                     capsys.readouterr().out)


# -- probes of the hostile pass that found something ------------------------------------------

def test_an_empty_regex_rule_is_refused_not_a_rule_for_every_case(tmp_path: Path, capsys) -> None:
    jsonl = _results(tmp_path / "r.jsonl", (A, "Fail"))
    (tmp_path / "e.csv").write_text("re:,Fail\n")
    line = fails_with(capsys, ["report", str(jsonl), "--baseline", str(tmp_path / "e.csv")])
    assert "e.csv:1: 're:' with an empty regex" in line


@pytest.mark.parametrize("argv", [["report", "R"], ["report", "R", "R"], ["run", "PACK"]])
def test_improvements_pass_without_a_baseline_is_refused(pack: Path, tmp_path: Path, capsys, argv) -> None:
    jsonl = _results(tmp_path / "r.jsonl", (A, "Fail"))
    argv = [str(jsonl) if a == "R" else str(pack) if a == "PACK" else a for a in argv]
    line = fails_with(capsys, [*argv, "--improvements-pass"])
    assert "--improvements-pass" in line and "--baseline" in line
    assert not list(pack.glob("results*"))


@pytest.mark.parametrize("record, says", [('{"name": "x.case_9", "status": "Bogus"}', "'Bogus' is not a valid"),
                                          ('{"name": 5, "status": "Fail"}', "its name 5 is no string")])
def test_a_whole_record_no_run_wrote_is_refused_even_last(tmp_path: Path, capsys, record: str, says: str) -> None:
    """Only a torn (unparsable) last line is passed over; a whole record that is no verdict was
    skipped silently (the run passed) or ended in a traceback (a flakes regex on a number)."""
    jsonl = _results(tmp_path / "r.jsonl", (A, "Pass"))
    jsonl.write_text(jsonl.read_text() + record + "\n")
    (tmp_path / "fl.txt").write_text("x\n")
    (tmp_path / "b.csv").write_text(f"{A},Fail\n")
    line = fails_with(capsys, ["report", str(jsonl), "--baseline", str(tmp_path / "b.csv"),
                               "--flakes", str(tmp_path / "fl.txt")])
    assert says in line and "r.jsonl:3:" in line


@pytest.mark.parametrize("kind", ["jsonl", "txt"])
def test_report_reads_results_files_saved_with_a_bom_and_crlf(tmp_path: Path, kind: str) -> None:
    jsonl = _results(tmp_path / "r.jsonl", (A, "Pass"), (B, "Fail"))
    header = load_results(jsonl).header
    text = jsonl.read_text() if kind == "jsonl" else format_cts(load_results(jsonl).verdicts, "t", header)
    saved = tmp_path / f"saved.{kind}"
    saved.write_bytes((BOM + text.replace("\n", "\r\n")).encode())
    read = load_results(saved)  # before: line 1 (BOM + header) read as a case, "unknown status"
    assert read.header == header and {n: v.status.value for n, v in read.verdicts.items()} == {A: "Pass", B: "Fail"}
    if kind == "jsonl":
        assert read_header(saved) == header


def test_a_missing_case_is_never_excused_by_a_baseline(tmp_path: Path) -> None:
    """deqp-runner's with_baseline never sees a Missing (``unreachable!``): it fails the run whatever
    the baseline lists (ctsgen used to turn a listed Missing into ExpectedFail)."""
    from ctsgen.results.expectations import judge_outcomes

    exp = load_expectations([_write(tmp_path / "b.csv", f"{A},Missing\n")])
    verdict = judge_outcomes([], exp, missing=[A])
    assert [r.status for r in verdict.rows] == [D.Missing] and not verdict.ok


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_fuzz_judges_again_only_cases_whose_expectation_a_deviation_moved() -> None:
    import numpy as np

    from ctsgen.core.family import CaseData
    from ctsgen.mutants.deviations import moved

    base = CaseData(np.zeros(1, np.uint32), [np.zeros(4, np.uint8)], [np.arange(4, dtype=np.uint8), None],
                    [None, None])
    same = CaseData(base.params, base.initial, [np.arange(4, dtype=np.uint8), None], None)
    assert not moved(base, base) and not moved(base, same)
    assert moved(base, CaseData(base.params, base.initial, [np.arange(1, 5, dtype=np.uint8), None], None))
    assert moved(base, CaseData(base.params, base.initial, base.expected, [np.ones(4), None]))


def test_the_plugins_improvements_pass_without_a_baseline_is_a_usage_error(pytester: pytest.Pytester,
                                                                          pristine: Path) -> None:
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pristine), "--ctsgen-improvements-pass")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert any("--improvements-pass without --baseline" in ln for ln in res.errlines + res.outlines)
