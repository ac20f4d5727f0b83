"""Strategies follow the device profile: for every fixture profile (the H100's read-out, lavapipe's read
off the live driver, RADV's and ANV's written from Mesa's sources) and every family, what is drawn is
what that profile allows, a family it cannot run is refused in one line naming the missing feature,
and ``generate --profile`` never ends in a traceback or Hypothesis's Unsatisfiable."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from ctsgen.cli import main
from ctsgen.device.profile import DeviceProfile, ProfileLacksError, Requirements, load_profile
from ctsgen.families import families, get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.families.gating import families_it_runs
from ctsgen.pack.generate import check_runnable, drawable_strata
from ctsgen.strategies.sampling import draw_examples

PROFILES = sorted((Path(__file__).resolve().parents[1] / "ctsgen" / "device" / "profiles").glob("*.txt"))


def _read_out(path: Path) -> tuple[set[str], set[str]]:
    """The extensions a fixture lists (an ``extensions`` line, or an early read-out's comment naming
    those present) and the feature bits it sets to 1, read off its text as written (not through
    parse_profile), so that the gate is held against the read-out itself."""
    lines = path.read_text().splitlines()
    extensions = {e for ln in lines if ln.startswith(("extensions ", "# Device extensions present"))
                  for e in re.findall(r"\bVK_\w+", ln)}
    features = {m for ln in lines if " feats " in ln for m in re.findall(r"'(\w+)': 1\b", ln)}
    return extensions, features


def _needs_met(family: str, path: Path) -> bool:
    extensions, features = _read_out(path)
    needs = get_family(family).needs
    return set(needs.extensions) <= extensions and set(needs.features) <= features


#: What each fixture runs, by every registered family's ``needs`` against the fixture's read-out: a new
#: family is gated by what it declares, with no edit here.
RUNS = {p.name: sorted(f for f in families() if _needs_met(f, p)) for p in PROFILES}
#: The one thing that stops each family ANV's fixture does not run (tests the refusal names it): cm2-program's
#: 16 x 16 matrices need cooperativeMatrixFlexibleDimensions there (ANV lists only 8 x 8 x 16 and 8 x 8 x 32).
STOPPED_BY = {"cm2-reduce": "cooperativeMatrixReductions", "cm2-program": "cooperativeMatrixFlexibleDimensions"}


def _profile(name: str) -> DeviceProfile:
    return load_profile(next(p for p in PROFILES if p.name == name))


def _known(req: Requirements, profile: DeviceProfile) -> Requirements:
    """``req`` without the float-controls properties a read-out does not record: the H100's predates
    them, and coopvec-elementwise's ieee variants take an unrecorded one as possible (ieee_possible);
    a live device's profile has them all (backends/vulkan.py _FLOAT_CONTROLS)."""
    unrecorded = {f for f in req.features if re.fullmatch(r"shader\w+Float(16|32|64)", f) and f not in profile.features}
    return replace(req, features=tuple(f for f in req.features if f not in unrecorded))


def test_every_fixture_runs_a_share_of_the_families() -> None:
    """The H100 runs every family but those that need an extension its driver does not expose
    (decode-vector's); each Mesa fixture runs at least the three families that need neither tensor
    addressing nor anything beyond VK_NV_cooperative_matrix2's per-element operations or plain
    VK_KHR_cooperative_matrix (ANV: no reductions), lavapipe and RADV at least six (cm2-gemm and
    cm2-program through KHR loads and stores, and coopmat-khr)."""
    h100_extensions, _ = _read_out(next(p for p in PROFILES if p.name.startswith("nvidia-h100")))
    assert RUNS["nvidia-h100-driver580.txt"] == sorted(
        f for f in families() if set(get_family(f).needs.extensions) <= h100_extensions)
    assert len(RUNS["nvidia-h100-driver580.txt"]) >= len(families()) - 1
    assert min(len(RUNS[p.name]) for p in PROFILES) >= 3
    assert len(RUNS["mesa-lavapipe-26.2.6.txt"]) >= 6 and len(RUNS["mesa-radv-gfx11-cm2.txt"]) >= 6
    tensor = {f for f in families() if "cooperativeMatrixTensorAddressing" in get_family(f).needs.features}
    assert tensor and all(not tensor & set(RUNS[p.name]) for p in PROFILES if p.name.startswith("mesa-"))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_fixture_runs_the_families_its_features_allow(name: str) -> None:
    assert families_it_runs(_profile(name)) == RUNS[name]


