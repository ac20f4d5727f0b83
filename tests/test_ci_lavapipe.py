""".ci/lavapipe.sh takes the Debian archive from the machine's apt configuration: a deb822 .sources
file or one-line sources.list entries, never a security archive; with none it stops in one line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "lavapipe.sh"


def _archive(etc: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), "--archive"], env=dict(os.environ, APT_ETC=str(etc)),
                          capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.parametrize("name, text", [
    ("sources.list.d/debian.sources",
     "Types: deb\nURIs: http://security.mirror.example/debian-security\nSuites: bookworm-security\n\n"
     "Types: deb\nURIs: http://mirror.example/debian http://other.example/debian\nSuites: bookworm\n"),
    ("sources.list",
     "# a comment\ndeb [signed-by=/k.gpg arch=amd64] http://mirror.example/debian-security bookworm-security main\n"
     "deb-src http://src.example/debian bookworm main\n"
     "deb [ signed-by=/k.gpg ] http://mirror.example/debian bookworm main\n"),
    ("sources.list.d/mirror.list", "deb http://mirror.example/debian bookworm main contrib\n"),
])
def test_the_archive_is_the_first_non_security_uri(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    run = _archive(tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "http://mirror.example/debian\n"


def test_no_archive_is_one_line_and_exit_1(tmp_path: Path) -> None:
    run = _archive(tmp_path)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "no Debian archive" in run.stderr and "-> configure apt" in run.stderr
