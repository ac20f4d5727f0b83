"""Decode-vector family: V-groups as SPV_NV_cooperative_matrix_decode_vector 3.49.8 defines
them, blockSize[LDim-1] % V == 0 by construction, patched SPIR-V that validates, and a
reference backend whose three call patterns agree with the decode oracle - and catch a
vector decode function that disagrees with the scalar one."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.families.decode_vector import FAMILY
from ctsgen.families.decode_vector import oracle
from ctsgen.families.decode_vector.case import DecodeVectorCase, DecodeVectorVariant
from ctsgen.families.decode_vector.oracle import CALL_PATTERNS, v_groups
from ctsgen.model.tensor import ClampMode, TensorLayout
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.oracle.addressing import tensor_addresses
from ctsgen.pack.generate import draw_cases
from ctsgen.pack.read import load_pack, validate_shaders
from ctsgen.pack.write import write_pack
from ctsgen.runner.run import run_pack
from ctsgen.device.profile import default_profile

REACH = settings(max_examples=1000, database=None, deadline=None, derandomize=True,
                 suppress_health_check=list(HealthCheck), phases=[Phase.generate])
MATRIX = MatrixType(ComponentType.uint32, Scope.Subgroup, 16, 16, MatrixUse.Accumulator)


def test_v_groups_at_the_end_of_a_row_and_at_a_slice_edge() -> None:
    """2-D layout 16 x 16 (ClampToEdge), blockSize (1, 4), slice offset (0, 2): column c reads
    tensor column min(c + 2, 15). V = 4: tensor columns 0..3 are one group, of which the matrix
    holds only 2 and 3 (cols 0, 1): incomplete, so DecodeFunc only. Columns 4..7 (cols 2..5),
    8..11 (cols 6..9) and 12..15 (cols 10..13, plus cols 14, 15 clamped onto 15) are complete;
    the last group of the row ends at the row's end with two extra members in lane 3."""
    t = TensorLayout.create(2, ClampMode.ClampToEdge).set_block_size(1, 4).set_dimension(16, 16).slice(
        (0, 2), (16, 16))
    g = v_groups(tensor_addresses(t, 16, 16, is_store=False), 4)
    row = g.group[0]
    assert list(row[:2]) == [-1, -1]
    assert len(set(row[2:6])) == len(set(row[6:10])) == len(set(row[10:])) == 1
    assert len({row[2], row[6], row[10]}) == 3
    assert list(g.lane[0, 10:]) == [0, 1, 2, 3, 3, 3]
    assert g.count == 16 * 3  # three complete groups per row, rows never share a group
    last = row[10]
    assert list(g.coordInBlock[:, last]) == [0, 0] and list(g.blockCoord[:, last]) == [0, 3]  # block 3 = columns 12..15


def test_no_group_straddles_a_block_or_an_unaligned_start() -> None:
    """blockSize[1] = 8, V = 4, no clamping effect: groups start at coordInBlock 0 and 4 only;
    with V = 8 the slice offset 3 leaves every 8-group of a 16-wide row incomplete but one."""
    t = TensorLayout.create(2, ClampMode.Undefined).set_block_size(1, 8).set_dimension(16, 32)
    a = tensor_addresses(t, 16, 16, is_store=False)
    g = v_groups(a, 4)
    assert set(g.coordInBlock[1].tolist()) == {0, 4} and g.count == 16 * 4
    shifted = tensor_addresses(t.slice((0, 3), (16, 16)), 16, 16, is_store=False)
    assert v_groups(shifted, 8).count == 16  # columns 8..15 only (3..18 covered)


@given(FAMILY.cases(StrategyOptions()))
def test_block_size_is_a_multiple_of_v_by_construction(c: DecodeVectorCase) -> None:
    V = c.shader.V
    assert V in (2, 4, 8)
    assert c.layout().blockSize[-1] % V == 0
    if c.shader.blockShape is not None:
        assert c.shader.blockShape[-1] % V == 0
    assert FAMILY.case_from_json(c.to_json()) == c


def test_vector_decode_covers_what_scalar_decode_does() -> None:
    """Each legal group's vector result equals the scalar decode of its V elements (probe3)."""
    v = DecodeVectorVariant(2, ClampMode.Repeat, MATRIX, "probe3", None, 4)
    t = TensorLayout.create(2, ClampMode.Repeat).set_block_size(2, 4).set_dimension(6, 12).slice((-1, 5), (16, 16))
    words = np.arange(1, 3 * t.extent() + 1, dtype=np.uint32) * np.uint32(0x01000193)
    d = v.decoder_model()
    expected = v.expected(t, words)
    for pattern in CALL_PATTERNS:
        np.testing.assert_array_equal(oracle.reference_load(t, 16, 16, words, d, 4, pattern), expected)


