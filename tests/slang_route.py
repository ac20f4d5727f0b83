"""What every family with a Slang source proves along the ``slang`` route (docs/spec-decisions.md
"compiler-routes"): drawn variants of each stratum compile through Slang, pass spirv-val, carry the
instruction the family tests, and keep the GLSL module's signature; a small pack passes on the
reference backend."""

from __future__ import annotations

from pathlib import Path

from ctsgen.cli import main
from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import ProfileLacksError, default_profile, load_profile
from ctsgen.families import get_family
from ctsgen.pack.read import load_pack, pack_routes, validate_shaders
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.spirv_patch import opcodes
from ctsgen.toolchain.variants import compile_variant

REPO = Path(__file__).resolve().parents[1]
LAVAPIPE_PROFILE = REPO / "ctsgen" / "device" / "profiles" / "mesa-lavapipe-26.2.6.txt"


def strata_compile_along_slang(family: str, opcode: int, per_stratum: int = 2, seed: int = 1) -> int:
    """Draw ``per_stratum`` variants of every stratum on the embedded H100 profile and on lavapipe's,
    compile each along slang (validated by spirv-val) and along glslang; assert the Slang module holds
    ``opcode`` and keeps the variant's buffers, workgroup size and requirements; the first variant also as
    a standalone repro (its parameter record baked in). The number compiled."""
    fam = get_family(family)
    done = 0
    for profile in (default_profile(), load_profile(LAVAPIPE_PROFILE)):
        for stratum in fam.strata():
            try:
                drawn = draw_examples(fam.variants(StrategyOptions(profile=profile), **stratum), per_stratum, seed)
            except ProfileLacksError:
                continue
            for v in drawn:
                along = compile_variant(v, fam.name, route="slang", validator=fam.validator)
                plain = compile_variant(v, fam.name, validator=fam.validator)
                assert along.id == f"{v.id}~slang" and along.spirv != plain.spirv, v.id
                assert opcode in opcodes(along.spirv), v.id
                assert (along.buffers, along.local_size_x, along.requirements) == \
                    (plain.buffers, plain.local_size_x, plain.requirements), v.id
                if not done:
                    baked = compile_variant(v, fam.name, route="slang", validator=fam.validator, baked=[0] * 64)
                    assert opcode in opcodes(baked.spirv) and baked.spirv != along.spirv, v.id
                done += 1
    return done


def slang_pack_passes_on_the_reference(family: str, tmp_path: Path, count: int = 24) -> None:
    """``generate --route slang`` on the embedded H100 profile, then ``run --backend reference``."""
    out = tmp_path / "pack"
    assert main(["generate", "--family", family, "--route", "slang", "--count", str(count), "--seed", "1",
                 "--out", str(out), "--jobs", "1"]) == 0
    pack = load_pack(out)
    validate_shaders(pack)
    assert pack_routes(pack) == {"slang"}
    assert main(["run", str(out), "--route", "slang", "--backend", "reference", "--quiet",
                 "--results", str(tmp_path / "r.jsonl")]) == 0
