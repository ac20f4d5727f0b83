"""ctypes binding to the Slang compiler shipped inside the ``slangpy`` wheel: the ``slang`` route's producer.

The wheel that carries ctsgen's glslang (:mod:`ctsgen.toolchain.glslang`) also carries
``libslang-compiler.so.<version>``, a second front end and code generator, independent of glslang,
whose C API (``slang.h``, ``slang-deprecated.h`` of the shader-slang/slang repository) is reached
here: ``slang_createGlobalSession`` (once per process, about 0.5 s), then per module
``spCreateCompileRequest``, ``spProcessCommandLineArguments`` with slangc's own arguments,
``spCompile``, ``spGetEntryPointCode`` and ``spDestroyCompileRequest``.

Two rules of this build, measured (docs/spec-decisions.md "compiler-routes"):

* the request returns the entry point's code only when the arguments name an output file (``-o``;
  with none, 0 bytes); the file is never written;
* ``spGetEntryPointCode`` after a failed ``spCompile`` crashes the process, so it is called only
  after a successful one.

Modules are cached on disk like glslang's (:mod:`ctsgen.toolchain.cache`), under a key that names
the producer, the library and the arguments.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import re
import tempfile
import threading
from pathlib import Path

from ctsgen.toolchain.cache import SpirvCache, cache_key
from ctsgen.toolchain.errors import ToolchainError

INSTALL_FIX = "pip install slangpy==0.43.1"
LIBRARY_GLOB = "libslang-compiler.so*"
ENV_VAR = "CTSGEN_SLANG_LIBRARY"
SPIRV_MAGIC = 0x07230203

#: slangc's arguments, before the source file: SPIR-V for a compute entry point ``main``.
ARGUMENTS = ("-target", "spirv", "-stage", "compute", "-entry", "main")

#: What the cache key adds to the source and the library: the producer and its arguments.
COMPILE_OPTIONS = "producer=slang;" + " ".join(ARGUMENTS)

_SLANG_API_VERSION = 0  # slang.h SLANG_API_VERSION


class SlangCompileError(ToolchainError):
    """Slang refused a source; the message is one line (the first error and where), ``diagnostics``
    Slang's whole output."""

    def __init__(self, message: str, diagnostics: str) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


@functools.cache
def library_path() -> Path:
    """``libslang-compiler.so*`` inside the installed slangpy package (``$CTSGEN_SLANG_LIBRARY``
    names the file directly). :class:`ToolchainError` naming the fix where there is none."""
    override = os.environ.get(ENV_VAR)
    if override:
        if not Path(override).is_file():
            raise ToolchainError(f"{ENV_VAR}={override} is not a file -> point it at {LIBRARY_GLOB} from the "
                                 "slangpy wheel, or unset it")
        return Path(override)
    spec = importlib.util.find_spec("slangpy")
    if spec is None or not spec.submodule_search_locations:
        raise ToolchainError(f"the Slang compiler is missing: package 'slangpy' (which ships {LIBRARY_GLOB}) is "
                             f"not installed -> {INSTALL_FIX}")
    for directory in spec.submodule_search_locations:
        found = sorted(Path(directory).glob(LIBRARY_GLOB))
        if found:
            return found[-1]
    raise ToolchainError(f"slangpy is installed at {', '.join(spec.submodule_search_locations)} but holds no "
                         f"{LIBRARY_GLOB} -> pip install --force-reinstall slangpy==0.43.1")


def library_version(path: Path) -> str:
    """``libslang-compiler.so.0.2026.12`` -> ``0.2026.12`` (the file name where it carries none)."""
    match = re.fullmatch(r"libslang-compiler\.so\.(.+)", path.name)
    return match.group(1) if match else path.name


_lock = threading.Lock()  # one global session; Slang's requests on it are not thread-safe


