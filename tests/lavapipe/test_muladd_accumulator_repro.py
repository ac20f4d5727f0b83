"""docs/repros/lavapipe-muladd-accumulator's standalone repro, as its README promises: muladd.spv is
muladd.spvasm assembled and valid, and run.c, built with this machine's C compiler against the prefix's
headers, prints run.log on lavapipe, where the MulAdd's C operand comes back changed for K > 8. The
second test pins the finding: it fails once lavapipe keeps C's value (Mesa fixed), saying so."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ctsgen.toolchain.spirv_val import tool_path
from lavapipe_support import REPO, Lavapipe

REPRO = REPO / "docs" / "repros" / "lavapipe-muladd-accumulator"
TIMEOUT_S = 120


def test_muladd_spv_is_its_assembly_and_valid(tmp_path: Path) -> None:
    """The README's first two lines: spirv-as gives the shipped module byte for byte, spirv-val accepts it."""
    assembled = tmp_path / "muladd.spv"
    spirv_as = subprocess.run([str(tool_path("spirv-as", "the SPIR-V assembler")), "--target-env", "vulkan1.3",
                               "-o", str(assembled), str(REPRO / "muladd.spvasm")],
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert spirv_as.returncode == 0, spirv_as.stderr
    assert assembled.read_bytes() == (REPRO / "muladd.spv").read_bytes(), \
        "muladd.spv is not muladd.spvasm assembled -> spirv-as --target-env vulkan1.3 -o muladd.spv muladd.spvasm"
    val = subprocess.run([str(tool_path("spirv-val", "the SPIR-V validator")), "--target-env", "vulkan1.3",
                          str(REPRO / "muladd.spv")], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert val.returncode == 0, val.stdout + val.stderr


def _logged_output() -> str:
    """run.log less its header (the build and run commands, lines starting with '#'): the runner's stdout."""
    return "".join(line for line in (REPRO / "run.log").read_text().splitlines(keepends=True)
                   if not line.startswith("#"))


@pytest.mark.slow
def test_the_runner_prints_its_log_and_c_comes_back_as_the_granules_but_the_last(
        lavapipe: Lavapipe, c_compiler: str, tmp_path: Path) -> None:
    include = Path(lavapipe.launcher).resolve().parent / "usr" / "include"
    assert (include / "vulkan" / "vulkan_core.h").exists(), \
        f"{include} has no Vulkan headers -> run .ci/lavapipe.sh PREFIX again (it unpacks libvulkan-dev)"
    built = subprocess.run([c_compiler, "-O2", "-I", str(include), "-o", str(tmp_path / "run"), str(REPRO / "run.c"),
                            "-ldl"], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([lavapipe.launcher, str(tmp_path / "run"), "muladd.spv"], cwd=REPRO, env=lavapipe.env,
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    out = ran.stdout
    # the result D = A x B + C is right at every K: only the C operand's later value is wrong
    assert re.findall(r"^  D: (\d+) of 256", out, re.MULTILINE) == ["0", "0", "0"], out + ran.stderr
    if "  C: 0 of 256 elements differ from 0\n  pass\nM x N x K = 16 x 16 x 24" in out:
        pytest.fail("lavapipe now keeps the MulAdd's C operand at K = 16: the muladd-accumulator finding looks "
                    "fixed -> say so in docs/repros/lavapipe-muladd-accumulator/README.md and docs/validation.md, "
                    f"and retire this test and run.log\n{out}")
    # the finding: C comes back as the product of every 8-wide K granule but the last (A = B = 1, C = 0)
    assert re.findall(r"^  C came back as (\d+) everywhere", out, re.MULTILINE) == ["8", "16"], out
    assert ran.returncode == 1 and out == _logged_output(), out + ran.stderr
