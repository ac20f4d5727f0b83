"""ctypes binding to the glslang build shipped inside the ``slangpy`` wheel.

No registry here ships a ``glslangValidator`` recent enough for
GL_NV_cooperative_matrix2 / GL_NV_cooperative_vector, but the slangpy wheel
contains ``libslang-glslang-<version>.so``, which does, and exports a small C
ABI (declared in ``slang-glslang.h`` of the shader-slang/slang repository):

* ``int glslang_compile_1_2(glslang_CompileRequest_1_2*)``: 0 on success;
  diagnostics and output arrive through callbacks.  The library performs
  glslang's process-wide initialisation itself, once, on the first call.
* ``bool glslang_validateSPIRV(const uint32_t*, int wordCount)``: SPIRV-Tools
  validation for universal SPIR-V 1.6.  It has no message callback: it writes
  errors to C++ ``std::cerr`` and warnings to ``std::cout``, so we capture
  file descriptors 1 and 2 around the call.

The slangpy package itself is never imported (it is slow and pulls in a GPU
runtime); only its directory is located.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ctsgen.toolchain.errors import GlslCompileError, SpirvValidationError, ToolchainError

INSTALL_FIX = "pip install slangpy==0.43.1"
LIBRARY_GLOB = "libslang-glslang-*.so"

_STAGE_COMPUTE = 6  # SlangStage SLANG_STAGE_COMPUTE
_ACTION_COMPILE_GLSL_TO_SPIRV = 0
_SPIRV_VERSION = (1, 6, 0)
_ENTRY_POINT = "main"
SPIRV_MAGIC = 0x07230203



def compile_options(optimization: int = 0) -> str:
    """Every setting of the compile request that can change the SPIR-V produced (the source file
    name cannot: it appears only in diagnostics).  Part of the cache key; ``optimization`` is the
    request's ``optimizationLevel`` (0: none, ctsgen's default; a route may ask for another,
    :mod:`ctsgen.toolchain.routes`)."""
    return (f"stage=compute;action=glsl-to-spirv;"
            f"spirv={_SPIRV_VERSION[0]}.{_SPIRV_VERSION[1]};entry={_ENTRY_POINT};"
            f"optimization={optimization};debuginfo=0")


#: The options of the default compile (optimization level 0).
COMPILE_OPTIONS = compile_options(0)

_OutputFunc = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


class _SpirvVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int)]


class _CompileRequest12(ctypes.Structure):
    """``glslang_CompileRequest_1_2``, field for field."""

    _fields_ = [
        ("sizeInBytes", ctypes.c_size_t),
        ("sourcePath", ctypes.c_char_p),
        ("inputBegin", ctypes.c_void_p),
        ("inputEnd", ctypes.c_void_p),
        ("diagnosticFunc", _OutputFunc),
        ("diagnosticUserData", ctypes.c_void_p),
        ("outputFunc", _OutputFunc),
        ("outputUserData", ctypes.c_void_p),
        ("slangStage", ctypes.c_int),
        ("action", ctypes.c_uint),
        ("optimizationLevel", ctypes.c_uint),
        ("debugInfoType", ctypes.c_uint),
        ("spirvTargetName", ctypes.c_char_p),
        ("spirvVersion", _SpirvVersion),
        ("entryPointName", ctypes.c_char_p),
    ]


@functools.cache
def library_path() -> Path:
    """Path of ``libslang-glslang-*.so`` inside the installed slangpy package.

    Raises :class:`ToolchainError` naming the install command if slangpy is
    missing or holds no such library. ``CTSGEN_GLSLANG_LIBRARY`` names the
    library file directly (it depends on libstdc++ only), e.g. on a GPU
    machine that has no slangpy wheel but must compile while fuzzing.
    """
    override = os.environ.get("CTSGEN_GLSLANG_LIBRARY")
    if override:
        if not Path(override).is_file():
            raise ToolchainError(f"CTSGEN_GLSLANG_LIBRARY={override} is not a file -> fix: point it at "
                                 f"{LIBRARY_GLOB} from the slangpy wheel, or unset it")
        return Path(override)
    spec = importlib.util.find_spec("slangpy")
    if spec is None or not spec.submodule_search_locations:
        raise ToolchainError(
            f"the GLSL compiler is missing: package 'slangpy' (which ships {LIBRARY_GLOB}) "
            f"is not installed -> fix: {INSTALL_FIX}"
        )
    for directory in spec.submodule_search_locations:
        found = sorted(Path(directory).glob(LIBRARY_GLOB))
        if found:
            return found[-1]
    raise ToolchainError(
        f"slangpy is installed at {', '.join(spec.submodule_search_locations)} but contains no "
        f"{LIBRARY_GLOB} -> fix: pip install --force-reinstall slangpy==0.43.1"
    )


def library_version(path: Path) -> str:
    """The version in the library's file name (``libslang-glslang-2026.12.so`` -> ``2026.12``),
    or the file name itself where it carries none."""
    match = re.fullmatch(r"libslang-glslang-(.+)\.so(?:\..*)?", path.name)
    return match.group(1) if match else path.name


@functools.cache
def _library() -> ctypes.CDLL:
    """Load the glslang library once, with the prototypes of its exports."""
    path = library_path()
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise ToolchainError(
            f"cannot load the GLSL compiler {path}: {exc} -> fix: {INSTALL_FIX} "
            "(the wheel needs glibc >= 2.34, manylinux_2_34)"
        ) from exc
    lib.glslang_compile_1_2.argtypes = [ctypes.POINTER(_CompileRequest12)]
    lib.glslang_compile_1_2.restype = ctypes.c_int
    lib.glslang_validateSPIRV.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.glslang_validateSPIRV.restype = ctypes.c_bool
    return lib


def compile_glsl(source: str, name: str = "shader.comp", optimization: int = 0) -> bytes:
    """Compile a GLSL compute shader to SPIR-V 1.6 (entry point ``main``).

    ``name`` is the file name glslang uses in its diagnostics; ``optimization`` the request's
    ``optimizationLevel`` (the library runs its own SPIRV-Tools optimizer at 1 and above).  Raises
    :class:`GlslCompileError` with the diagnostics and the offending source
    lines if glslang refuses the source.
    """
    lib = _library()
    text = source.encode("utf-8")
    buffer = ctypes.create_string_buffer(text)
    begin = ctypes.addressof(buffer)
    diagnostics: list[bytes] = []
    output: list[bytes] = []
    # The callbacks must stay referenced until the call returns.
    on_diagnostic = _OutputFunc(lambda data, size, _user: diagnostics.append(ctypes.string_at(data, size)))
    on_output = _OutputFunc(lambda data, size, _user: output.append(ctypes.string_at(data, size)))
    request = _CompileRequest12(
        sizeInBytes=ctypes.sizeof(_CompileRequest12),
        sourcePath=name.encode("utf-8"),
        inputBegin=begin,
        inputEnd=begin + len(text),
        diagnosticFunc=on_diagnostic,
        outputFunc=on_output,
        slangStage=_STAGE_COMPUTE,
        action=_ACTION_COMPILE_GLSL_TO_SPIRV,
        optimizationLevel=optimization,
        spirvTargetName=None,
        spirvVersion=_SpirvVersion(*_SPIRV_VERSION),
        entryPointName=_ENTRY_POINT.encode("ascii"),
    )
    status = lib.glslang_compile_1_2(ctypes.byref(request))
    log = b"".join(diagnostics).decode("utf-8", errors="replace")
    spirv = b"".join(output)
    if status != 0 or not spirv:
        raise GlslCompileError(_describe_failure(source, name, log, status), log)
    if len(spirv) % 4 or int.from_bytes(spirv[:4], "little") != SPIRV_MAGIC:
        raise ToolchainError(
            f"glslang ({library_path()}) returned {len(spirv)} bytes that are not a SPIR-V module "
            f"for {name} -> fix: {INSTALL_FIX}"
        )
    return spirv


def _describe_failure(source: str, name: str, log: str, status: int) -> str:
    """glslang's log with each ``ERROR: name:LINE:`` followed by that source line."""
    lines = source.splitlines()
    error_at = re.compile(rf"^ERROR: {re.escape(name)}:(\d+):")
    report = [f"glslang could not compile {name} (status {status}):"]
    shown: int | None = None
    for message in map(str.rstrip, log.splitlines()):
        if not message:
            continue
        report.append(f"  {message}")
        match = error_at.match(message)
        if match is None:
            continue
        number = int(match.group(1))
        if 1 <= number <= len(lines) and number != shown:
            report.append(f"  {number:>5} | {lines[number - 1]}")
            shown = number
    if len(report) == 1:
        report.append("  (glslang printed no diagnostics and produced no SPIR-V)")
    return "\n".join(report)


