"""Compiler routes on lavapipe, where SPIR-V really runs: a planted route's wrong module is a route
finding, bucketed by its route with both verdicts; a pack along an optimizer route passes
(conftest.py: how lavapipe is found; the reference backend runs no SPIR-V, so a route changes
nothing there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lavapipe_support import Lavapipe

#: every test drives lavapipe in ctsgen subprocesses
pytestmark = pytest.mark.slow


def test_a_mutant_route_is_found_and_bucketed_as_its_route(lavapipe: Lavapipe, tmp_path: Path) -> None:
    done = lavapipe.ctsgen("fuzz", "--backend", "vulkan", "--family", "coopmat-khr", "--routes",
                           "glslang,mutant-drop-store", "--max-examples", "5", "--max-batch", "8", "--min-batch", "1",
                           "--seed", "1", "--database", "none", "--repro-dir", str(tmp_path), timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "route finding bucket(s)" in done.stdout and "no failure found" not in done.stdout
    buckets = json.loads((tmp_path / "route-findings.json").read_text())
    assert buckets and all(b["route"] == "mutant-drop-store" and b["key"].startswith("route:mutant-drop-store:")
                           and b["passing_route"] == "glslang" for b in buckets)
    for b in buckets:  # both verdicts of the bucket's smallest case: failing along the mutant, passing along glslang
        assert b["verdicts"]["mutant-drop-store"]["status"] == "Fail"
        assert b["verdicts"]["glslang"]["status"] == "Pass"


def test_the_real_routes_agree_on_lavapipe(lavapipe: Lavapipe, tmp_path: Path) -> None:
    done = lavapipe.ctsgen("fuzz", "--backend", "vulkan", "--family", "coopmat-khr", "--routes", "all",
                           "--max-examples", "4", "--max-batch", "8", "--min-batch", "1", "--seed", "3",
                           "--database", "none", "--repro-dir", str(tmp_path), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no failure found" in done.stdout and "opt-loops " in done.stdout


def test_a_pack_along_an_optimizer_route_passes_on_lavapipe(lavapipe: Lavapipe, tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    made = lavapipe.ctsgen("generate", "--family", "coopmat-khr", "--count", "16", "--route", "opt-loops",
                           "--out", str(pack), "--jobs", "1")
    assert made.returncode == 0, made.stderr
    ran = lavapipe.ctsgen("run", str(pack), "--backend", "vulkan", "--route", "opt-loops", "--quiet")
    assert ran.returncode == 0, ran.stdout + ran.stderr
