"""CTS-style results files and `ctsgen report`: regressions, fixes, new and removed cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctsgen.cli import main
from ctsgen.results.report import compare
from ctsgen.results.results_file import ResultsError, Verdict, format_cts, load_results
from ctsgen.core.verdict import Status


def _jsonl(path: Path, rows: dict[str, tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"name": n, "status": s, "detail": d}) + "\n" for n, (s, d) in rows.items()))
    return path


def test_cts_text_round_trips_and_quotes_details_with_commas(tmp_path: Path) -> None:
    results = {"b.case": Verdict(Status.Fail, 'elements 1, 2 differ: "x"'), "a.case": Verdict(Status.Pass)}
    text = format_cts(results, "ctsgen results: pack P, backend B")
    assert text.splitlines() == ["# ctsgen results: pack P, backend B", "a.case,Pass,",
                                 'b.case,Fail,"elements 1, 2 differ: ""x"""']
    (tmp_path / "r.txt").write_text(text)
    assert load_results(tmp_path / "r.txt").verdicts == results


def test_compare_classifies_every_transition() -> None:
    a = {"reg": Verdict(Status.Pass), "fix": Verdict(Status.Timeout), "chg": Verdict(Status.Pass),
         "same": Verdict(Status.Fail), "gone": Verdict(Status.Pass), "ns": Verdict(Status.NotSupported)}
    b = {"reg": Verdict(Status.Fail), "fix": Verdict(Status.Pass), "chg": Verdict(Status.NotSupported),
         "same": Verdict(Status.Fail), "new": Verdict(Status.Pass), "ns": Verdict(Status.DeviceLost)}
    c = compare(a, b)
    assert [r[0] for r in c.regressions] == ["ns", "reg"]
    assert [r[0] for r in c.fixes] == ["fix"]
    assert [r[0] for r in c.changed] == ["chg"]
    assert [n for n, _ in c.new] == ["new"] and [n for n, _ in c.removed] == ["gone"] and c.unchanged == 1


def test_run_writes_cts_text_and_report_finds_an_injected_regression(
        tmp_path: Path, session_spirv_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "pack"
    assert main(["generate", "--count", "12", "--seed", "3", "--out", str(pack)]) == 0
    assert main(["run", str(pack), "--quiet"]) == 0
    before = pack / "results-reference.txt"
    lines = [ln for ln in before.read_text().splitlines() if not ln.startswith("#")]
    assert len(lines) == 12 and all(ln.split(",")[1] == "Pass" for ln in lines)
    # the later run: one case regresses (as JSON lines, the other format), one disappears
    names = sorted(load_results(before).verdicts)
    rows = {n: ("Pass", "") for n in names[1:]}
    rows[names[1]] = ("Fail", "3 of 64 elements of 'output' differ")
    after = _jsonl(tmp_path / "after.jsonl", rows)
    capsys.readouterr()
    assert main(["report", str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert "1 regressions, 0 fixes" in out and f"{names[1]}: Pass -> Fail" in out
    assert f"removed:\n  {names[0]}: Pass" in out
    assert main(["report", str(before), str(before)]) == 0


def test_unreadable_results_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("# header\na.case,Passed,\n")
    with pytest.raises(ResultsError, match=r"r.txt:2: unknown status 'Passed'"):
        load_results(tmp_path / "r.txt").verdicts