_capture_lock = threading.Lock()


@contextmanager
def _captured_c_output() -> Iterator[list[str]]:
    """Send file descriptors 1 and 2 to a temp file; yield a list that receives its text.

    Native code writing to stdout/stderr (C stdio or C++ streams) is caught;
    Python's own buffers are flushed first so nothing of ours ends up there.
    Process-wide, hence serialised by a lock.
    """
    libc = ctypes.CDLL(None)
    captured: list[str] = []
    with _capture_lock, tempfile.TemporaryFile() as sink:
        sys.stdout.flush()
        sys.stderr.flush()
        libc.fflush(None)
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield captured
        finally:
            libc.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            captured.append(sink.read().decode("utf-8", errors="replace"))


def validate_with_glslang(spirv: bytes) -> None:
    """Validate with the SPIRV-Tools inside the glslang library (universal SPIR-V 1.6).

    That build knows SPV_NV_cooperative_matrix_decode_vector, which the
    standalone ``spirv-val`` 2025.5 does not.  Raises
    :class:`SpirvValidationError` with the validator's messages.
    """
    if len(spirv) % 4:
        raise SpirvValidationError(f"SPIR-V module is {len(spirv)} bytes, not a whole number of 32-bit words", "")
    lib = _library()
    with _captured_c_output() as captured:
        valid = lib.glslang_validateSPIRV(spirv, len(spirv) // 4)
    messages = captured[0].strip()
    if not valid:
        raise SpirvValidationError(
            "glslang's SPIRV-Tools validator (universal SPIR-V 1.6) rejected the module:\n"
            + (messages or "(it printed no message)"),
            messages,
        )