@functools.cache
def _session() -> tuple[ctypes.CDLL, ctypes.c_void_p]:
    """The library, its prototypes and one global session (created once: about 0.5 s)."""
    path = library_path()
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise ToolchainError(f"cannot load the Slang compiler {path}: {exc} -> {INSTALL_FIX}") from exc
    vp = ctypes.c_void_p
    lib.slang_createGlobalSession.argtypes = [ctypes.c_int64, ctypes.POINTER(vp)]
    lib.slang_createGlobalSession.restype = ctypes.c_int32
    lib.spCreateCompileRequest.argtypes = [vp]
    lib.spCreateCompileRequest.restype = vp
    lib.spDestroyCompileRequest.argtypes = [vp]
    lib.spDestroyCompileRequest.restype = None
    lib.spProcessCommandLineArguments.argtypes = [vp, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
    lib.spProcessCommandLineArguments.restype = ctypes.c_int32
    lib.spCompile.argtypes = [vp]
    lib.spCompile.restype = ctypes.c_int32
    lib.spGetDiagnosticOutput.argtypes = [vp]
    lib.spGetDiagnosticOutput.restype = ctypes.c_char_p
    lib.spGetEntryPointCode.argtypes = [vp, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
    lib.spGetEntryPointCode.restype = vp
    session = vp()
    status = lib.slang_createGlobalSession(_SLANG_API_VERSION, ctypes.byref(session))
    if status < 0 or not session:
        raise ToolchainError(f"the Slang compiler {path} could not create a session (status {status:#x}) -> "
                             f"{INSTALL_FIX}")
    return lib, session


def _compile_uncached(source: str, name: str) -> bytes:
    lib, session = _session()
    with _lock, tempfile.TemporaryDirectory(prefix="ctsgen-slang-") as tmp:
        path = Path(tmp) / "module.slang"
        path.write_text(source, encoding="utf-8")
        args = [*ARGUMENTS, "-o", str(Path(tmp) / "module.spv"), str(path)]
        argv = (ctypes.c_char_p * len(args))(*(a.encode() for a in args))
        request = lib.spCreateCompileRequest(session)
        if not request:
            raise ToolchainError(f"the Slang compiler {library_path()} made no compile request -> {INSTALL_FIX}")
        try:
            status = lib.spProcessCommandLineArguments(request, argv, len(args))
            if status >= 0:
                status = lib.spCompile(request)
            log = (lib.spGetDiagnosticOutput(request) or b"").decode("utf-8", errors="replace")
            log = log.replace(str(path), name)
            if status < 0:  # never ask a failed request for code: the library crashes (module docstring)
                raise SlangCompileError(describe(log, name, status), log)
            size = ctypes.c_size_t()
            code = lib.spGetEntryPointCode(request, 0, ctypes.byref(size))
            spirv = ctypes.string_at(code, size.value) if code else b""
        finally:
            lib.spDestroyCompileRequest(request)
    if not spirv or len(spirv) % 4 or int.from_bytes(spirv[:4], "little") != SPIRV_MAGIC:
        raise ToolchainError(f"Slang ({library_path()}) returned {len(spirv)} bytes that are not a SPIR-V module "
                             f"for {name} -> {INSTALL_FIX}")
    return spirv


def describe(log: str, name: str, status: int) -> str:
    """One line from Slang's diagnostics: the first error's code and message, and where it is.

    Slang writes ``error[E30015]: undefined identifier`` then `` --> FILE:LINE:COL``, the source
    line and ``^^^ detail``."""
    lines = [ln.strip() for ln in log.splitlines()]
    first = next((i for i, ln in enumerate(lines) if ln.startswith("error")), None)
    if first is None:
        return f"Slang could not compile {name} (status {status:#x}, no error printed)"
    where = detail = ""
    for ln in lines[first + 1:]:
        if ln.startswith("error") or ln.startswith("note"):
            break
        if ln.startswith("-->") and not where:
            where = " at " + ln[3:].strip()
        elif "^" in ln and not detail:
            detail = ": " + ln.split("^")[-1].strip()
    return f"Slang could not compile {name}: {lines[first]}{where}{detail}"


def compile_slang(source: str, name: str = "shader.slang") -> bytes:
    """SPIR-V for a Slang compute shader (entry point ``main``), from the disk cache or Slang.

    ``name`` labels diagnostics only. :class:`SlangCompileError` (one line) where Slang refuses
    the source, :class:`ToolchainError` where the library is missing."""
    key = cache_key(source, library_path(), COMPILE_OPTIONS)
    disk = SpirvCache()
    spirv = disk.get(key)
    if spirv is None:
        spirv = _compile_uncached(source, name)
        disk.put(key, spirv)
    return spirv
