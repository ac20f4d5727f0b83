"""The repro packs kept in docs/repros still load and pass on the reference backend, document the
failure they replay, and stay runnable on the device they were found on.

They record device deviations: the reference must pass them (the device is what
fails), and a change to a family's case model must keep old packs readable. A change to the
device gate must not turn a lavapipe repro into NotSupported (the lavapipe tier replays them on
the device: tests/lavapipe/test_vulkan_tier.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from repro_docs import LAVAPIPE_PROFILE, lavapipe_repros

from ctsgen.device.profile import load_profile
from ctsgen.pack.read import load_pack

REPROS = sorted(p.parent for p in (Path(__file__).resolve().parents[1] / "docs/repros").glob("*/manifest.json"))


def test_there_are_repros_to_check() -> None:
    assert len(REPROS) >= 2


@pytest.mark.parametrize("repro", REPROS, ids=[p.name for p in REPROS])
def test_repro_passes_on_the_reference(repro: Path, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "ctsgen", "run", str(repro), "--results", str(tmp_path / "r.jsonl")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Pass" in out.stdout and "Fail" not in out.stdout


@pytest.mark.parametrize("repro", lavapipe_repros(), ids=[r.path.name for r in lavapipe_repros()])
def test_a_lavapipe_repro_documents_the_failure_it_replays(repro) -> None:  # type: ignore[no-untyped-def]
    """The lavapipe tier asserts this detail on the device (REPORT.md's "Observed:" line)."""
    assert re.fullmatch(r"\d+ of \d+ elements of '\w+' differ", repro.detail), (repro.path, repro.detail)


def test_the_lavapipe_repros_are_found() -> None:
    assert [r.path.name for r in lavapipe_repros()] == ["lavapipe-reduce-row"]


@pytest.mark.parametrize("repro", lavapipe_repros(), ids=[r.path.name for r in lavapipe_repros()])
def test_a_lavapipe_repro_is_runnable_on_lavapipes_profile(repro) -> None:  # type: ignore[no-untyped-def]
    """lavapipe's fixture profile (captured from the live driver) runs every variant of the pack: a gate
    that refuses one (as the one-subgroup-per-workgroup gate refused the 32-invocation reduce repro)
    would replay it as Skip (NotSupported), not as its documented Fail."""
    profile, pack = load_profile(LAVAPIPE_PROFILE), load_pack(repro.path)
    for vid, variant in pack.variants.items():
        assert profile.unsupported_reason(variant.requirements) is None, (vid, profile.unsupported_reason(
            variant.requirements))