def test_strata_give_every_decoder_every_dim_clamp_mode_and_v() -> None:
    """Five cells per decoder (latin_strata): Dim 1..5 each once, every clampMode once, and the
    three Vs (one of them twice); over the 40 cells every Dim meets every clampMode and every V."""
    cells = FAMILY.strata()
    assert len(cells) == 40
    for dec in {c["decoder"] for c in cells}:
        mine = [c for c in cells if c["decoder"] == dec]
        assert sorted(c["Dim"] for c in mine) == [1, 2, 3, 4, 5] and {c["clampMode"] for c in mine} == set(ClampMode)
        assert {c["V"] for c in mine} == {2, 4, 8}
    assert len({(c["Dim"], c["clampMode"]) for c in cells}) == 25 and len({(c["Dim"], c["V"]) for c in cells}) == 15


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["q8_0", "q4_0", "q4_k", "mxfp4", "q5_k", "q6_k"])
def test_formats_reach_dim_5_with_v_8(fmt: str) -> None:
    """A block format at Dim 5 whose last block side is a multiple of 8 (unpinned draws)."""
    find(FAMILY.variants(StrategyOptions()), lambda v: (v.decoder, v.Dim, v.V) == (fmt, 5, 8), settings=REACH)


@pytest.fixture(scope="module")
def cases() -> list[DecodeVectorCase]:
    return draw_cases(FAMILY, 54, 7, StrategyOptions(), cases_per_variant=1)


def _run(cases: list[DecodeVectorCase], root: Path) -> Counter:
    pack = load_pack(write_pack(cases, root, header={"seed": 7}))
    validate_shaders(pack)
    return run_pack(pack, ReferenceBackend()).counts


@pytest.mark.slow
def test_every_stratum_validates_and_passes_in_every_call_pattern(cases, tmp_path: Path) -> None:
    """Every stratum (decoder, Dim, clampMode, V; block formats at Dim 4 and 5 too): the patched
    module validates (glslang's SPIRV-Tools, recorded in the manifest), and the reference backend
    passes the pack in each call pattern."""
    assert {(c.shader.decoder, c.shader.Dim, c.shader.clampMode, c.shader.V) for c in cases} == {
        (s["decoder"], s["Dim"], s["clampMode"], s["V"]) for s in FAMILY.strata()}
    for pattern in CALL_PATTERNS:
        counts = _run([dataclasses.replace(c, call_pattern=pattern) for c in cases], tmp_path / pattern)
        assert counts == Counter({"Pass": len(cases)}), pattern
    manifest = load_pack(tmp_path / "scalar").manifest
    assert {r["validator"] for r in manifest["variants"].values()} == {"glslang-decode-vector"}
    assert all("VK_NV_cooperative_matrix_decode_vector" in r["requirements"]["extensions"]
               for r in manifest["variants"].values())


def test_an_inconsistent_vector_decode_is_caught(cases, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A DecodeVectorFunc whose component i is element i + 1 (off by one) fails the cases that
    have complete V-groups in the vector and mixed patterns; the scalar pattern never calls it."""
    real = oracle.decode_vector

    def off_by_one(*args: object) -> np.ndarray:
        return np.roll(real(*args), -1, axis=1)

    monkeypatch.setattr(oracle, "decode_vector", off_by_one)
    probes = [c for c in cases if c.shader.format is None]  # distinct values per element
    grouped = [c for c in probes if v_groups(tensor_addresses(c.layout(), c.shader.matrix.rows,
                                                              c.shader.matrix.cols, is_store=False),
                                             c.shader.V).count > 0]
    assert len(grouped) >= 5
    for pattern in ("vector", "mixed"):
        counts = _run([dataclasses.replace(c, call_pattern=pattern) for c in grouped], tmp_path / pattern)
        assert counts["Fail"] == len(grouped), (pattern, counts)
    assert _run([dataclasses.replace(c, call_pattern="scalar") for c in grouped], tmp_path / "s") == Counter(
        {"Pass": len(grouped)})


@pytest.mark.parametrize("V", [2, 8])
def test_the_h100_profile_lacks_the_extension(V: int) -> None:
    """The embedded H100 read-out has no VK_NV_cooperative_matrix_decode_vector, so a Vulkan
    backend reports these variants NotSupported (the reference backend runs them)."""
    h100 = default_profile()
    req = DecodeVectorVariant(1, ClampMode.Undefined, MATRIX, "probe1", None, V).requirements()
    assert "VK_NV_cooperative_matrix_decode_vector" in set(req.extensions) - set(h100.extensions)
    assert ("VK_EXT_shader_long_vector" in req.extensions) == (V == 8)
    assert "is not exposed" in (h100.unsupported_reason(req) or "")
