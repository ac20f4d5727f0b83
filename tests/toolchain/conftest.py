"""Fixtures for the toolchain tests: a private SPIR-V cache, a glslang call counter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ctsgen.toolchain as toolchain
from ctsgen.toolchain import glslang


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets an empty SPIR-V cache directory and an empty in-process memo."""
    directory = tmp_path / "spirv-cache"
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(directory))
    toolchain.clear_memory_cache()
    glslang.library_path.cache_clear()
    yield directory
    toolchain.clear_memory_cache()
    glslang.library_path.cache_clear()


@pytest.fixture
def compile_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every call that reaches glslang itself (not the caches)."""
    calls: list[str] = []
    real = glslang.compile_glsl

    def counting(source: str, name: str = "shader.comp", optimization: int = 0) -> bytes:
        calls.append(name)
        return real(source, name, optimization)

    monkeypatch.setattr(glslang, "compile_glsl", counting)
    return calls
