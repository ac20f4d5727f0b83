"""A hostile user's pass over every option and file of run, report, repro, fuzz, coverage, the
pytest plugin and campaign.json, after the CI-trust fixes: each test here failed before its fix.

``--results /`` ended in a traceback (exit 1); an empty ``--results`` or ``--csv-dir``
(``"$UNSET"``) silently wrote to the default place; a Ctrl-C while the command line loaded was a
traceback; ``repro --results`` without the case's record wrote a REPORT.md without it; ``report
--baseline`` passed a results file cut short, or a ``.partial``, on the cases it held; the plugin
deselected a caselist's name the pack lacks and passed, and let pytest write ``--junitxml`` over
its baseline; a device profile saved with a BOM was refused; ``--workers 100000`` (fuzz, campaign
start, campaign.json) started a process each; ``coverage --plot`` through a link replaced the pack's
manifest; a case name ``re:...`` or ``deviation:...`` came back from failures.csv as a rule; a
read-only ``--csv-dir`` failed only after every case ran; ``--baseline /dev/zero`` read until memory
ran out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from one_line_errors import fails_with

pytest_plugins = ["pytester"]

PACK_COUNT = 4


def no_results_written(pack: Path, where: Path) -> None:
    assert not list(pack.glob("results-*")) and not list(where.glob("*.jsonl*")), "a case ran before the refusal"


@pytest.mark.parametrize("given", [".", "/", ".."])
def test_a_results_path_that_names_no_file_is_refused_in_one_line(pack: Path, tmp_path: Path, capsys,
                                                                  monkeypatch, given: str) -> None:
    monkeypatch.chdir(tmp_path)
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", given])
    assert f"--results {given}" in line and "extension" in line
    no_results_written(pack, tmp_path)


@pytest.mark.parametrize("option", ["--results", "--csv-dir"])
def test_an_empty_output_path_is_refused_not_taken_for_the_default(pack: Path, tmp_path: Path, capsys,
                                                                   option: str) -> None:
    line = fails_with(capsys, ["run", str(pack), "--quiet", option, ""])
    assert option in line and "expected a path" in line
    no_results_written(pack, tmp_path)


# -- a Ctrl-C before the command runs -----------------------------------------------------------

#: ``python -m ctsgen --version`` with a Ctrl-C landing as module ``{0}`` is imported (a CI job
#: cancelled in the first second: the command line's imports, then the families' as the parser is built)
CTRL_C_AT_IMPORT = """
import runpy, sys
class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == {0!r}:
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlC())
sys.argv = ["ctsgen", "--version"]
{1}
"""

#: The two ways the command starts: ``python -m ctsgen``, and the installed ``ctsgen`` script
#: (pyproject.toml's entry point, which calls ``ctsgen.__main__:run``).
ENTRY_POINTS = {"python -m ctsgen": 'runpy.run_module("ctsgen", run_name="__main__")',
                "ctsgen script": "from ctsgen.__main__ import run; run()"}


@pytest.mark.slow
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("module", ["ctsgen.pack.generate", "ctsgen.families.cm2_convert"])
def test_a_ctrl_c_while_the_command_line_loads_is_one_line_not_a_traceback(module: str, entry: str) -> None:
    import os
    import subprocess
    import sys

    from one_line_errors import REPO

    done = subprocess.run([sys.executable, "-c", CTRL_C_AT_IMPORT.format(module, ENTRY_POINTS[entry])], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (done.returncode, done.stderr) == (130, "ctsgen: interrupted\n")


# -- repro --results --------------------------------------------------------------------------

@pytest.mark.parametrize("held", ["nothing", "other cases"])
def test_repro_refuses_a_results_file_without_the_cases_record(pack: Path, tmp_path: Path, capsys,
                                                              held: str) -> None:
    from ctsgen.cli import main

    names = [c["name"] for c in json.loads((pack / "manifest.json").read_text())["cases"]]
    results = tmp_path / "r.jsonl"
    if held == "nothing":
        results.write_text("")
    else:
        assert main(["run", str(pack), "--quiet", "--results", str(results), "--include", names[1]]) == 0
        capsys.readouterr()
    line = fails_with(capsys, ["repro", str(pack), names[0], "--out", str(tmp_path / "rp"), "--results",
                               str(results)])
    assert "no record" in line and names[0] in line
    assert not (tmp_path / "rp").exists()


# -- report --baseline on a results file that is not a run's whole record --------------------

def test_report_refuses_a_results_file_cut_short_rather_than_passing_its_first_cases(tmp_path: Path,
                                                                                    capsys) -> None:
    """A run puts its results file in place whole; one whose last line is torn was cut short on its
    way (an artifact download), and judging the cases before the cut passed the run."""
    from ctsgen.results.results_file import make_header

    header = make_header("0" * 64, "reference", "d", None, (), None)
    records = [{"name": f"x.case_{i}", "status": s, "detail": ""} for i, s in enumerate(["Pass", "Fail"])]
    whole = "".join(json.dumps(r) + "\n" for r in [header, *records])
    cut = tmp_path / "r.jsonl"
    cut.write_text(whole[:whole.rindex('"status"')])  # the Fail's record torn
    (tmp_path / "b.csv").write_text("")
    line = fails_with(capsys, ["report", str(cut), "--baseline", str(tmp_path / "b.csv")])
    assert "r.jsonl:3: not a ctsgen result record" in line


def test_report_refuses_an_interrupted_runs_partial_file(pack: Path, tmp_path: Path, capsys) -> None:
    from ctsgen.cli import main

    assert main(["run", str(pack), "--quiet", "--results", str(tmp_path / "r.jsonl")]) == 0
    partial = tmp_path / "r.jsonl.partial"
    partial.write_text("".join((tmp_path / "r.jsonl").read_text().splitlines(keepends=True)[:2]))  # one case
    (tmp_path / "b.csv").write_text("")
    capsys.readouterr()
    line = fails_with(capsys, ["report", str(partial), "--baseline", str(tmp_path / "b.csv")])
    assert "interrupted run" in line and "--resume" in line


# -- the pytest plugin's caselist ---------------------------------------------------------------

def test_the_plugin_fails_a_caselist_name_the_pack_lacks_as_run_does(pytester: pytest.Pytester, pack: Path,
                                                                    tmp_path: Path) -> None:
    """``ctsgen run --caselist`` judges a listed name the pack lacks Missing (exit 1); the plugin
    deselected the rest and passed, so a case gone from the pack went unnoticed."""
    name = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    caselist = tmp_path / "cases.txt"
    caselist.write_text(f"{name}\nx.case_gone\nx.case_gone\n")
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-caselist", str(caselist))
    res.assert_outcomes(passed=1, failed=1, deselected=PACK_COUNT - 1)
    res.stdout.fnmatch_lines(["*Missing: x.case_gone is listed in --ctsgen-caselist*"])


# -- generate --profile ---------------------------------------------------------------------------

def test_a_device_profile_saved_with_a_bom_and_crlf_reads_as_it_looks(tmp_path: Path) -> None:
    """A read-out saved by a Windows editor was refused at line 1 ('unrecognised line \\ufeff# ...')."""
    from ctsgen.device.profile import default_profile, load_profile

    shipped = Path(__file__).resolve().parents[1] / "ctsgen" / "device" / "profiles" / "nvidia-h100-driver580.txt"
    saved = tmp_path / "h100.txt"
    saved.write_bytes(b"\xef\xbb\xbf" + shipped.read_bytes().replace(b"\n", b"\r\n"))
    assert load_profile(saved) == default_profile()


# -- worker processes: a count is bounded before any starts -------------------------------------

@pytest.mark.parametrize("argv", [["fuzz", "--max-examples", "1", "--database", "none"],
                                  ["campaign", "start", "{tmp}/c", "--time", "1"]])
def test_workers_beyond_the_cores_are_refused_before_any_starts(tmp_path: Path, capsys, monkeypatch,
                                                                 argv: list[str]) -> None:
    """``--workers 100000`` started a process each (``generate --jobs`` was bounded, these were not)."""
    import ctsgen.campaign.run
    import ctsgen.fuzz.workers

    def no_fleet(*args, **kwargs):
        raise AssertionError("worker processes were started")

    for module in (ctsgen.fuzz.workers, ctsgen.campaign.run):
        monkeypatch.setattr(module, "Fleet", no_fleet)
    monkeypatch.setattr(ctsgen.fuzz.workers, "default_workers", lambda: 2)
    line = fails_with(capsys, [a.format(tmp=tmp_path) for a in argv] + ["--workers", "3"])
    assert "--workers" in line and "from 1 to 2" in line


@pytest.mark.parametrize("field, value", [("workers", 100000), ("host", -3), ("devices", [-1]),
                                          ("shrink_time_s", -1)])
def test_a_campaign_json_out_of_range_is_refused_on_resume(field: str, value: object) -> None:
    """A campaign.json edited to ``"workers": 100000`` started a process each on resume."""
    from ctsgen.campaign.store import CampaignConfig

    with pytest.raises(TypeError, match=f"field '{field}(\\[0\\])?' is -?[0-9]+, expected a whole number"):
        CampaignConfig.from_json({"families": ["tensor-layout"], field: value})


# -- coverage --plot ------------------------------------------------------------------------------

def test_coverage_never_writes_its_plot_over_a_file_of_the_pack_it_reads(pack: Path, tmp_path: Path,
                                                                         capsys) -> None:
    """A --plot link to the pack's manifest.json replaced the manifest with a PNG: the pack was gone."""
    pytest.importorskip("matplotlib")
    manifest = (pack / "manifest.json").read_bytes()
    plot = tmp_path / "link.png"
    plot.symlink_to(pack / "manifest.json")
    line = fails_with(capsys, ["coverage", str(pack), "--plot", str(plot)])
    assert "a file of the pack" in line
    assert (pack / "manifest.json").read_bytes() == manifest


