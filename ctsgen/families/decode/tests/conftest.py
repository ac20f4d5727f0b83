"""Hypothesis settings for the decode family tests (see also tests/conftest.py)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ctsgen", max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ctsgen-thorough", parent=settings.get_profile("ctsgen"), max_examples=2000)
settings.load_profile(os.environ.get("CTSGEN_HYPOTHESIS_PROFILE", "ctsgen"))


import pytest  # noqa: E402


@pytest.fixture
def private_spirv_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Compile into a cache private to this test (never the user's ~/.cache)."""
    path = tmp_path_factory.mktemp("spirv-cache")
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(path))
    return path
