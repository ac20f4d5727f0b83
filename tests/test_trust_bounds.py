"""Inputs that could inject lines, options without a bound, and the smaller items of the CI-trust pass.

Each test here failed before its fix: a case name holding ',' or a newline (edited into
manifest.json and case.json) became its own line of results.csv; ``generate --jobs 100000``
started a process per job; ``--count`` and ``--flake-retries`` had no bound; the plugin took
``--ctsgen-flake-retries -1``; campaign.json took ``timeout_s`` 0 or -1; ``repro --out /``
blamed the source pack; replay lines were not shell-quoted; docs/ci.md named a rule
expectations/lavapipe-26.csv does not hold.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

import ctsgen.pack.workers
from ctsgen.campaign.store import CampaignConfig
from ctsgen.cli import main
from ctsgen.pack.generate import MAX_COUNT
from ctsgen.repro import replay_command
from ctsgen.runner.options import MAX_FLAKE_RETRIES
from one_line_errors import fails_with

REPO = Path(__file__).resolve().parents[1]
PACK_COUNT = 3
pytest_plugins = ["pytester"]


def _rename_first_case(pack: Path, new: str) -> None:
    """Edit the first case's name into manifest.json and its case.json, as a hostile user would."""
    m = json.loads((pack / "manifest.json").read_text())
    entry = m["cases"][0]
    case_json = pack / entry["case"]
    rec = json.loads(case_json.read_text())
    entry["name"] = rec["name"] = new
    (pack / "manifest.json").write_text(json.dumps(m))
    case_json.write_text(json.dumps(rec))


# -- item 11 ------------------------------------------------------------------------------

@pytest.mark.parametrize("bad, rule", [(",", "','"), ("\n", "'\\n'"), ("\r", "'\\r'"), (" ", "' '"),
                                       ("\x00", "'\\x00'"), ("\u2028", "'\\u2028'")])
def test_a_case_name_that_would_break_a_csv_line_is_refused_when_the_pack_is_read(
        pack: Path, capsys, bad: str, rule: str) -> None:
    name = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    _rename_first_case(pack, f"{name}{bad}x,Pass")
    line = fails_with(capsys, ["run", str(pack), "--quiet"])
    assert rule in line and "case name" in line and "manifest.json" in line
    assert not (pack / "results-reference").exists()


def test_a_case_name_read_as_a_baseline_comment_is_refused(pack: Path, capsys) -> None:
    _rename_first_case(pack, "#x")
    assert "starts with '#'" in fails_with(capsys, ["run", str(pack), "--quiet"])


# -- items 13 and 14 ---------------------------------------------------------------------

@pytest.mark.slow
def test_jobs_start_no_more_processes_than_the_machine_has_cores(tmp_path: Path, monkeypatch,
                                                                 session_spirv_cache: Path, capsys) -> None:
    started: list[int] = []  # the processes of each pool generate starts
    real = ctsgen.pack.workers.WorkerPool.__init__

    def counting(self, processes, context):
        started.append(processes)
        real(self, processes, context)

    monkeypatch.setattr(ctsgen.pack.workers.WorkerPool, "__init__", counting)
    monkeypatch.setattr(ctsgen.pack.workers.os, "cpu_count", lambda: 2)
    assert main(["generate", "--count", "4", "--jobs", "100000", "--out", str(tmp_path / "p")]) == 0
    assert started and max(started) <= 2
    assert "2 jobs" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["generate", "--count", "1000000000"],
                                  ["generate", "--count", str(MAX_COUNT + 1)],
                                  ["generate", "--hazardous-count", "1000000000"],
                                  ["run", "--flake-retries", "1000000000"],
                                  ["run", "--flake-retries", str(MAX_FLAKE_RETRIES + 1)],
                                  ["run", "--flake-retries", "-1"]])
def test_counts_without_a_bound_are_refused(capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert argv[1] in err and "a whole number from" in err


@pytest.mark.parametrize("value", ["-1", str(MAX_FLAKE_RETRIES + 1)])
def test_the_plugin_refuses_flake_retries_out_of_bounds(pytester: pytest.Pytester, value: str) -> None:
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-flake-retries", value)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert "--ctsgen-flake-retries" in res.stderr.str() and "a whole number from 0" in res.stderr.str()


# -- item 17 ------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [("timeout_s", 0), ("timeout_s", -1), ("timeout_s", float("nan")),
                                          ("time_s", 0)])
def test_campaign_json_refuses_a_wait_that_is_not_positive(field: str, value: float) -> None:
    with pytest.raises(TypeError, match=field):
        CampaignConfig.from_json({"families": ["tensor-layout"], field: value})


def test_repro_into_the_filesystem_root_names_the_root(pack: Path, capsys) -> None:
    name = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    line = fails_with(capsys, ["repro", str(pack), name, "--out", "/", "--force"])
    assert "filesystem root" in line and "source pack" not in line


def test_repro_over_a_folder_holding_its_source_pack_says_so(pack: Path, capsys) -> None:
    name = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    line = fails_with(capsys, ["repro", str(pack), name, "--out", str(pack.parent), "--force"])
    assert "holds the source pack" in line


@pytest.mark.parametrize("where", ["sp ace/rp", "it's/rp", "a;b/$x"])
def test_replay_lines_run_as_pasted(where: str) -> None:
    line = replay_command(Path(where), "mutant:a b", ["x;y"])
    assert shlex.split(line) == ["ctsgen", "run", where, "--backend", "mutant:a b", "--expect-deviation", "x;y"]


def test_the_printed_replay_line_of_repro_is_quoted(pack: Path, tmp_path: Path, capsys) -> None:
    name = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    out = tmp_path / "sp ace" / "rp"
    assert main(["repro", str(pack), name, "--out", str(out), "--backend", "reference"]) == 0
    printed = capsys.readouterr().out.split("replay: ", 1)[1].strip()
    assert shlex.split(printed)[2] == str(out)
    report = (out / "REPORT.md").read_text()
    assert shlex.split(re.search(r"^ctsgen run .*$", report, re.M).group(0))[2] == str(out)


def test_docs_ci_names_the_rules_the_shipped_expectations_hold() -> None:
    doc = (REPO / "docs" / "ci.md").read_text()
    section = doc.split("### Shipped expectations", 1)[1].split("\n## ", 1)[0]
    current = None
    for row in re.findall(r"^\|(.*)\|$", section, re.M)[2:]:
        cells = [c.strip() for c in row.split("|")] if "\\|" not in row else \
            [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]
        current = cells[0].strip("`") or current
        rule = cells[-1].strip("`")
        rules = [ln.strip() for ln in (REPO / current).read_text().splitlines() if ln.strip()
                 and not ln.startswith("#")]
        assert rule in rules, (current, rule, rules)
    assert "lands in the catalogue" not in doc  # lavapipe's mutant is catalogued