@pytest.mark.slow
@pytest.mark.parametrize("name, family", [(p, f) for p in sorted(RUNS) for f in RUNS[p]])
def test_every_drawn_variant_is_one_the_profile_allows(name: str, family: str) -> None:
    profile = _profile(name)
    fam = get_family(family)
    options = StrategyOptions(profile=profile)
    strata, _ = drawable_strata(fam, options)
    assert strata, f"{family} on {name}: no stratum left"
    drawn = [v for s in strata for v in draw_examples(fam.variants(options, **s), 3, 1)]
    drawn += draw_examples(fam.variants(options), 30, 2)
    for v in drawn:
        req = _known(v.requirements(), profile)
        assert profile.unsupported_reason(req) is None, (v.id, profile.unsupported_reason(req))
        for m in v.requirements().matrices:  # a subgroup-scope matrix runs in whole subgroups
            assert m.scope.name != "Subgroup" or (v.local_size_x == m.workgroup_size
                                                  and m.workgroup_size % profile.subgroup_size == 0), v.id


@pytest.mark.parametrize("name, family", [(p, f) for p in sorted(RUNS) for f in sorted(set(families()) - set(RUNS[p]))])
def test_a_family_the_profile_cannot_run_is_refused_naming_what_it_lacks(name: str, family: str) -> None:
    with pytest.raises(ProfileLacksError) as info:
        check_runnable(get_family(family), _profile(name))
    msg = str(info.value)
    assert "\n" not in msg and (" is not supported" in msg or " is not exposed" in msg), msg
    assert msg.split(" -> ")[1].startswith("choose a family it runs: ")


def test_anv_is_stopped_from_reductions_and_programs_by_the_feature_named() -> None:
    anv = _profile("mesa-anv-gfx9-cm2.txt")
    for family, feature in STOPPED_BY.items():
        with pytest.raises(ProfileLacksError, match=f"feature {feature} is not supported"):
            check_runnable(get_family(family), anv)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_gemm_and_programs_take_the_khr_route_without_tensor_addressing_and_both_routes_with_it(name: str) -> None:
    """The khr route (OpCooperativeMatrixLoadKHR / StoreKHR) is drawn on every fixture; the tensor route
    beside it only where cooperativeMatrixTensorAddressing is set (the H100)."""
    profile = _profile(name)
    both = profile.has_feature("cooperativeMatrixTensorAddressing")
    options = StrategyOptions(profile=profile)
    gemm = draw_examples(get_family("cm2-gemm").variants(options), 40, 6)
    assert {v.route.value for v in gemm} == ({"tensor", "khr"} if both else {"khr"})
    if "cm2-program" not in RUNS[name]:
        return
    programs = draw_examples(get_family("cm2-program").variants(options), 40, 6)
    ops = {n.op.value for v in programs for n in v.program.nodes}
    assert {"loadkhr", "storekhr"} <= ops
    tensor_ops = {"load", "store", "loadview", "storeview", "loaddecode", "loaddecodeview"}
    assert (ops & tensor_ops == set()) is not both, ops
    if not both:  # every operation the profile allows chains with KHR loads and stores
        allowed = {"muladd", "add", "sub", "mul", "scale", "const", "generate", "perelement", "reduce", "convert",
                   "transpose"}
        assert allowed <= ops, allowed - ops


def test_subgroup_scope_matrices_take_the_profiles_subgroup_size() -> None:
    lvp, radv = _profile("mesa-lavapipe-26.2.6.txt"), _profile("mesa-radv-gfx11-cm2.txt")
    assert {m.workgroup_size for m in lvp.matrix_types()} == {8}
    assert {m.workgroup_size for m in radv.flexible_granules()} == {64}


@pytest.mark.parametrize("name, family", [("mesa-lavapipe-26.2.6.txt", f) for f in RUNS["mesa-lavapipe-26.2.6.txt"]]
                         + [("mesa-anv-gfx9-cm2.txt", "cm2-convert"), ("mesa-anv-gfx9-cm2.txt", "cm2-gemm"),
                            ("mesa-radv-gfx11-cm2.txt", "cm2-program")])
