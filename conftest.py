"""Test settings for the whole repository (tests/ and every family's tests/).

Hypothesis profiles (``CTSGEN_HYPOTHESIS_PROFILE=ctsgen-thorough`` for
2000 examples a property) and a SPIR-V cache private to the test session,
so tests never write to the user's ~/.cache.
"""

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


@pytest.fixture(scope="session")
def spirv_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spirv-cache")


@pytest.fixture(scope="session", autouse=True)
def private_spirv_cache(spirv_cache_dir: Path) -> Iterator[Path]:
    """Compile into the session's private cache (tests may still point CTSGEN_CACHE_DIR elsewhere)."""
    old = os.environ.get("CTSGEN_CACHE_DIR")
    os.environ["CTSGEN_CACHE_DIR"] = str(spirv_cache_dir)
    yield spirv_cache_dir
    if old is None:
        os.environ.pop("CTSGEN_CACHE_DIR", None)
    else:
        os.environ["CTSGEN_CACHE_DIR"] = old
