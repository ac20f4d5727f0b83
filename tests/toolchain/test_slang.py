"""The slang route (ctsgen/toolchain/slang.py, routes.py, variants.py): the binding to the Slang
compiler in the slangpy wheel, its one-line diagnostics, its cache key, and the route that compiles a
family's Slang source and refuses, in one line, a family that gives none."""

from __future__ import annotations

import pytest

from ctsgen.core.family import StrategyOptions
from ctsgen.families import get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import slang, validate_spirv
from ctsgen.toolchain.cache import SpirvCache, cache_key
from ctsgen.toolchain.routes import SLANG, RouteRefusedError, get_route, parse_routes
from ctsgen.toolchain.spirv_patch import opcodes
from ctsgen.toolchain.variants import compile_variant, route_refusal

TRIVIAL = """RWStructuredBuffer<uint> buf;
[shader("compute")]
[numthreads(32, 1, 1)]
void main(uint3 tid : SV_DispatchThreadID) { buf[tid.x] = tid.x; }
"""
OP_COOPERATIVE_MATRIX_STORE = 4458  # every kernel stores its Accumulators


def test_slang_compiles_a_module_that_spirv_val_accepts_and_caches_it(private_cache) -> None:
    spirv = slang.compile_slang(TRIVIAL, "trivial.slang")
    assert spirv[:4] == (0x07230203).to_bytes(4, "little") and len(spirv) % 4 == 0
    validate_spirv(spirv)
    key = cache_key(TRIVIAL, slang.library_path(), slang.COMPILE_OPTIONS)
    assert SpirvCache().get(key) == spirv
    assert "producer=slang" in slang.COMPILE_OPTIONS  # never the key of a glslang module of the same text


def test_a_refused_source_is_one_line_naming_the_error_and_where_and_the_next_compile_works() -> None:
    bad = TRIVIAL.replace("= tid.x;", "= tid.x + nosuch;")
    with pytest.raises(slang.SlangCompileError) as info:
        slang.compile_slang(bad, "bad.slang")
    message = str(info.value)
    assert "\n" not in message
    assert "undefined identifier" in message and "bad.slang:4:" in message and "nosuch" in message
    assert "nosuch" in info.value.diagnostics
    # a failed request is never asked for code (that crashes this build): the session still compiles
    assert slang.compile_slang(TRIVIAL + "\n// again\n", "again.slang")


@pytest.mark.parametrize("source", ["", "\ufeff" + TRIVIAL, TRIVIAL.replace("\n", "\r\n"), "\x00\x01binary"])
def test_empty_bom_crlf_and_binary_sources(source: str) -> None:
    """A BOM or CRLF source compiles as the plain one; an empty or binary one is one line, no crash."""
    if "main" in source:
        validate_spirv(slang.compile_slang(source, "odd.slang"))
        return
    with pytest.raises(slang.ToolchainError) as info:
        slang.compile_slang(source, "odd.slang")
    assert "\n" not in str(info.value)


def test_a_missing_library_is_one_line_naming_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv(slang.ENV_VAR, str(tmp_path / "nope.so"))
    slang.library_path.cache_clear()
    try:
        assert "CTSGEN_SLANG_LIBRARY" in get_route("slang").missing()
    finally:
        monkeypatch.delenv(slang.ENV_VAR)
        slang.library_path.cache_clear()
    assert get_route("slang").missing() is None


def test_the_slang_route_is_declared_with_its_own_producer_and_taken_by_all() -> None:
    route = get_route("slang")
    assert route.producer == SLANG and not route.passes and not route.mutant
    assert route.recipe.startswith("slang (-target spirv")
    assert "slang" in [r.name for r in parse_routes("all")]


def test_a_kernel_compiles_along_slang_to_a_different_module_of_the_same_signature() -> None:
    fam = get_family("coopmat-kernel")
    v = next(iter(draw_examples(fam.variants(StrategyOptions(profile=None)), 1, 5)))
    along = compile_variant(v, fam.name, route="slang", validator=fam.validator)
    plain = compile_variant(v, fam.name, validator=fam.validator)
    assert along.id == f"{v.id}~slang" and along.spirv != plain.spirv
    assert (along.buffers, along.local_size_x, along.requirements) == (plain.buffers, plain.local_size_x,
                                                                       plain.requirements)
    assert OP_COOPERATIVE_MATRIX_STORE in opcodes(along.spirv)
    assert route_refusal(get_route("slang"), fam) is None


def test_a_family_without_a_slang_source_is_refused_in_one_line() -> None:
    fam = get_family("decode-vector")  # the one family Slang cannot express (docs/spec-decisions.md)
    why = route_refusal(get_route("slang"), fam)
    assert why is not None and "decode-vector gives none" in why
    v = next(iter(draw_examples(fam.variants(StrategyOptions(profile=None)), 1, 5)))
    with pytest.raises(RouteRefusedError) as info:
        compile_variant(v, fam.name, route="slang")
    assert "\n" not in str(info.value) and "-> use another --route" in str(info.value)


def test_decode_vector_is_refused_though_its_variant_inherits_decodes_slang_source() -> None:
    """decode-vector's variant subclasses decode's, which has a Slang source; its module is glslang's
    rewritten, so the family declares none (``slang = None``) and is refused, not given decode's shader."""
    assert route_refusal(get_route("slang"), get_family("decode")) is None
    assert get_family("decode-vector").variant_type.slang is None


def test_a_coopmat_kernel_pack_along_slang_records_its_route_and_passes_on_the_reference(tmp_path) -> None:
    import json

    from ctsgen.cli import main
    from ctsgen.pack.read import load_pack, pack_routes, validate_shaders

    out = tmp_path / "pack"
    assert main(["generate", "--family", "coopmat-kernel", "--route", "slang", "--count", "20", "--profile",
                 "ctsgen/device/profiles/mesa-lavapipe-26.2.6.txt", "--out", str(out), "--jobs", "1"]) == 0
    m = json.loads((out / "manifest.json").read_text())
    assert {r["route"] for r in m["variants"].values()} == {"slang"}
    pack = load_pack(out)
    validate_shaders(pack)
    assert pack_routes(pack) == {"slang"}
    assert main(["run", str(out), "--route", "slang", "--backend", "reference", "--quiet",
                 "--results", str(tmp_path / "r.jsonl")]) == 0


def test_generate_along_slang_refuses_a_family_without_a_source_in_one_line(tmp_path, capsys) -> None:
    from one_line_errors import fails_with

    # decode-vector: the one family without a Slang source; the reference profile, as no shipped device has it
    line = fails_with(capsys, ["generate", "--family", "decode-vector", "--route", "slang", "--count", "4",
                               "--profile", "reference", "--out", str(tmp_path / "p")])
    assert "decode-vector gives none" in line


def test_a_toolchain_finding_along_slang_keeps_its_slang_source(tmp_path) -> None:
    from ctsgen.toolchain.findings import write_finding
    from ctsgen.toolchain.routes import ToolchainFinding

    spirv = slang.compile_slang(TRIVIAL, "trivial.slang")
    finding = ToolchainFinding("toolchain finding", route="slang", family="coopmat-kernel", variant_id="v",
                               stage="validator", kind="invalid", produced=spirv, output=spirv, command=[],
                               messages="error: line 1: planted", glsl=TRIVIAL)
    folder = write_finding(finding, tmp_path, reduce_s=5)
    assert (folder / "source.slang").read_text() == TRIVIAL and not (folder / "source.comp").exists()
    assert "`source.slang`: the variant's source" in (folder / "REPORT.md").read_text()