# -- a case name a baseline reads as a rule -----------------------------------------------------

@pytest.mark.parametrize("prefix", ["re:(", "deviation:"])
def test_a_case_name_a_baseline_would_read_as_a_rule_is_refused_when_the_pack_is_read(pack: Path, capsys,
                                                                                     prefix: str) -> None:
    """failures.csv is the next baseline as it is: a case named ``re:(x`` or ``deviation:x`` (edited
    into the manifest) wrote a line the next run read as a rule and refused (a bad regex, an unknown
    deviation), so the round trip broke."""
    m = json.loads((pack / "manifest.json").read_text())
    entry = m["cases"][0]
    rec = json.loads((pack / entry["case"]).read_text())
    entry["name"] = rec["name"] = prefix + entry["name"]
    (pack / "manifest.json").write_text(json.dumps(m))
    (pack / entry["case"]).write_text(json.dumps(rec))
    line = fails_with(capsys, ["run", str(pack), "--quiet"])
    assert "holds ':'" in line and "case name" in line
    assert not list(pack.glob("results-*"))


@pytest.mark.parametrize("option", ["--ctsgen-baseline", "--ctsgen-caselist"])
def test_the_plugin_refuses_an_input_that_is_also_the_junit_report(pytester: pytest.Pytester, pack: Path,
                                                                   tmp_path: Path, option: str) -> None:
    """``--junitxml ci.csv --ctsgen-baseline ci.csv`` passed, and pytest replaced the baseline with its XML."""
    name = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    given = tmp_path / "ci.csv"
    given.write_text(f"{name},Fail\n" if option == "--ctsgen-baseline" else f"{name}\n")
    kept = given.read_text()
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), option, str(given),
                             f"--junitxml={given}")
    text = res.stdout.str() + res.stderr.str()
    assert res.ret == pytest.ExitCode.USAGE_ERROR and "is also --junitxml" in text, text
    assert given.read_text() == kept


