"""The families with a Slang source beside their GLSL, along the slang route on lavapipe (conftest.py:
how lavapipe is found): a small pack drawn for lavapipe's profile and compiled by Slang passes there,
as the same pack along glslang does (docs/spec-decisions.md "compiler-routes"). cm2-reduce's Row and
Column reductions (and cm2-program's reduce nodes) fail on lavapipe along either route, and each pack is
judged as test_vulkan_tier.py judges it: against lavapipe's shipped expectations, under the deviation
that explains them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lavapipe_support import DEVIATION, REPO, Lavapipe

#: every test drives lavapipe in ctsgen subprocesses
pytestmark = pytest.mark.slow

PROFILE = REPO / "ctsgen" / "device" / "profiles" / "mesa-lavapipe-26.2.6.txt"
FAMILIES = ("cm2-elementwise", "cm2-convert", "cm2-reduce", "cm2-gemm", "coopmat-khr", "cm2-program")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_slang_pack_passes_on_lavapipe(family: str, lavapipe: Lavapipe, tmp_path: Path) -> None:
    pack, results = tmp_path / "pack", tmp_path / "results.jsonl"
    made = lavapipe.ctsgen("generate", "--family", family, "--route", "slang", "--profile", str(PROFILE),
                           "--count", "24", "--seed", "25", "--out", str(pack), "--jobs", "1")
    assert made.returncode == 0, made.stderr[-2000:]
    ran = lavapipe.ctsgen("run", str(pack), "--backend", "vulkan", "--route", "slang", "--timeout", "60",
                          "--results", str(results), "--baseline", str(REPO / "expectations" / "lavapipe-26.csv"),
                          "--expect-deviation", DEVIATION)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    statuses = [json.loads(line).get("status") for line in results.read_text().splitlines()]
    assert statuses.count("Pass") >= 12 and set(statuses) - {None} == {"Pass"}, statuses
