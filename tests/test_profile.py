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
