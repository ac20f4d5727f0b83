"""CTSGEN_WORKER_LAUNCHER: the supervised worker is started through a launcher (a private dynamic
loader's prefix, README "lavapipe"), and multiprocessing is left as it was found."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from multiprocessing import util as mp_util
from pathlib import Path

import pytest

from ctsgen.backends.fake import FaultyBackend
from ctsgen.backends.supervise import WORKER_LAUNCHER_ENV, SupervisedBackend, worker_launcher
from ctsgen.errors import UserError


def _recording_launcher(tmp_path: Path) -> tuple[Path, Path]:
    """A launcher that writes its arguments, one line a start, to a log, then runs them."""
    log = tmp_path / "launched.log"
    launcher = tmp_path / "launch"
    launcher.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "$@"\n')
    launcher.chmod(0o755)
    return launcher, log


def test_the_worker_is_started_through_the_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, log = _recording_launcher(tmp_path)
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, str(launcher))
    original = mp_util.spawnv_passfds
    backend = SupervisedBackend(functools.partial(FaultyBackend, {}))
    try:
        assert backend.profile().name  # the worker answered
        first = log.read_text().splitlines()
        backend._kill()  # a replacement worker goes through the launcher too
        backend.prepare([])
    finally:
        backend.close()
    workers = [line for line in log.read_text().splitlines() if "spawn_main" in line]
    assert len(workers) == 2 and sum("spawn_main" in line for line in first) == 1
    assert all(line.startswith(sys.executable + " ") for line in workers)
    assert mp_util.spawnv_passfds is original


def test_a_launcher_with_arguments_is_split_like_a_shell_command(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, _ = _recording_launcher(tmp_path)
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, f"{launcher} 'an argument'")
    assert worker_launcher() == [str(launcher), "an argument"]
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, "sh -e")
    assert worker_launcher()[0].endswith("/sh") and worker_launcher()[1:] == ["-e"]
    monkeypatch.delenv(WORKER_LAUNCHER_ENV)
    assert worker_launcher() == []


def test_a_launcher_that_is_not_a_program_is_one_line_naming_the_variable(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, str(tmp_path / "missing"))
    with pytest.raises(UserError, match=rf"^{WORKER_LAUNCHER_ENV}=.*missing is not an executable program -> ") as e:
        SupervisedBackend(functools.partial(FaultyBackend, {}))
    assert "\n" not in str(e.value)


@pytest.mark.slow
def test_fuzz_workers_are_started_through_the_launcher(tmp_path: Path) -> None:
    launcher, log = _recording_launcher(tmp_path)
    env = dict(os.environ, **{WORKER_LAUNCHER_ENV: str(launcher)})
    run = subprocess.run([sys.executable, "-m", "ctsgen", "fuzz", "--family", "cm2-elementwise", "--workers", "2",
                          "--max-examples", "2", "--database", "none"], cwd=Path(__file__).resolve().parents[1],
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    started = [line for line in log.read_text().splitlines() if " -m ctsgen fuzz " in line]
    assert len(started) == 2 and all(line.startswith(f"{sys.executable} -m ctsgen fuzz ") for line in started)
