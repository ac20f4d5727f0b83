"""Hypothesis settings for the cm2_reduce family tests (see also tests/conftest.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hypothesis import HealthCheck, settings

from ctsgen.device.profile import DeviceProfile, default_profile, load_profile

settings.register_profile(
    "ctsgen", max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ctsgen-thorough", parent=settings.get_profile("ctsgen"), max_examples=2000)
settings.load_profile(os.environ.get("CTSGEN_HYPOTHESIS_PROFILE", "ctsgen"))

REPO = Path(__file__).resolve().parents[4]
SHARED_PROFILE = REPO.parent / "shared" / "device-profiles" / "nvidia-h100-driver580.txt"


@pytest.fixture(scope="session", autouse=True)
def private_spirv_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Compile into a cache private to this test session (never the user's ~/.cache)."""
    old = os.environ.get("CTSGEN_CACHE_DIR")
    path = tmp_path_factory.mktemp("spirv-cache")
    os.environ["CTSGEN_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        del os.environ["CTSGEN_CACHE_DIR"]
    else:
        os.environ["CTSGEN_CACHE_DIR"] = old


def profile_for_tests() -> DeviceProfile:
    """The shared H100 read-out when the checkout has it, else the embedded copy of it."""
    return load_profile(SHARED_PROFILE) if SHARED_PROFILE.exists() else default_profile()
