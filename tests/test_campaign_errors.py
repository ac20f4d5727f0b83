"""Campaign inputs and states that must end in one line with exit 2 (or be refused) instead of a
traceback, a directory left behind, or a wrong figure; workers that end with their parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctsgen.campaign.report import status_text
from ctsgen.campaign.store import CampaignConfig, CampaignDir, append
from ctsgen.cli import main

CTSGEN = [sys.executable, "-m", "ctsgen", "campaign"]


def one_line_exit_2(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert err.startswith("ctsgen: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("field,value", [("workers", "two"), ("families", "tensor-layout"), ("time_s", -5),
                                         ("devices", [0, "x"]), ("max_batch", True)])
def test_a_configuration_field_of_the_wrong_type_is_one_line(tmp_path: Path, capsys, field: str, value) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], time_s=5))
    path = cdir.root / "campaign.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), field: value}))
    err = one_line_exit_2(["campaign", "resume", str(cdir.root)], capsys)
    assert field in err and "campaign.json" in err


@pytest.mark.parametrize("action", ["status", "report"])
def test_a_findings_file_that_is_not_utf8_is_one_line(tmp_path: Path, capsys, action: str) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"]))
    cdir.findings("h0-w0").parent.mkdir(parents=True)
    cdir.findings("h0-w0").write_bytes(b'{"bucket": "x"}\n\xff\xfe not text\n{"bucket": "y"}\n')
    err = one_line_exit_2(["campaign", action, str(cdir.root)], capsys)
    assert "h0-w0.jsonl" in err and "UTF-8" in err


def test_a_line_torn_inside_a_character_by_a_hard_stop_is_skipped(tmp_path: Path) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"]))
    cdir.findings("h0-w0").parent.mkdir(parents=True)
    cdir.findings("h0-w0").write_bytes(b'{"bucket": "x", "name": "a"}\n{"title": "\xc3')
    assert cdir.all_findings() == [{"bucket": "x", "name": "a"}]


@pytest.mark.parametrize("argv", [["--devices", "x"], ["--devices", "0,,1"], ["--devices", "-1"],
                                  ["--time", "0"], ["--time", "-10"], ["--workers", "0"], ["--max-batch", "0"],
                                  ["--expect-deviation", "no-such-mutant"]])
def test_bad_start_options_are_one_line_and_create_nothing(tmp_path: Path, capsys, argv: list[str]) -> None:
    root = tmp_path / "c"
    one_line_exit_2(["campaign", "start", str(root), "--family", "tensor-layout", *argv], capsys)
    assert not root.exists()


def test_the_budget_after_resume_with_time_is_what_was_spent_plus_that_time(tmp_path: Path) -> None:
    """A 30 s campaign resumed with --time 8 after 40 s spent: its budget is now 48 s, not 30 s."""
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], time_s=30))
    j = cdir.journal("h0-w0")
    append(j, {"event": "begin", "round": 0, "seed": 0, "t": 1.0},
           {"event": "done", "round": 0, "cases": {"tensor-layout": 300}, "examples": 5, "wall_s": 40.0, "t": 41})
    cdir.add_session({"kind": "start", "began": 0.0, "ended": 41.0, "budget_s": 30.0, "spent_before": 0.0})
    append(j, {"event": "begin", "round": 1, "seed": 1, "t": 50.0},
           {"event": "done", "round": 1, "cases": {"tensor-layout": 80}, "examples": 2, "wall_s": 8.0, "t": 58})
    cdir.add_session({"kind": "resume", "began": 50.0, "ended": 58.0, "budget_s": 8.0, "spent_before": 40.0})
    text = status_text(cdir)
    assert "time spent 0h00m48s of 0h00m48s" in text, text
    assert "throughput: 8 cases/s over the time spent" in text  # 380 cases / 48 s
    assert "last session: 80 cases in 0h00m08s of wall time, 10 cases/s" in text


def test_status_after_the_end_gives_the_session_throughput_not_a_partial_minute(tmp_path: Path) -> None:
    """The H100 campaign's status said "last minute: 12 cases/s" after 730 cases/s: the last minute
    bin held a few seconds."""
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], time_s=65))
    j = cdir.journal("h0-w0")
    append(j, {"event": "begin", "round": 0, "seed": 0, "t": 1000.0},
           {"event": "progress", "round": 0, "cases": {"tensor-layout": 60000}, "wall_s": 60.0, "t": 1060.0},
           {"event": "done", "round": 0, "cases": {"tensor-layout": 61000}, "wall_s": 61.0, "t": 1061.0})
    cdir.add_session({"kind": "start", "began": 1000.0, "ended": 1061.0, "budget_s": 65.0, "spent_before": 0.0})
    text = status_text(cdir)
    assert "throughput: 1000 cases/s" in text and "1000 cases/s" in text.splitlines()[-3], text
    assert "last minute" not in text


@pytest.mark.slow
def test_a_worker_that_fails_at_start_is_not_reported_as_budget_spent(tmp_path: Path) -> None:
    """The session finds the backend, but it fails to open in the workers (a device the host lacks)."""
    root = tmp_path / "c"
    env = {**os.environ, "CTSGEN_TEST_FAIL_IN_WORKER": "1"}
    done = subprocess.run([*CTSGEN, "start", str(root), "--family", "tensor-layout", "--workers", "2",
                           "--backend", "tests.planted_device:FailsInWorker", "--time", "30"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert "budget spent" not in done.stdout and "2 of 2 worker(s) failed" in done.stdout, done.stdout
    assert done.returncode == 2 and CampaignDir(root).sessions()[-1]["failed_workers"] == ["h0-w0", "h0-w1"]


def test_a_second_session_is_refused_while_one_holds_the_campaign(tmp_path: Path, capsys) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], time_s=30))
    with cdir.session_lock():
        err = one_line_exit_2(["campaign", "resume", str(cdir.root)], capsys)
    assert "another session" in err and f"pid {os.getpid()}" in err


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    root = tmp_path / "c"
    parent = subprocess.Popen([*CTSGEN, "start", str(root), "--family", "tensor-layout", "--workers", "2",
                               "--time", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cdir = CampaignDir(root)
    deadline = time.monotonic() + 120
    while len([p for p in (root / "journal").glob("*.jsonl")]) < 2:
        assert time.monotonic() < deadline and parent.poll() is None, "no worker began a round"
        time.sleep(0.2)
    workers = [int(line.split()[0]) for line in subprocess.run(
        ["pgrep", "-a", "-P", str(parent.pid)], capture_output=True, text=True).stdout.splitlines()
        if "campaign worker" in line]
    assert len(workers) == 2
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 60
    while any(_alive(w) for w in workers):
        assert time.monotonic() < deadline, "workers still fuzzing 60 s after their parent was killed"
        time.sleep(0.2)
    assert all(r["complete"] for r in cdir.rounds())  # each ended its round as SIGTERM ends it


@pytest.mark.slow
@pytest.mark.parametrize("dispatch_s,says", [(0, "still closing"), (25, "past the deadline (a pipeline build")])
def test_a_session_ends_within_seconds_of_its_budget_whatever_its_workers_are_doing(
        tmp_path: Path, dispatch_s: int, says: str) -> None:
    """The planted device's close takes a minute, and with ``dispatch_s`` every dispatch 25 s (a
    pipeline build in flight at the deadline): the round is ended OVERTIME_S after the deadline,
    the backend's process stopped CLOSE_BY_S after it, where the dispatch's own bound (30 s) and
    the close's (30 s) would have run half a minute and more past the budget."""
    from ctsgen.fuzz.deadline import CLOSE_BY_S

    root, budget = tmp_path / "c", 12.0
    env = {**os.environ, "CTSGEN_TEST_DISPATCH_S": str(dispatch_s)}
    done = subprocess.run([*CTSGEN, "start", str(root), "--family", "tensor-layout", "--workers", "1",
                           "--backend", "tests.planted_device:SlowToEnd", "--time", str(budget)],
                          capture_output=True, text=True, timeout=150, env=env)
    session = CampaignDir(root).sessions()[-1]
    assert says in done.stdout and "budget spent" in done.stdout, done.stdout
    assert session["ended"] - session["began"] <= budget + CLOSE_BY_S + 2.0, (session, done.stdout)
