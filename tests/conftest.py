"""Fixtures for tests/ (the Hypothesis profiles and the session's SPIR-V cache are in ../conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def session_spirv_cache(spirv_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Compile into a cache private to this test session (never the user's ~/.cache)."""
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
    yield spirv_cache_dir
