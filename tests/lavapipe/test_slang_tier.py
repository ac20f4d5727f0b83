"""The slang route on lavapipe (conftest.py: how lavapipe is found): a coopmat-kernel pack along slang
passes, glslang and slang agree where lavapipe is right, and the one disagreement the route found is
pinned: lavapipe clobbers a MulAdd's Accumulator operand when K is more than its 8-wide granule and
that operand is used again (docs/validation.md, "lavapipe: a MulAdd's Accumulator operand")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lavapipe_support import REPO, Lavapipe

#: every test drives lavapipe in ctsgen subprocesses
pytestmark = pytest.mark.slow

PROFILE = REPO / "ctsgen" / "device" / "profiles" / "mesa-lavapipe-26.2.6.txt"

#: Both routes' verdicts of one hand-made kernel on lavapipe: ``c0 = A x B + c1``, then c0 and c1 stored.
_PINNED = """
import json, sys
from ctsgen.backends.registry import open_backend
from ctsgen.execute.run import drawn, run_cases
from ctsgen.families.coopmat_kernel.case import KernelCase, KernelVariant
from ctsgen.kernel import ir
from ctsgen.kernel.ir import Kernel, Ref
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.khr_addressing import Layout
from ctsgen.toolchain.variants import compile_variant

backend = open_backend("vulkan", isolation="none")
out = {}
for m, n, k in ((8, 8, 8), (16, 8, 8), (16, 16, 16), (8, 24, 16)):
    F16, F32, ROW = ComponentType.float16, ComponentType.float32, Layout.RowMajor
    body = tuple(ir.Load(Ref(v)) for v in ("a0", "b0", "c0", "c1")) + (ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c1")),)
    kern = Kernel(MatrixType(F16, Scope.Subgroup, m, k, MatrixUse.A, 8), MatrixType(F16, Scope.Subgroup, k, n, MatrixUse.B, 8),
                  MatrixType(F32, Scope.Subgroup, m, n, MatrixUse.Accumulator, 8), 1, (1, 1, 2), 0, (ROW, ROW, ROW),
                  (None, None), (), body)
    case = KernelCase(KernelVariant(kern, (m, n, k) != (8, 8, 8)), (), 7)
    for route in ("glslang", "slang"):
        sv = compile_variant(case.variant(), case.family, route=route)
        r = run_cases(backend, sv, [drawn(case, case.data())], 60).results[0]
        out[f"{m}x{n}x{k} {route}"] = [r.status.name, sorted({x.get("value") for x in r.mismatches})]
print(json.dumps(out))
"""


def test_the_muladd_accumulator_finding_is_lavapipes_and_only_along_slang(lavapipe: Lavapipe) -> None:
    done = lavapipe.run(["-c", _PINNED], timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    for shape in ("8x8x8", "16x8x8", "16x16x16", "8x24x16"):
        assert got[f"{shape} glslang"][0] == "Pass", got
    assert got["8x8x8 slang"][0] == got["16x8x8 slang"][0] == "Pass", got  # K within the 8-wide granule
    for shape in ("16x16x16", "8x24x16"):  # K = 16: c1, the MulAdd's Accumulator, comes back changed
        assert got[f"{shape} slang"] == ["Fail", ["c1"]], got


def test_a_pack_along_slang_of_the_listed_sizes_passes_on_lavapipe(lavapipe: Lavapipe, tmp_path: Path) -> None:
    """Without flexible dimensions lavapipe lists 8x8x8 MulAdds only: K never passes its granule."""
    profile = tmp_path / "lavapipe-listed.txt"
    text = PROFILE.read_text()
    profile.write_text(re.sub(r"'cooperativeMatrixFlexibleDimensions': 1", "'cooperativeMatrixFlexibleDimensions': 0",
                              text))
    pack = tmp_path / "pack"
    made = lavapipe.ctsgen("generate", "--family", "coopmat-kernel", "--route", "slang", "--profile", str(profile),
                           "--count", "12", "--out", str(pack), "--jobs", "1")
    assert made.returncode == 0, made.stderr
    ran = lavapipe.ctsgen("run", str(pack), "--backend", "vulkan", "--route", "slang", "--quiet")
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_glslang_and_slang_disagree_only_where_the_pinned_finding_reaches(lavapipe: Lavapipe, tmp_path: Path) -> None:
    """fuzz --routes glslang,slang draws lavapipe's own profile (flexible sizes included): every route
    finding it makes is a slang failure of a kernel whose K passes the 8-wide granule, and nothing
    fails along glslang."""
    repros = tmp_path / "repros"
    done = lavapipe.ctsgen("fuzz", "--backend", "vulkan", "--family", "coopmat-kernel", "--routes", "glslang,slang",
                           "--max-examples", "4", "--max-batch", "8", "--min-batch", "1", "--seed", "3",
                           "--database", "none", "--repro-dir", str(repros), timeout=300)
    assert "routes: glslang " in done.stdout and ", slang " in done.stdout, done.stdout + done.stderr
    findings = repros / "route-findings.json"
    if done.returncode == 0:
        assert "no failure found" in done.stdout and not findings.exists()
        return
    assert done.returncode == 1 and findings.is_file(), done.stdout + done.stderr
    for bucket in json.loads(findings.read_text()):
        kernel = bucket["case"]["variant"]["kernel"]
        assert (bucket["route"], bucket["passing_route"]) == ("slang", "glslang"), bucket["key"]
        assert kernel["a"]["cols"] > 8 and '"muladd"' in json.dumps(kernel), bucket["key"]
