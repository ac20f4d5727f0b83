"""GLSL -> SPIR-V through glslang, and both validators."""

from __future__ import annotations

import struct
import sys

import pytest
from toolchain_shaders import TENSOR_LAYOUT_SHADER, TENSOR_VIEW_SHADER

import ctsgen.toolchain as toolchain
from ctsgen.toolchain import GlslCompileError, SpirvValidationError, ToolchainError, glslang

SPIRV_MAGIC = 0x07230203
OP_TYPE_INT = 21


def _words(spirv: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(spirv) // 4}I", spirv))


def _corrupt_int_width(spirv: bytes) -> bytes:
    """The module with its first OpTypeInt declared 7 bits wide (invalid everywhere)."""
    words = _words(spirv)
    index = 5  # past the header
    while words[index] & 0xFFFF != OP_TYPE_INT:
        index += words[index] >> 16
    words[index + 2] = 7
    return struct.pack(f"<{len(words)}I", *words)


@pytest.mark.parametrize("source", [TENSOR_LAYOUT_SHADER, TENSOR_VIEW_SHADER], ids=["layout", "view"])
def test_coopmat2_shader_compiles_and_passes_both_validators(source: str) -> None:
    spirv = toolchain.compile_glsl(source, "coopmat2.comp")
    assert len(spirv) % 4 == 0
    assert _words(spirv)[0] == SPIRV_MAGIC
    assert _words(spirv)[1] == 0x00010600  # SPIR-V 1.6
    toolchain.validate_spirv(spirv)
    toolchain.validate_spirv(spirv, decode_vector=True)


def test_compile_error_shows_offending_line_and_number() -> None:
    wrong = TENSOR_LAYOUT_SHADER.replace(
        "tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t =",
        "tensorLayoutNV<2, gl_CooperativeMatrixClampModeRepeatMirroredNV> t =",
    )
    bad_line = "  tensorLayoutNV<2, gl_CooperativeMatrixClampModeRepeatMirroredNV> t ="
    number = wrong.splitlines().index(bad_line) + 1
    with pytest.raises(GlslCompileError) as caught:
        toolchain.compile_glsl(wrong, "wrong-clamp.comp")
    message = str(caught.value)
    assert f"ERROR: wrong-clamp.comp:{number}:" in message
    assert f"{number} | {bad_line}" in message
    assert "undeclared identifier" in caught.value.diagnostics
    assert isinstance(caught.value, ToolchainError)


def test_compile_errors_are_not_cached(private_cache, compile_calls: list[str]) -> None:
    for _ in range(2):
        with pytest.raises(GlslCompileError):
            toolchain.compile_glsl("#version 450\nvoid main() { nope(); }\n")
    assert len(compile_calls) == 2
    assert not list(private_cache.rglob("*.spv"))


@pytest.mark.parametrize("decode_vector", [False, True], ids=["spirv-val", "glslang"])
def test_invalid_spirv_is_refused_with_the_validators_message(decode_vector: bool) -> None:
    corrupted = _corrupt_int_width(toolchain.compile_glsl(TENSOR_LAYOUT_SHADER))
    with pytest.raises(SpirvValidationError) as caught:
        toolchain.validate_spirv(corrupted, decode_vector=decode_vector)
    assert "Invalid number of bits (7) used for OpTypeInt" in str(caught.value)
    assert "OpTypeInt" in caught.value.messages


def test_glslang_validator_output_is_captured_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    corrupted = _corrupt_int_width(toolchain.compile_glsl(TENSOR_LAYOUT_SHADER))
    print("before", flush=True)
    with pytest.raises(SpirvValidationError):
        glslang.validate_with_glslang(corrupted)
    print("after", flush=True)
    out, err = capfd.readouterr()
    assert out == "before\nafter\n"
    assert "OpTypeInt" not in err


def test_partial_word_is_refused() -> None:
    with pytest.raises(SpirvValidationError, match="whole number of 32-bit words"):
        toolchain.validate_spirv(b"\x03\x02\x23\x07\x00", decode_vector=True)


def test_toolchain_versions_name_the_tools() -> None:
    versions = toolchain.toolchain_versions()
    assert versions["glslang_library"].startswith("libslang-glslang-")
    assert versions["spirv_val"].startswith("SPIRV-Tools v")
    assert versions["slangpy"]


def test_missing_slangpy_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "slangpy", None)  # find_spec then reports it absent
    with pytest.raises(ToolchainError, match=r"pip install slangpy==0\.43\.1"):
        toolchain.compile_glsl(TENSOR_LAYOUT_SHADER)


def test_spirv_val_runs_once_per_module_and_never_marks_a_rejected_one(private_cache, monkeypatch) -> None:
    """A module spirv-val accepted is not validated again (``ctsgen run`` re-validates every
    shader of a pack each time); a rejected one is validated, and rejected, every time."""
    from ctsgen.toolchain import spirv_val

    calls: list[list[str]] = []
    real_run = spirv_val._run
    monkeypatch.setattr(spirv_val, "_run", lambda args: calls.append(args) or real_run(args))
    good = toolchain.compile_glsl(TENSOR_LAYOUT_SHADER)
    spirv_val.validate(good)
    spirv_val.validate(good)
    assert len(calls) == 1
    with pytest.raises(SpirvValidationError, match="Vulkan 1.2"):  # another environment, another verdict
        spirv_val.validate(good, target_env="vulkan1.2")
    assert len(calls) == 2
    bad = _corrupt_int_width(good)
    for _ in range(2):
        with pytest.raises(SpirvValidationError):
            spirv_val.validate(bad)
    assert len(calls) == 4
    assert not spirv_val.accepted_mark(bad, "vulkan1.3").exists()
    assert spirv_val.accepted_mark(good, "vulkan1.3").is_relative_to(private_cache)
