"""docs/repros/lavapipe-struct-member-crash's standalone repro, as its README promises: every module is
its source (GLSL through ctsgen's glslang, or hand-written assembly) and valid, and run.c, built with
this machine's C compiler against the prefix's headers, prints run.log on lavapipe: the struct modules
larger than the 8x8 granule kill the child with SIGSEGV, the controls copy the matrix. The second test
pins the finding: it fails once lavapipe builds struct.spv (Mesa fixed), saying what to update."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ctsgen.toolchain import compile_glsl
from ctsgen.toolchain.spirv_val import tool_path
from lavapipe_support import REPO, Lavapipe

REPRO = REPO / "docs" / "repros" / "lavapipe-struct-member-crash"
TIMEOUT_S = 120
#: run.log's command line, in the order it runs them
MODULES = ("plain.spv", "struct.spv", "struct8.spv", "struct-ssa.spv", "struct-whole.spv")
CRASHING = {"struct.spv", "struct-whole.spv"}


def test_every_module_is_its_source_and_valid(tmp_path: Path) -> None:
    """The .comp files compiled by ctsgen's glslang and the .spvasm files assembled give the shipped
    modules byte for byte, and spirv-val (vulkan1.3) accepts all of them: the crash is the driver's."""
    for comp in sorted(REPRO.glob("*.comp")):
        assert compile_glsl(comp.read_text(), comp.name) == comp.with_suffix(".spv").read_bytes(), \
            f"{comp.with_suffix('.spv').name} is not {comp.name} compiled -> regenerate it with " \
            "ctsgen.toolchain.compile_glsl (README, 'Reproduce')"
    for asm in sorted(REPRO.glob("*.spvasm")):
        out = tmp_path / asm.with_suffix(".spv").name
        assembled = subprocess.run([str(tool_path("spirv-as", "the SPIR-V assembler")), "--target-env", "vulkan1.3",
                                    "-o", str(out), str(asm)], capture_output=True, text=True, timeout=TIMEOUT_S,
                                   check=False)
        assert assembled.returncode == 0, assembled.stderr
        assert out.read_bytes() == asm.with_suffix(".spv").read_bytes(), \
            f"{out.name} is not {asm.name} assembled -> spirv-as --target-env vulkan1.3 -o {out.name} {asm.name}"
    shipped = sorted(p.name for p in REPRO.glob("*.spv"))
    assert shipped == sorted(MODULES)
    for name in shipped:
        val = subprocess.run([str(tool_path("spirv-val", "the SPIR-V validator")), "--target-env", "vulkan1.3",
                              str(REPRO / name)], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        assert val.returncode == 0, name + ": " + val.stdout + val.stderr


def _logged_output() -> str:
    """run.log less its header (lines starting with '#'): the runner's stdout."""
    return "".join(line for line in (REPRO / "run.log").read_text().splitlines(keepends=True)
                   if not line.startswith("#"))


def _outcomes(out: str) -> dict[str, str]:
    """Each module's last line in the runner's output: 'pass', 'crashed with signal N (...)', or what failed."""
    blocks = re.split(r"^(\S+\.spv):\n", out, flags=re.MULTILINE)[1:]
    return {name: body.rstrip("\n").splitlines()[-1].strip() for name, body in zip(blocks[::2], blocks[1::2])}


@pytest.mark.slow
def test_the_runner_prints_its_log_the_struct_modules_crash_and_the_controls_pass(
        lavapipe: Lavapipe, c_compiler: str, tmp_path: Path) -> None:
    include = Path(lavapipe.launcher).resolve().parent / "usr" / "include"
    assert (include / "vulkan" / "vulkan_core.h").exists(), \
        f"{include} has no Vulkan headers -> run .ci/lavapipe.sh PREFIX again (it unpacks libvulkan-dev)"
    built = subprocess.run([c_compiler, "-O2", "-Wall", "-Werror", "-I", str(include), "-o", str(tmp_path / "run"),
                            str(REPRO / "run.c"), "-ldl"], capture_output=True, text=True, timeout=TIMEOUT_S,
                           check=False)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([lavapipe.launcher, str(tmp_path / "run"), *MODULES], cwd=REPRO, env=lavapipe.env,
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    outcomes = _outcomes(ran.stdout)
    assert list(outcomes) == list(MODULES), ran.stdout + ran.stderr
    if "crashed" not in outcomes["struct.spv"]:
        pytest.fail("lavapipe now builds struct.spv (a 16x16 Accumulator in a struct): the struct-member crash "
                    "looks fixed -> say so in docs/repros/lavapipe-struct-member-crash/README.md, "
                    "docs/validation.md ('Structs of matrices on lavapipe') and docs/spec-decisions.md "
                    "(kernel-structs' hazard), and retire this test and run.log\n" + ran.stdout)
    for name, outcome in outcomes.items():
        if name in CRASHING:
            assert outcome == "crashed with signal 11 (Segmentation fault)", (name, ran.stdout)
        else:
            assert outcome.endswith(": pass"), (name, ran.stdout)  # the controls copy the matrix
    assert ran.returncode == 1 and ran.stdout == _logged_output(), ran.stdout + ran.stderr
    # a file that is not SPIR-V (empty, or junk that once crashed lavapipe) is a usage error, never a crash
    (tmp_path / "empty.spv").write_bytes(b"")
    (tmp_path / "junk.spv").write_bytes(bytes(range(7, 107)))
    for name in ("empty.spv", "junk.spv"):
        bad = subprocess.run([lavapipe.launcher, str(tmp_path / "run"), name], cwd=tmp_path, env=lavapipe.env,
                             capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        assert bad.returncode == 2 and "not a SPIR-V module" in bad.stdout, bad.stdout + bad.stderr
