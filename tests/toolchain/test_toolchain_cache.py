"""The content-addressed SPIR-V cache: hits skip glslang, corrupt entries are rebuilt."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolchain_shaders import TENSOR_LAYOUT_SHADER

import ctsgen.toolchain as toolchain
from ctsgen.toolchain import glslang
from ctsgen.toolchain.cache import SpirvCache, cache_key, default_dir


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.spv"))


def test_second_compile_is_served_from_memory_then_disk(private_cache: Path, compile_calls: list[str]) -> None:
    first = toolchain.compile_glsl(TENSOR_LAYOUT_SHADER)
    assert toolchain.compile_glsl(TENSOR_LAYOUT_SHADER) == first
    toolchain.clear_memory_cache()
    assert toolchain.compile_glsl(TENSOR_LAYOUT_SHADER, "other-name.comp") == first
    assert len(compile_calls) == 1
    assert len(_entries(private_cache)) == 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: blob[: len(blob) // 2],  # truncated
        lambda blob: blob[:-1] + bytes([blob[-1] ^ 0xFF]),  # last SPIR-V byte inverted
        lambda blob: b"garbage",
        lambda blob: b"",
    ],
    ids=["truncated", "flipped", "garbage", "empty"],
)
def test_corrupt_entry_is_recompiled_and_repaired(private_cache: Path, compile_calls: list[str], damage) -> None:
    good = toolchain.compile_glsl(TENSOR_LAYOUT_SHADER)
    (entry,) = _entries(private_cache)
    entry.write_bytes(damage(entry.read_bytes()))
    toolchain.clear_memory_cache()
    assert toolchain.compile_glsl(TENSOR_LAYOUT_SHADER) == good
    assert len(compile_calls) == 2
    toolchain.clear_memory_cache()
    assert toolchain.compile_glsl(TENSOR_LAYOUT_SHADER) == good
    assert len(compile_calls) == 2  # the rewritten entry is good again


def test_unwritable_cache_warns_and_still_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compile_calls: list[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(blocker / "spirv"))
    with pytest.warns(RuntimeWarning, match="CTSGEN_CACHE_DIR"):
        spirv = toolchain.compile_glsl(TENSOR_LAYOUT_SHADER)
    assert spirv[:4] == (0x07230203).to_bytes(4, "little")


def test_key_depends_on_source_compiler_and_options(tmp_path: Path) -> None:
    small = tmp_path / "libslang-glslang-1.so"
    small.write_bytes(b"x")
    large = tmp_path / "libslang-glslang-2.so"
    large.write_bytes(b"xy")
    base = cache_key("void main() {}", small, "o")
    assert base == cache_key("void main() {}", small, "o")
    variants = [
        cache_key("void main() { }", small, "o"),
        cache_key("void main() {}", large, "o"),
        cache_key("void main() {}", small, "p"),
    ]
    assert len({base, *variants}) == 4


def test_cache_round_trip_and_missing_entry(tmp_path: Path) -> None:
    cache = SpirvCache(tmp_path)
    spirv = glslang.compile_glsl(TENSOR_LAYOUT_SHADER)
    assert cache.get("ab" * 32) is None
    cache.put("ab" * 32, spirv)
    assert cache.get("ab" * 32) == spirv
    assert not list(tmp_path.rglob(".tmp-*"))


def test_default_dir_follows_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(tmp_path))
    assert default_dir() == tmp_path
    monkeypatch.delenv("CTSGEN_CACHE_DIR")
    assert default_dir() == Path.home() / ".cache" / "ctsgen" / "spirv"
