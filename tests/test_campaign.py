"""Campaigns: stopped by SIGTERM and resumed with no round repeated or lost, findings in buckets,
seeds that never overlap, and a report a person can read."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctsgen.campaign import CampaignError
from ctsgen.campaign.report import status_text, write_report
from ctsgen.campaign.run import worker_argv
from ctsgen.campaign.store import CampaignConfig, CampaignDir, append, round_seed
from ctsgen.cli import main
from tests.conftest import free_port

CTSGEN = [sys.executable, "-m", "ctsgen", "campaign"]
START = ["--family", "tensor-layout", "--family", "cm2-gemm", "--backend", "mutant:setdimension-floor",
         "--round-examples", "40", "--shrink-time", "3", "--workers", "1"]  # default: one per core


def wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def stopped_and_resumed(tmp_path_factory) -> tuple[CampaignDir, dict, str]:
    """A campaign stopped by SIGTERM after two rounds and a bucket, then resumed for 8 s."""
    root = tmp_path_factory.mktemp("campaign") / "c"
    cdir = CampaignDir(root)
    proc = subprocess.Popen([*CTSGEN, "start", str(root), *START, "--time", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:  # a campaign that ends early, or never gets there, fails with what it printed
        wait_for(lambda: proc.poll() is not None or
                 (len([r for r in cdir.rounds() if r["complete"]]) >= 2 and bool(cdir.buckets())), timeout=300)
    except AssertionError:
        proc.kill()
        proc.wait()
    assert proc.poll() is None, f"no two rounds and a bucket within 300 s: {proc.communicate()[0][-2000:]}"
    sent = time.time()
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    before = {"rounds": cdir.rounds(), "findings": cdir.all_findings(), "cases": cdir.cases_by_family(),
              "out": out, "code": proc.returncode, "sent": sent}
    resumed = subprocess.run([*CTSGEN, "resume", str(root), "--time", "8"], capture_output=True, text=True,
                             timeout=120)
    return cdir, before, resumed.stdout + resumed.stderr


@pytest.mark.slow
def test_sigterm_ends_the_round_in_progress_and_journals_it(stopped_and_resumed) -> None:
    cdir, before, _ = stopped_and_resumed
    assert before["code"] == 1 and "stopped by SIGTERM" in before["out"]  # findings: exit 1
    assert all(r["complete"] for r in before["rounds"])  # the round in progress was journalled, not lost
    # ... as stopped; unless the signal came between rounds (this test sends it just after it sees a
    # round done): then the last round was done before it, and no round was in progress to stop
    last = before["rounds"][-1]
    assert last.get("stopped") is True or last["t"] <= before["sent"], last
    assert cdir.sessions()[0]["stopped_by"] == "SIGTERM"
    assert "new bucket mutant:setdimension-floor" in before["out"]


@pytest.mark.slow
def test_resume_repeats_no_round_and_loses_none(stopped_and_resumed) -> None:
    cdir, before, out = stopped_and_resumed
    rounds = cdir.rounds()
    numbers = [r["round"] for r in rounds]
    assert numbers == list(range(len(numbers))) and len(numbers) > len(before["rounds"])
    assert len({r["seed"] for r in rounds}) == len(rounds)  # no seed fuzzed twice
    assert rounds[:len(before["rounds"])] == before["rounds"]  # the first session's work, untouched
    after = cdir.cases_by_family()
    new = sum(sum(r["cases"].values()) for r in rounds[len(before["rounds"]):])
    assert sum(after.values()) == sum(before["cases"].values()) + new and new > 0
    assert set(after) == {"tensor-layout", "cm2-gemm"}
    findings = cdir.all_findings()
    assert findings[:len(before["findings"])] == before["findings"]
    assert [s["kind"] for s in cdir.sessions()] == ["start", "resume"]


@pytest.mark.slow
def test_every_shape_of_the_deviation_is_one_bucket(stopped_and_resumed) -> None:
    cdir, _, _ = stopped_and_resumed
    findings = cdir.all_findings()
    assert len({f["name"] for f in findings}) >= 2  # several shapes...
    assert [b["key"] for b in cdir.buckets()] == ["mutant:setdimension-floor"]  # ...one bug
    b = cdir.buckets()[0]
    assert b["size"] == min(f["size"] for f in findings)  # the smallest repro is kept
    repro = cdir.bucket_dir(b["key"]) / "repro"
    # the replay line names where the repro lives, not the worker's scratch copy it was moved from
    assert f"ctsgen run {repro} --backend" in (repro / "REPORT.md").read_text()
    assert main(["run", str(repro), "--quiet", "--backend", "mutant:setdimension-floor",
                 "--results", str(cdir.root / "replay.jsonl")]) == 1


@pytest.mark.slow
def test_status_and_report(stopped_and_resumed, tmp_path: Path) -> None:
    cdir, _, _ = stopped_and_resumed
    text = status_text(cdir)
    assert "1 bucket(s)" in text and "tensor-layout" in text and "2 session(s)" in text
    md, page = write_report(cdir, tmp_path / "report")
    m, h = md.read_text(), page.read_text()
    total = sum(cdir.cases_by_family().values())
    for body in (m, h):
        assert "mutant:setdimension-floor" in body and "Cases per hour" in body and "Throughput" in body
        assert str(total) in body and "Dim x clampMode" in body  # tensor-layout's coverage table
    assert re.findall(r'src="([^"]*)"', h) and all(s.startswith("data:image/png;base64,")
                                                    for s in re.findall(r'src="([^"]*)"', h))
    assert "href=" not in h  # self-contained: nothing to fetch
    assert (tmp_path / "report" / "throughput.png").exists() and "![throughput](throughput.png)" in m


def test_a_round_cut_by_a_hard_stop_keeps_its_checkpoint_and_its_seed_is_not_reused(tmp_path: Path) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"]))
    j = cdir.journal("h0-w0")
    append(j, {"event": "begin", "round": 0, "seed": 0, "t": 1.0})
    append(j, {"event": "done", "round": 0, "cases": {"tensor-layout": 30}, "examples": 5, "wall_s": 2.0, "t": 3})
    append(j, {"event": "begin", "round": 1, "seed": 1, "t": 4.0})
    append(j, {"event": "progress", "round": 1, "cases": {"tensor-layout": 12}, "examples": 2, "wall_s": 1.0,
               "t": 5})
    with open(j, "a") as fh:
        fh.write('{"event": "progress", "round": 1, "cas')  # torn by the power going out
    assert cdir.next_round("h0-w0") == 2
    assert [r["complete"] for r in cdir.rounds()] == [True, False]
    assert cdir.cases_by_family() == {"tensor-layout": 42} and cdir.time_spent() == 3.0


def test_round_seeds_never_overlap_between_hosts_workers_and_rounds() -> None:
    seeds = {round_seed(7, h, w, r) for h in range(3) for w in range(4) for r in range(50)}
    assert len(seeds) == 3 * 4 * 50
    assert round_seed(7, 0, 0, 0) != round_seed(8, 0, 0, 0)
    with pytest.raises(CampaignError, match="workers per host"):
        round_seed(0, 0, 256, 0)


def test_workers_take_the_devices_in_turn(tmp_path: Path) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cfg = CampaignConfig(families=["tensor-layout"], workers=3, devices=[0, 1])
    argv = [worker_argv(cdir, cfg, k, 60.0) for k in range(3)]
    assert [a[a.index("--device") + 1] for a in argv] == ["0", "1", "0"]
    assert [a[a.index("--index") + 1] for a in argv] == ["0", "1", "2"]


def test_start_refuses_an_existing_campaign_and_resume_a_missing_one(tmp_path: Path, capsys) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"]))
    with pytest.raises(SystemExit) as exc:
        main(["campaign", "start", str(cdir.root), "--time", "1"])
    assert exc.value.code == 2 and "campaign resume" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["campaign", "resume", str(tmp_path / "nothing")])
    assert exc.value.code == 2 and "campaign start" in capsys.readouterr().err


@pytest.mark.slow
def test_a_redis_server_that_is_down_costs_one_line_and_the_findings_stay_in_the_campaign(
        redis_package: None, tmp_path: Path) -> None:
    root = tmp_path / "c"
    done = subprocess.run([*CTSGEN, "start", str(root), "--family", "tensor-layout", "--backend",
                           "mutant:set-stride-ignored", "--round-examples", "60", "--shrink-time", "3",
                           "--time", "10", "--workers", "1", "--database", f"redis://127.0.0.1:{free_port()}/0"],
                          capture_output=True, text=True, timeout=120)
    lines = [x for x in done.stdout.splitlines() if "unreachable" in x]
    assert len(lines) == 1 and "going on with the local database" in lines[0], done.stdout
    cdir = CampaignDir(root)
    assert cdir.buckets() and any(p.is_file() for p in cdir.database_dir.rglob("*"))
    assert json.loads((root / "campaign.json").read_text())["database"].startswith("redis://")


@pytest.mark.slow
def test_hosts_sharing_a_redis_database_replay_each_others_findings_first(redis_server, tmp_path: Path) -> None:
    """Two hosts (two campaign directories, host ids 0 and 1) on one real redis-server: host 1's
    first round starts with the failure host 0 found, and their seeds differ."""
    def host(h: int) -> CampaignDir:
        subprocess.run([*CTSGEN, "start", str(tmp_path / f"host{h}"), "--family", "tensor-layout", "--backend",
                        "mutant:set-stride-ignored", "--round-examples", "150", "--shrink-time", "3", "--time", "10",
                        "--workers", "1", "--host-id", str(h), "--database", redis_server.url], capture_output=True, text=True,
                       timeout=180)
        return CampaignDir(tmp_path / f"host{h}")

    first = host(0)
    found = [r["first_failure_example"] for r in first.rounds() if r.get("first_failure_example")]
    second = host(1)
    # the first round that drew an example replays the server (a round the deadline ends before its first
    # example leaves that to the next), within its first examples (the existing directory test allows 3 too)
    replayed = next((r["first_failure_example"] for r in second.rounds() if r["examples"]), None)
    assert found and replayed is not None and replayed <= 3, (found, second.rounds())
    assert second.all_findings()[0]["name"] in {f["name"] for f in first.all_findings()}  # host 0's case
    assert {b["key"] for b in second.buckets()} == {b["key"] for b in first.buckets()}
    assert not {r["seed"] for r in first.rounds()} & {r["seed"] for r in second.rounds()}


@pytest.mark.slow
def test_a_bucket_two_workers_find_is_announced_once(tmp_path: Path) -> None:
    """Each of the H100 campaign's 8 workers announced the SetDimension bucket as new: the
    announcement now comes from the worker that writes the bucket to the campaign directory."""
    from ctsgen.campaign.worker import Worker
    from ctsgen.families import get_family
    from ctsgen.core.family import StrategyOptions
    from ctsgen.fuzz.buckets import run_with_mutant
    from ctsgen.mutants.backend import MutantBackend
    from ctsgen.mutants.catalogue import get_mutant
    from ctsgen.core.verdict import Status
    from ctsgen.strategies.sampling import draw_examples

    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], workers=2))
    m = get_mutant("setdimension-floor")
    failing = [(c, r) for c in draw_examples(get_family("tensor-layout").cases(StrategyOptions()), 300, 11)
               for r in [run_with_mutant(c, m)] if r.status is Status.Fail][:3]
    said: list[str] = []
    # the workers' device gives the mutant's outputs (a bucket is explained by the outputs its device gives)
    workers = [Worker(cdir, i, MutantBackend(m.name), say=said.append) for i in (0, 1)]
    for case, result in failing:
        for w in workers:
            w.place(case, result)
    assert [line.split(":")[0] for line in said if "new bucket" in line] == ["new bucket mutant"]
    assert len(cdir.all_findings()) == 2 * len(failing) and len(failing) >= 2


def test_the_report_says_why_a_family_checked_no_case(tmp_path: Path) -> None:
    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["decode-vector", "tensor-layout"]))
    j = cdir.journal("h0-w0")
    why = "device extension VK_NV_cooperative_matrix_decode_vector is not exposed"
    append(j, {"event": "begin", "round": 0, "seed": 0, "t": 1.0})
    append(j, {"event": "done", "round": 0, "cases": {"tensor-layout": 30}, "examples": 5, "wall_s": 2.0, "t": 3,
               "skipped": {"decode-vector": why}})
    md, page = write_report(cdir, tmp_path / "report")
    assert f"| decode-vector | 0 | {why} |" in md.read_text()
    assert f"<td>decode-vector</td><td>0</td><td>{why}</td>" in page.read_text()


def test_a_round_that_drew_no_example_leaves_the_database_replay_to_the_next(tmp_path: Path, monkeypatch) -> None:
    """Only a worker's first round replays the shared example database (later rounds write to
    it); a first round the deadline ended before its first example replayed nothing, so the
    next round reads the database instead, and the round after that only writes."""
    from ctsgen.backends.reference import ReferenceBackend
    from ctsgen.campaign import worker as worker_module
    from ctsgen.fuzz.database import WriteOnlyDatabase
    from ctsgen.fuzz.loop import FuzzReport

    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], workers=1))
    w = worker_module.Worker(cdir, 0, ReferenceBackend(), say=lambda line: None)
    drawn = iter([0, 4, 4])
    reads: list[bool] = []

    def run(fz) -> FuzzReport:
        reads.append(not isinstance(fz.options.database, WriteOnlyDatabase))
        examples = next(drawn)
        w.stopping = len(reads) == 3
        return FuzzReport(examples=examples, cases=examples)

    monkeypatch.setattr(worker_module._CountingFuzzer, "run", run)
    w.run(None)
    assert reads == [True, True, False]


def test_a_stop_while_a_round_is_set_up_ends_that_round_at_once(tmp_path: Path, monkeypatch) -> None:
    """A stop signal that lands after a round is journalled as begun and before its examples start
    (the worker is not yet in the round, so nothing is interrupted) ends that round at its first
    example, journalled as stopped, instead of being lost until the round ends by itself."""
    from ctsgen.backends.reference import ReferenceBackend
    from ctsgen.campaign import worker as worker_module

    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], workers=1, round_examples=1000))
    w = worker_module.Worker(cdir, 0, ReferenceBackend(), say=lambda line: None)
    real = worker_module._CountingFuzzer.__init__

    def set_up(fz, *args, **kwargs) -> None:
        real(fz, *args, **kwargs)
        w.stop()  # the signal handler's call, while the round is being set up

    monkeypatch.setattr(worker_module._CountingFuzzer, "__init__", set_up)
    total = w.run(None)
    (only,) = cdir.rounds()
    assert total.examples == 0 and only["complete"] and only["stopped"] is True


@pytest.mark.parametrize("when", ["begins", "returns"])
def test_a_stop_outside_the_fuzz_loops_own_handler_still_ends_and_journals_the_round(tmp_path: Path, monkeypatch,
                                                                                      when: str) -> None:
    """A stop signal raises KeyboardInterrupt wherever the worker is in a round. One that lands as the
    fuzz loop begins, before its own handler, or as it returns, after it, escaped the worker: the
    round was never journalled done and the worker died without its report. The window is a few
    bytecodes (200 SIGTERMs sent just after a round was done, under CPU load, never hit it), so the
    handler's call is made here at those two places."""
    from ctsgen.backends.reference import ReferenceBackend
    from ctsgen.campaign import worker as worker_module

    cdir = CampaignDir(tmp_path / "c")
    cdir.create(CampaignConfig(families=["tensor-layout"], workers=1, round_examples=3))
    w = worker_module.Worker(cdir, 0, ReferenceBackend(), say=lambda line: None)
    real = worker_module._CountingFuzzer.run

    def run(fz):
        if when == "begins":
            w.stop()  # the signal handler's call, before the loop's own handler
        report = real(fz)
        w.stop()  # after it
        return report

    monkeypatch.setattr(worker_module._CountingFuzzer, "run", run)
    try:
        total = w.run(None)
    except KeyboardInterrupt:
        pytest.fail("the stop escaped the worker: the round in progress was never journalled")
    (only,) = cdir.rounds()
    assert only["complete"] and only["stopped"] is True
    assert total.examples == (0 if when == "begins" else only["examples"])
