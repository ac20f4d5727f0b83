"""Shared settings for tests/: a Hypothesis profile and a private SPIR-V cache."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ctsgen", max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ctsgen-thorough", parent=settings.get_profile("ctsgen"), max_examples=2000)
settings.load_profile(os.environ.get("CTSGEN_HYPOTHESIS_PROFILE", "ctsgen"))

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def spirv_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spirv-cache")


@pytest.fixture
def session_spirv_cache(spirv_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Compile into a cache private to this test session (never the user's ~/.cache)."""
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
    yield spirv_cache_dir
