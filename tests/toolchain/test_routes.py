"""Compiler routes (ctsgen/toolchain/routes.py): their declarations, their part of the SPIR-V cache
key, compile_variant along each, and the toolchain finding a route's invalid module becomes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import ctsgen.toolchain as toolchain
from ctsgen.core.family import StrategyOptions
from ctsgen.errors import UnknownNameError
from ctsgen.families import get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import glslang, spirv_opt
from ctsgen.toolchain.findings import route_failure, write_finding
from ctsgen.toolchain.routes import (DEFAULT_ROUTE, ROUTES, Route, RouteRefusedError, ToolchainFinding, get_route,
                                     parse_routes, real_routes)
from ctsgen.toolchain.spirv_mutate import drop_last_store, swap_mul_add_ab
from ctsgen.toolchain.spirv_patch import instructions, to_words
from ctsgen.toolchain.variants import compile_variant

KHR = get_family("coopmat-khr")


def khr_variant(operation: str):
    """The first coopmat-khr variant of ``operation`` a fixed seed draws (the reference profile)."""
    return next(v for v in draw_examples(KHR.variants(StrategyOptions(profile=None)), 60, 3)
                if v.to_json()["op"] == operation)


def test_the_default_route_comes_first_and_all_leaves_the_mutant_routes_out() -> None:
    assert next(iter(ROUTES)) == DEFAULT_ROUTE and ROUTES[DEFAULT_ROUTE].is_default
    assert {"glslang", "glslang-O1", "slang", "opt-O", "opt-Os", "opt-loops"} == {r.name for r in real_routes()}
    assert [r.name for r in parse_routes("all")] == [r.name for r in real_routes()]
    assert all(ROUTES[n].mutant for n in ("mutant-swap-ab", "mutant-drop-store"))
    # the baseline comes first whatever the order asked, and a name given twice counts once
    assert [r.name for r in parse_routes("opt-O,glslang,opt-O")] == ["glslang", "opt-O"]


@pytest.mark.parametrize("text", ["opt-Z", "", " , "])
def test_an_unknown_route_names_the_known_ones(text: str) -> None:
    with pytest.raises(UnknownNameError, match="opt-loops"):
        parse_routes(text) if text.strip(" ,") == "" else get_route(text)


def test_the_optimization_level_is_part_of_the_cache_key_and_changes_the_module(private_cache: Path) -> None:
    assert glslang.compile_options(0) == glslang.COMPILE_OPTIONS != glslang.compile_options(1)
    source = khr_variant("muladd").glsl()
    plain, o1 = toolchain.compile_glsl(source), toolchain.compile_glsl(source, optimization=1)
    assert plain != o1  # glslang's optimizer ran
    assert len(list(private_cache.rglob("*.spv"))) == 2  # two entries: one per level
    toolchain.clear_memory_cache()
    assert toolchain.compile_glsl(source, optimization=1) == o1  # read back from its own entry


def test_each_route_compiles_a_valid_module_with_its_own_id_and_the_optimizers_change_it() -> None:
    v = khr_variant("muladd")
    base = compile_variant(v, "coopmat-khr")
    assert base.id == v.id
    for name in ("glslang-O1", "opt-O", "opt-Os", "opt-loops", "mutant-drop-store"):
        sv = compile_variant(v, "coopmat-khr", route=name)  # validated: spirv-val --target-env vulkan1.3
        assert sv.id == f"{v.id}~{name}" and sv.spirv != base.spirv, name


def test_an_optimizer_route_is_cached_by_its_input_and_passes(private_cache: Path) -> None:
    spirv = compile_variant(khr_variant("muladd"), "coopmat-khr").spirv
    before = len(list(private_cache.rglob("*.spv")))
    once = spirv_opt.optimize(spirv, ("-O",))
    assert len(list(private_cache.rglob("*.spv"))) == before + 1
    assert spirv_opt.optimize(spirv, ("-O",)) == once
    assert spirv_opt.optimize(spirv, ("-Os",)) is not None
    assert len(list(private_cache.rglob("*.spv"))) == before + 2


def test_the_mutant_transforms_change_what_they_say() -> None:
    spirv = compile_variant(khr_variant("muladd"), "coopmat-khr").spirv
    muladd = [ops for _, op, ops in instructions(to_words(spirv)) if op == 4459][0]
    swapped = [ops for _, op, ops in instructions(to_words(swap_mul_add_ab(spirv))) if op == 4459][0]
    assert swapped[2:4] == [muladd[3], muladd[2]] and swapped[4:] == muladd[4:]
    stores = [op for _, op, _ in instructions(to_words(spirv)) if op in (62, 4458, 5368)]
    dropped = [op for _, op, _ in instructions(to_words(drop_last_store(spirv))) if op in (62, 4458, 5368)]
    assert dropped == stores[:-1]


def test_a_routes_invalid_module_is_a_toolchain_finding_and_the_default_routes_stays_an_error() -> None:
    v = khr_variant("muladd")
    with pytest.raises(ToolchainFinding) as found:
        compile_variant(v, "coopmat-khr", route="mutant-swap-ab")
    f = found.value
    assert (f.route, f.stage, f.kind, f.variant_id) == ("mutant-swap-ab", "validator", "invalid", v.id)
    assert f.output == swap_mul_add_ab(f.produced) and "CooperativeMatrixMulAddKHR" in f.messages


def test_an_optimizer_that_fails_is_a_toolchain_finding_with_its_command() -> None:
    broken = Route("planted-bad-pass", "spirv-opt given a pass it does not know", passes=("--no-such-pass",))
    with pytest.raises(ToolchainFinding) as found:
        compile_variant(khr_variant("muladd"), "coopmat-khr", route=broken)
    assert found.value.stage == "optimizer" and found.value.kind == "error"
    assert "--no-such-pass" in found.value.command and found.value.output is None


def test_a_route_refuses_a_family_whose_modules_its_tools_cannot_read() -> None:
    dv = get_family("decode-vector")
    v = draw_examples(dv.variants(StrategyOptions(profile=None)), 1, 0)[0]
    for name in ("opt-O", "glslang-O1"):  # spirv-opt does not know its extension; O1 drops its vector function
        with pytest.raises(RouteRefusedError, match="another --route"):
            compile_variant(v, "decode-vector", route=name, validator=dv.validator)


def test_a_toolchain_finding_is_written_reduced_with_its_commands(tmp_path: Path) -> None:
    with pytest.raises(ToolchainFinding) as found:
        compile_variant(khr_variant("muladd"), "coopmat-khr", route="mutant-swap-ab")
    folder = write_finding(found.value, tmp_path, reduce_s=120)
    report = (folder / "REPORT.md").read_text()
    for line in ("spirv-val --target-env vulkan1.3 output.spv", "spirv-reduce produced.spv -o reduced.spv",
                 "reduced-output.spv"):
        assert line in report, line
    produced, reduced = (folder / "produced.spv").read_bytes(), (folder / "reduced.spv").read_bytes()
    assert len(reduced) < len(produced) / 2
    # the reduced input still makes the route fail the same way, and the test script says so
    assert route_failure("mutant-swap-ab", reduced) == route_failure("mutant-swap-ab", produced) is not None
    assert subprocess.run([str(folder / "interesting.py"), str(folder / "reduced.spv")], timeout=60).returncode == 0
    assert subprocess.run([str(folder / "interesting.py"), str(folder / "source.comp")], timeout=60).returncode != 0


def test_an_optimizer_past_its_bound_is_a_hang_and_its_finding_is_written_unreduced(tmp_path: Path) -> None:
    spirv = compile_variant(khr_variant("muladd"), "coopmat-khr").spirv
    with pytest.raises(spirv_opt.OptimizerError) as hung:
        spirv_opt.optimize(spirv, ("-O", "--loop-unroll"), timeout_s=0.0001)
    assert hung.value.kind == "hang" and "ran past" in str(hung.value)
    finding = ToolchainFinding("hang", route="opt-O", family="coopmat-khr", variant_id="v", stage="optimizer",
                               kind="hang", produced=spirv, output=None, command=hung.value.command, messages="",
                               glsl="// source")
    folder = write_finding(finding, tmp_path)
    assert "a hang is not reduced" in (folder / "REPORT.md").read_text()
    assert not (folder / "reduced.spv").exists() and not (folder / "output.spv").exists()
