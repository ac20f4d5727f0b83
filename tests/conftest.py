"""Fixtures for tests/ (the Hypothesis profiles and the session's SPIR-V cache are in ../conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def session_spirv_cache(spirv_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Compile into a cache private to this test session (never the user's ~/.cache)."""
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
    yield spirv_cache_dir


@pytest.fixture(scope="module")
def pristine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, spirv_cache_dir: Path) -> Path:
    """One tensor-layout pack per test module, of the module's ``PACK_COUNT`` cases drawn with its
    ``PACK_SEED`` (tests that change a pack copy it first: the ``pack`` fixture)."""
    from ctsgen.cli import main

    count, seed = getattr(request.module, "PACK_COUNT", 24), getattr(request.module, "PACK_SEED", 1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
        out = tmp_path_factory.mktemp("packs") / "pristine"
        assert main(["generate", "--count", str(count), "--seed", str(seed), "--out", str(out)]) == 0
    return out


@pytest.fixture
def pack(pristine: Path, tmp_path: Path, session_spirv_cache: Path) -> Path:
    """A private copy of the module's pristine pack."""
    dst = tmp_path / "pack"
    shutil.copytree(pristine, dst)
    return dst