# -- a CSV folder that takes no file --------------------------------------------------------------

def test_a_csv_folder_that_takes_no_file_is_refused_before_any_case(pack: Path, tmp_path: Path, capsys,
                                                                   monkeypatch) -> None:
    """``--csv-dir`` an existing folder on a read-only file system (or without write permission) ran
    every case, put the results file in place, then failed on the CSV files: exit 2 after the work,
    and the results file and the CSV files disagreeing."""
    import os

    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):  # what the kernel says to root on a read-only mount
        if Path(path).parent == folder and flags & os.O_CREAT:
            raise OSError(30, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(tmp_path / "r.jsonl"), "--csv-dir",
                               str(folder)])
    assert "cannot write there" in line and "ro" in line
    assert not (tmp_path / "r.jsonl").exists()


# -- an input without end -------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--baseline", "--skips", "--caselist"])
def test_an_input_without_end_is_refused_not_read_until_memory_runs_out(pack: Path, capsys, monkeypatch,
                                                                        option: str) -> None:
    """``--baseline /dev/zero`` read until the machine's memory ran out (a MemoryError traceback under a
    limit, the OOM killer without one). The bound is lowered here so that the test reads little."""
    import ctsgen.core.textlines

    monkeypatch.setattr(ctsgen.core.textlines, "MAX_BYTES", 1 << 16)
    line = fails_with(capsys, ["run", str(pack), "--quiet", option, "/dev/zero"])
    assert "/dev/zero" in line and "FileTooLarge" in line
    assert not list(pack.glob("results-*"))


def test_a_device_profile_without_end_is_refused(tmp_path: Path, capsys, monkeypatch) -> None:
    import ctsgen.device.profile

    monkeypatch.setattr(ctsgen.device.profile, "MAX_PROFILE_BYTES", 1 << 16)
    line = fails_with(capsys, ["generate", "--count", "2", "--profile", "/dev/zero", "--out", str(tmp_path / "g")])
    assert "/dev/zero: more than 65536 bytes" in line
