"""Device profiles: parsing the read-out format and matrix-type support."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctsgen.device.profile import ProfileFormatError, default_profile, load_profile, parse_profile
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "device-profiles" / "nvidia-h100-driver580.txt"
EMBEDDED = REPO / "ctsgen" / "device" / "profiles" / "nvidia-h100-driver580.txt"
H100 = SHARED if SHARED.exists() else EMBEDDED


@pytest.fixture(scope="module")
def prof():
    return load_profile(H100)


def mt(comp, rows, cols, use=MatrixUse.A, scope=Scope.Subgroup, wg=32):
    return MatrixType(comp, scope, rows, cols, use, wg)


def test_counts_and_features(prof):
    assert prof.name == "NVIDIA H100 80GB HBM3"
    assert len(prof.coopmat_khr) == 11
    assert len(prof.flexible_dimensions) == 25
    assert len(prof.coopvec_combinations) == 16
    for f in ("cooperativeMatrixTensorAddressing", "cooperativeMatrixBlockLoads", "cooperativeMatrixWorkgroupScope",
              "cooperativeMatrixFlexibleDimensions", "cooperativeVector", "cooperativeMatrix"):
        assert prof.has_feature(f), f
    assert not prof.has_feature("cooperativeMatrixRobustBufferAccess")
    assert not prof.has_feature("noSuchFeature")
    assert prof.flexible_max_dimension == 1024
    assert prof.properties["cooperativeMatrixWorkgroupScopeMaxWorkgroupSize"] == 256
    assert prof.properties["maxCooperativeVectorComponents"] == 512
    assert {"VK_NV_cooperative_matrix2", "VK_KHR_cooperative_matrix", "VK_KHR_shader_bfloat16",
            "VK_NV_cooperative_vector"} <= prof.extensions
    assert all(set(e) >= {"MSize", "NSize", "KSize", "AType", "scope"} for e in prof.coopmat_khr)


def test_default_profile_is_the_same_read_out(prof):
    d = default_profile()
    assert (d.coopmat_khr, d.flexible_dimensions, d.coopvec_combinations, d.features) == \
        (prof.coopmat_khr, prof.flexible_dimensions, prof.coopvec_combinations, prof.features)


@pytest.mark.parametrize("m", [
    mt(ComponentType.float16, 16, 16), mt(ComponentType.float16, 16, 16, MatrixUse.B),
    mt(ComponentType.float32, 16, 8, MatrixUse.Accumulator), mt(ComponentType.uint8, 16, 32),
    mt(ComponentType.bfloat16, 16, 16, MatrixUse.B),
])
def test_listed_sizes_are_supported(prof, m):
    assert m in prof.matrix_types()
    assert prof.supports_matrix(m) is None


@pytest.mark.parametrize("m", [
    mt(ComponentType.float16, 32, 48), mt(ComponentType.float16, 1024, 16, MatrixUse.B),
    mt(ComponentType.float32, 64, 64, MatrixUse.Accumulator),
    mt(ComponentType.float16, 64, 32, scope=Scope.Workgroup, wg=128),
    mt(ComponentType.bfloat16, 64, 16, scope=Scope.Workgroup, wg=256),
])
def test_multiples_of_granules_are_supported(prof, m):
    assert m not in prof.matrix_types()
    assert prof.supports_matrix(m) is None


@pytest.mark.parametrize("m, words", [
    (mt(ComponentType.float16, 17, 16), "no cooperative-matrix property entry"),
    (mt(ComponentType.float16, 16, 24), "no cooperative-matrix property entry"),
    (mt(ComponentType.float16, 2048, 16), "exceeds cooperativeMatrixFlexibleDimensionsMaxDimension 1024"),
    (mt(ComponentType.float16, 64, 64, scope=Scope.Workgroup, wg=512), "cooperativeMatrixWorkgroupScopeMaxWorkgroupSize"),
    (mt(ComponentType.float16, 64, 64, scope=Scope.Workgroup, wg=96), "no cooperative-matrix property entry"),
])
def test_other_sizes_are_rejected_with_a_reason(prof, m, words):
    reason = prof.supports_matrix(m)
    assert isinstance(reason, str) and words in reason


def test_without_flexible_dimensions_only_listed_sizes(prof):
    text = H100.read_text().replace("'cooperativeMatrixFlexibleDimensions': 1", "'cooperativeMatrixFlexibleDimensions': 0")
    p = parse_profile(text)
    assert p.flexible_granules() == []
    assert p.supports_matrix(mt(ComponentType.float16, 16, 16)) is None
    assert "cooperativeMatrixFlexibleDimensions is off" in p.supports_matrix(mt(ComponentType.float16, 32, 48))


@pytest.mark.parametrize("bad, lineno, words", [
    ("this is not a profile line", 7, "unrecognised line"),
    ("cm2 feats {'a': 1", 7, "not a dict literal"),
    ("cm2 feats {1, 2}", 7, "expected a dict literal"),
])
def test_malformed_line_names_the_line(tmp_path, bad, lineno, words):
    lines = H100.read_text().splitlines()
    lines.insert(lineno - 1, bad)
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ProfileFormatError) as info:
        load_profile(path)
    msg = str(info.value)
    assert f"{path}:{lineno}:" in msg and words in msg


def test_list_entry_outside_a_list_section(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("device X\n{'MSize': 16}\n")
    with pytest.raises(ProfileFormatError, match=r"bad\.txt:2: a list entry outside a list section"):
        load_profile(path)


def test_missing_file(tmp_path):
    with pytest.raises(ProfileFormatError, match="cannot read device profile"):
        load_profile(tmp_path / "nope.txt")


# -- nonsense is refused in one line naming the field and what is allowed (exit 2) --------------------

def _edited(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    text = H100.read_text()
    assert old in text
    path = tmp_path / "edited.txt"
    path.write_text(text.replace(old, new, count))
    return path


def _generate_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from ctsgen.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("ctsgen: error: "), err
    return err[0]


@pytest.mark.parametrize("old, new, words", [
    ("'AType': 0, 'BType': 0, 'CType': 0", "'AType': 99, 'BType': 0, 'CType': 0",
     "has AType 99 -> a component type is a VkComponentTypeKHR value: 0 f16"),
    ("'cooperativeMatrixFlexibleDimensionsMaxDimension': 1024", "'cooperativeMatrixFlexibleDimensionsMaxDimension': 1e20",
     "property cooperativeMatrixFlexibleDimensionsMaxDimension is 1e+20 -> a property is a whole number in [0, 4294967295]"),
    ("'MGranularity': 16", "'MGranularity': 4096", "has MGranularity 4096 -> a size or granularity is a whole number in [1, 256]"),
    ("'workgroupInvocations': 32}", "'workgroupInvocations': -32}",
     "has workgroupInvocations -32 -> a workgroup size is a whole number in [0, 4294967295]"),
    ("'workgroupInvocations': 64}", "'workgroupInvocations': 512}",
     "has workgroupInvocations 512 -> a workgroup-scope entry's workgroup size is in [1, 256]"),
    ("'scope': 3}", "'scope': 1}", "has scope 1 -> a scope is 2 (workgroup) or 3 (subgroup) (VkScopeKHR)"),
    ("'cooperativeMatrixReductions': 1", "'cooperativeMatrixReductions': 7", "feature cooperativeMatrixReductions is 7 -> a feature is 0 or 1"),
    ("'MSize': 16, 'NSize': 16, 'KSize': 16, ", "'MSize': 16, 'NSize': 16, ", "lacks KSize -> an entry has MSize, NSize, KSize"),
])
def test_a_profile_value_no_device_gives_is_refused(tmp_path, capsys, old, new, words):
    path = _edited(tmp_path, old, new)
    with pytest.raises(ProfileFormatError) as info:
        load_profile(path)
    assert words in str(info.value) and "\n" not in str(info.value)
    err = _generate_error(["generate", "--family", "cm2-convert", "--profile", str(path), "--out",
                           str(tmp_path / "p")], capsys)
    assert words in err
    assert not (tmp_path / "p").exists()


def test_a_subgroup_size_that_is_no_power_of_two_is_refused(tmp_path):
    path = _edited(tmp_path, "cm2 props {", "core props {'subgroupSize': 48}\ncm2 props {")
    with pytest.raises(ProfileFormatError, match=r"subgroupSize is 48 -> a subgroup size is a power of two"):
        load_profile(path)


def test_a_profile_without_cooperative_matrix2_makes_no_tensor_layout_pack(tmp_path, capsys):
    path = _edited(tmp_path, "include VK_NV_cooperative_matrix2 (rev 1), ", "include ")
    assert "VK_NV_cooperative_matrix2" not in load_profile(path).extensions
    err = _generate_error(["generate", "--family", "tensor-layout", "--profile", str(path), "--out",
                           str(tmp_path / "p")], capsys)
    assert "runs no tensor-layout case: device extension VK_NV_cooperative_matrix2 is not exposed" in err
    assert not (tmp_path / "p").exists()


def test_no_decode_vector_pack_for_the_h100_profile(tmp_path, capsys):
    err = _generate_error(["generate", "--family", "decode-vector", "--out", str(tmp_path / "p")], capsys)
    assert "device extension VK_NV_cooperative_matrix_decode_vector is not exposed" in err
    assert err.endswith("choose a family it runs: cm2-convert, cm2-elementwise, cm2-gemm, cm2-program, cm2-reduce, "
                        "coopmat-khr, coopvec, coopvec-elementwise, coopvec-program, decode, tensor-layout, tensor-view")
    assert not (tmp_path / "p").exists()


def test_a_written_profile_reads_back_the_same(prof):
    from ctsgen.device.readout import format_profile

    again = parse_profile(format_profile(prof, ["a test"]))
    assert (again.name, again.extensions, again.features, again.properties, again.coopmat_khr,
            again.flexible_dimensions, again.coopvec_combinations) == \
        (prof.name, prof.extensions, prof.features, prof.properties, prof.coopmat_khr, prof.flexible_dimensions,
         prof.coopvec_combinations)


def test_the_profile_command_writes_what_the_vulkan_backend_reads(tmp_path, capsys, monkeypatch):
    """``ctsgen profile`` writes the live device's profile (here a stand-in backend holding lavapipe's
    fixture) so that load_profile reads back the same features, properties and lists."""
    import ctsgen.backends.vulkan as vulkan
    from ctsgen.cli import main

    lvp = load_profile(REPO / "ctsgen" / "device" / "profiles" / "mesa-lavapipe-26.2.6.txt")
    opened: list[int] = []

    class StandIn:
        def __init__(self, device_index: int = 0) -> None:
            opened.append(device_index)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            pass

        def profile(self):
            return lvp

    monkeypatch.setattr(vulkan, "VulkanBackend", StandIn)
    out = tmp_path / "mine.txt"
    assert main(["profile", "--device", "1", "--out", str(out)]) == 0
    assert opened == [1] and capsys.readouterr().out.strip() == f"wrote {out}"
    back = load_profile(out)
    assert (back.name, back.extensions, back.features, back.properties, back.coopmat_khr, back.flexible_dimensions) \
        == (lvp.name, lvp.extensions, lvp.features, lvp.properties, lvp.coopmat_khr, lvp.flexible_dimensions)
    assert back.subgroup_size == 8
    assert main(["profile"]) == 0 and capsys.readouterr().out.startswith("# Read off Vulkan device 0, llvmpipe")


def test_a_decode_vector_pack_is_made_for_the_reference_backend(tmp_path, capsys):
    """No read-out exposes decode vector, so its packs target the reference backend by name."""
    import json

    from ctsgen.cli import main

    out = tmp_path / "p"
    assert main(["generate", "--family", "decode-vector", "--profile", "reference", "--count", "3", "--jobs", "1",
                 "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["profile"] == "reference"
    assert main(["generate", "--family", "decode-vector", "--profile", "reference", "--count", "3", "--jobs", "1",
                 "--out", str(out)]) == 0
    assert "is up to date" in capsys.readouterr().out