def test_generate_for_a_mesa_profile_writes_a_pack(name: str, family: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    profile = next(p for p in PROFILES if p.name == name)
    code = main(["generate", "--family", family, "--count", "6", "--jobs", "1", "--profile", str(profile),
                 "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (tmp_path / "p" / "manifest.json").exists()
    if family == "cm2-convert" and "anv" in name:  # Use conversions and transposes need the feature ANV lacks
        left = [ln for ln in err.splitlines() if "leaving out" in ln]
        assert len(left) == 1 and "feature cooperativeMatrixConversions is not supported" in left[0], err


def test_generate_of_a_family_the_profile_cannot_run_is_one_line_exit_2(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    lvp = next(p for p in PROFILES if p.name == "mesa-lavapipe-26.2.6.txt")
    with pytest.raises(SystemExit) as e:
        main(["generate", "--family", "tensor-layout", "--count", "4", "--profile", str(lvp),
              "--out", str(tmp_path / "p")])
    assert e.value.code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert err == [err[0]] and "feature cooperativeMatrixTensorAddressing is not supported" in err[0], err
    assert not (tmp_path / "p").exists()


def _h100_with(**changes: int) -> DeviceProfile:
    h100 = _profile("nvidia-h100-driver580.txt")
    features = {k: v for k, v in changes.items() if k.startswith("cooperativeMatrix")}
    properties = {k: v for k, v in changes.items() if k not in features}
    return replace(h100, features={**h100.features, **features}, properties={**h100.properties, **properties})


def test_cm2_program_draws_only_the_operations_the_device_has() -> None:
    from ctsgen.families.cm2_program.program import Op

    profile = _h100_with(cooperativeMatrixReductions=0, cooperativeMatrixConversions=0)
    fam = get_family("cm2-program")
    options = StrategyOptions(profile=profile)
    ops = {n.op for v in draw_examples(fam.variants(options), 60, 3) for n in v.program.nodes}
    assert ops and not ops & {Op.reduce, Op.convert, Op.transpose}, ops
    assert {Op.muladd, Op.perelement} <= ops  # the rest is still drawn
    strata, left_out = drawable_strata(fam, options)
    assert {"seed": "flash-attention"} not in strata and {"seed": None} in strata
    assert "feature cooperativeMatrixConversions, cooperativeMatrixReductions is not supported" in \
        left_out[repr({"seed": "flash-attention"})]


def test_a_subgroup_of_64_sets_every_subgroup_scope_shaders_workgroup() -> None:
    profile = _h100_with(subgroupSize=64)
    for family in ("cm2-program", "cm2-reduce", "cm2-gemm", "tensor-layout"):
        fam = get_family(family)
        for v in draw_examples(fam.variants(StrategyOptions(profile=profile)), 20, 4):
            assert profile.unsupported_reason(v.requirements()) is None, v.id
            mats = v.requirements().matrices
            if all(m.scope.name == "Subgroup" for m in mats):  # whole subgroups of 64, the matrices' workgroup
                assert v.local_size_x % 64 == 0 and {m.workgroup_size for m in mats} == {v.local_size_x}, \
                    (family, v.id)


def test_generate_and_fuzz_say_in_one_line_which_program_operations_they_leave_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ctsgen.backends.reference import ReferenceBackend
    from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
    from ctsgen.pack.generate import draw_cases

    profile = _h100_with(cooperativeMatrixReductions=0)
    fam = get_family("cm2-program")
    notes: list[str] = []
    draw_cases(fam, 8, 0, StrategyOptions(profile=profile), note=notes.append)
    said = [n for n in notes if "leaving out reduce nodes" in n]
    assert said == [f"cm2-program on {profile.name}: leaving out reduce nodes: feature cooperativeMatrixReductions "
                    "is not supported"], notes

    class ReferenceWithoutReductions(ReferenceBackend):
        def profile(self) -> DeviceProfile:
            return profile

    fuzzer = Fuzzer(ReferenceWithoutReductions(), FuzzOptions(families=("cm2-program", "cm2-reduce"),
                                                              max_examples=1, database=None))
    assert fuzzer.omissions() == ["cm2-program: leaving out reduce nodes: feature cooperativeMatrixReductions "
                                  "is not supported"]
    assert fuzzer.report.skipped == {"cm2-reduce": "feature cooperativeMatrixReductions is not supported"}
    assert fam.omissions(_profile("nvidia-h100-driver580.txt")) is None
