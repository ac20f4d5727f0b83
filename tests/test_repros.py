"""The repro packs kept in docs/repros still load and pass on the reference backend.

They record device deviations: the reference must pass them (the device is what
fails), and a change to a family's case model must keep old packs readable.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPROS = sorted(p.parent for p in (Path(__file__).resolve().parents[1] / "docs/repros").glob("*/manifest.json"))


def test_there_are_repros_to_check() -> None:
    assert len(REPROS) >= 2


@pytest.mark.parametrize("repro", REPROS, ids=[p.name for p in REPROS])
def test_repro_passes_on_the_reference(repro: Path, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "ctsgen", "run", str(repro), "--results", str(tmp_path / "r.jsonl")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Pass" in out.stdout and "Fail" not in out.stdout
