"""The shared example database against a real redis-server: findings cross processes,
and a server that is down or goes away costs one line and no finding."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase

from ctsgen.fuzz.database import FallbackDatabase, WriteOnlyDatabase, open_database
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.supervise import SupervisedBackend
from tests.conftest import free_port


def fuzz_mutant(mutant: str, database, seed: int):
    """Fuzz until the mutant's failure is found and fully shrunk: the tests compare a replay's
    minimal case with this one, so the shrink must end by itself, not on the time cap (from a
    ~50-case batch it takes 6-10 s on a loaded 2-core machine)."""
    backend = SupervisedBackend(functools.partial(MutantBackend, mutant), name=f"mutant:{mutant}")
    try:
        return Fuzzer(backend, FuzzOptions(max_examples=150, seed=seed, database=database,
                                           shrink_time_s=120)).run()
    finally:
        backend.close()


def stored(db: DirectoryBasedExampleDatabase) -> int:
    return sum(1 for p in Path(db.path).rglob("*") if p.is_file())


def test_saves_reach_the_server_and_the_local_mirror(redis_server, tmp_path: Path) -> None:
    lines: list[str] = []
    db = open_database(redis_server.url, local=tmp_path / "mirror", on_fallback=lines.append)
    assert isinstance(db, FallbackDatabase) and db.using_shared
    db.save(b"key", b"value-1")
    db.save(b"key", b"value-2")
    db.delete(b"key", b"value-1")
    assert sorted(db.fetch(b"key")) == [b"value-2"]
    assert redis_server.client.smembers(b"hypothesis-example:key") == {b"value-2"}
    assert list(DirectoryBasedExampleDatabase(str(tmp_path / "mirror")).fetch(b"key")) == [b"value-2"]
    other = open_database(redis_server.url, local=tmp_path / "elsewhere")  # another host: only the server
    assert list(other.fetch(b"key")) == [b"value-2"] and lines == []


@pytest.mark.slow
def test_a_failure_found_by_one_process_is_replayed_first_by_another(redis_server, tmp_path: Path) -> None:
    """Two ``ctsgen fuzz`` processes, different seeds and working directories (so different
    local mirrors): the second one's first example is the failure the first one stored. Both
    shrink to the end (the 120 s cap is a safety net), so their minimal cases compare (see fuzz_mutant)."""
    def run(cwd: Path, seed: int) -> subprocess.CompletedProcess:
        cwd.mkdir()
        return subprocess.run([sys.executable, "-m", "ctsgen", "fuzz", "--backend", "mutant:set-stride-ignored",
                               "--max-examples", "150", "--database", redis_server.url, "--seed", str(seed),
                               "--shrink-time", "120", "--repro-dir", str(cwd / "repros")],
                              cwd=cwd, capture_output=True, text=True, timeout=300)

    first = run(tmp_path / "host-a", 3)
    found = re.search(r"first failure after (\d+) examples", first.stdout)
    assert first.returncode == 1 and found and int(found.group(1)) > 1, first.stdout + first.stderr
    assert redis_server.client.keys(b"hypothesis-example:*"), "nothing reached the server"
    second = run(tmp_path / "host-b", 77)
    assert second.returncode == 1 and "first failure after 1 examples" in second.stdout, second.stdout
    name = re.compile(r"  Fail: (\S+)")
    assert name.findall(second.stdout) == name.findall(first.stdout)  # the same minimal case
    assert "unreachable" not in first.stderr + second.stderr


@pytest.mark.slow
def test_a_server_that_is_down_costs_one_line_and_no_finding(redis_package: None, tmp_path: Path) -> None:
    lines: list[str] = []
    db = open_database(f"redis://127.0.0.1:{free_port()}/0", local=tmp_path / "mirror", on_fallback=lines.append)
    report = fuzz_mutant("set-stride-ignored", db, seed=3)
    assert report.case is not None
    assert len(lines) == 1 and "unreachable" in lines[0] and "local database" in lines[0]
    assert stored(db.local) >= 1
    again = fuzz_mutant("set-stride-ignored", str(tmp_path / "mirror"), seed=50)  # the mirror replays it
    assert again.first_failure_example == 1 and again.case.name() == report.case.name()


@pytest.mark.slow
def test_a_server_that_goes_away_mid_campaign_costs_one_line_and_no_finding(redis_server, tmp_path: Path) -> None:
    lines: list[str] = []
    db = open_database(redis_server.url, local=tmp_path / "mirror", on_fallback=lines.append)
    db.save(b"before", b"x")
    redis_server.stop()
    report = fuzz_mutant("set-stride-ignored", db, seed=3)
    assert report.case is not None and not db.using_shared
    assert len(lines) == 1 and redis_server.url in lines[0]
    assert list(db.fetch(b"before")) == [b"x"]  # saved while the server was up: in the mirror too
    again = fuzz_mutant("set-stride-ignored", str(tmp_path / "mirror"), seed=50)
    assert again.first_failure_example == 1 and again.case.name() == report.case.name()


def test_rounds_after_a_failure_save_but_do_not_replay(tmp_path: Path) -> None:
    inner = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    inner.save(b"k", b"v")
    view = WriteOnlyDatabase(inner)
    assert list(view.fetch(b"k")) == []
    view.save(b"k", b"w")
    assert sorted(inner.fetch(b"k")) == [b"v", b"w"]
