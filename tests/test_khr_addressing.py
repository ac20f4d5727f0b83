"""OpCooperativeMatrixLoadKHR / StoreKHR addressing (ctsgen.ops.khr_addressing), its strategies
(ctsgen.strategies.khr) and its GLSL macros (ctsgen/templates/khr.glsl.j2).

The oracle is checked against hand-worked examples of SPV_KHR_cooperative_matrix's "Cooperative
Matrix Layout" and against a byte-address reading of it written out here element by element; the
strategies on every fixture profile's matrix types; the macros through glslang and spirv-val."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.device.profile import load_profile
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2 import supported_matrices
from ctsgen.ops.khr_addressing import (
    KhrAccess,
    Layout,
    Pointee,
    alignment_bytes,
    as_components,
    check_access,
    component_indices,
    expected_load,
    expected_store,
    extent_components,
    extent_elements,
)
from ctsgen.oracle.values import from_bits, pattern_values, sentinel_bits, to_bits
from ctsgen.strategies.khr import khr_accesses, pointee_choices
from ctsgen.strategies.sampling import draw_examples
from ctsgen.templates import render

F32, F16, U8 = ComponentType.float32, ComponentType.float16, ComponentType.uint8
PROFILES = sorted((Path(__file__).resolve().parents[1] / "ctsgen" / "device" / "profiles").glob("*.txt"))
R, C = Layout.RowMajor, Layout.ColumnMajor


# -- hand-worked examples ---------------------------------------------------------------------------
def test_row_major_rows_start_at_pointer_row_times_stride() -> None:
    memory = np.arange(20, dtype=np.float32)
    got = expected_load(KhrAccess(R, stride=8, offset=4), 2, 4, memory, F32)  # rows of 16 bytes: aligned
    np.testing.assert_array_equal(got, [[4, 5, 6, 7], [12, 13, 14, 15]])


def test_stride_zero_repeats_one_row() -> None:
    memory = np.arange(8, dtype=np.float32)
    got = expected_load(KhrAccess(R, stride=0, offset=4), 3, 4, memory, F32)
    np.testing.assert_array_equal(got, [[4, 5, 6, 7]] * 3)


def test_stride_below_the_row_length_overlaps_rows() -> None:
    memory = np.arange(32, dtype=np.float16)
    got = expected_load(KhrAccess(R, stride=8), 2, 16, memory, F16)  # 16 bytes apart, rows of 32 bytes
    np.testing.assert_array_equal(got, [np.arange(16), np.arange(8, 24)])


def test_column_major_columns_start_at_pointer_col_times_stride() -> None:
    memory = np.arange(16, dtype=np.float32)
    got = expected_load(KhrAccess(C, stride=8), 4, 2, memory, F32)  # column c = memory[8c : 8c + 4]
    np.testing.assert_array_equal(got, [[0, 8], [1, 9], [2, 10], [3, 11]])


def test_a_wide_pointee_counts_stride_and_offset_in_its_own_elements() -> None:
    """float16 2x4 through uvec2 (8 bytes, 4 components): offset 1 and stride 2 uvec2 put row r at
    byte (1 + 2r) * 8, i.e. component 4 + 8r."""
    memory = np.arange(24, dtype=np.float16)
    access = KhrAccess(R, stride=2, offset=1, pointee=Pointee("uint32", 2))
    np.testing.assert_array_equal(expected_load(access, 2, 4, memory, F16), [[4, 5, 6, 7], [12, 13, 14, 15]])
    assert extent_elements(access, 2, 4, F16) == 4 and extent_components(access, 2, 4, F16) == 16


def test_a_store_writes_only_its_rows_and_keeps_the_sentinel_bit_for_bit() -> None:
    poison = from_bits(sentinel_bits(F16), F16)
    memory = np.full(16, poison, dtype=np.float16)
    matrix = np.array([[1, 2], [3, 4]], dtype=np.float16)
    got = expected_store(KhrAccess(C, stride=8, offset=2), matrix, memory, F16)
    want = memory.copy()
    want[[2, 3, 10, 11]] = [1, 3, 2, 4]  # column 0 at 2, column 1 at 2 + 8
    np.testing.assert_array_equal(to_bits(got, F16), to_bits(want, F16))


def test_invalid_accesses_are_refused_with_the_rule() -> None:
    with pytest.raises(ValueError, match="overlap"):
        check_access(KhrAccess(R, stride=8), 2, 16, F16, is_store=True)  # aligned, but rows overlap
    with pytest.raises(ValueError, match="overlap"):
        check_access(KhrAccess(R, stride=0), 2, 4, F32, is_store=True)
    with pytest.raises(ValueError, match="08986"):
        check_access(KhrAccess(R, stride=4, offset=1), 8, 8, F32, is_store=False)  # 4 bytes, needs 16
    with pytest.raises(ValueError, match="08986"):
        check_access(KhrAccess(R, stride=9), 8, 8, F16, is_store=False)  # 18 bytes, needs 16
    with pytest.raises(ValueError, match="whole number"):
        check_access(KhrAccess(R, stride=8, pointee=Pointee("uint8")), 8, 8, F16, is_store=False)
    with pytest.raises(ValueError, match=">= 0"):
        check_access(KhrAccess(R, stride=-8), 8, 8, F32, is_store=False)


def test_alignment_is_the_lesser_of_16_bytes_and_a_line() -> None:
    assert alignment_bytes(R, 8, 8, U8) == 8       # a row of 8 bytes
    assert alignment_bytes(C, 16, 8, U8) == 16     # a column of 16 bytes
    assert alignment_bytes(R, 8, 24, F16) == 16    # 48 bytes, capped


def test_a_pointees_sizes_are_its_lane_types_and_the_matrixs_own_pointee_is_its_component() -> None:
    """Pointee sizes come from a table and Pointee.of from a cache: both agree with numpy's types."""
    import ml_dtypes

    for scalar in ("float16", "float32", "bfloat16", "int8", "uint8", "int16", "uint16", "int32", "uint32"):
        lane = np.dtype(ml_dtypes.bfloat16 if scalar == "bfloat16" else scalar).itemsize
        assert (Pointee(scalar).lane_size, Pointee(scalar, 4).size) == (lane, 4 * lane), scalar
    for component in ComponentType:
        assert Pointee.of(component) == Pointee(component.dtype.name)
        assert Pointee.of(component).size == component.size
    with pytest.raises(ValueError, match="pointee lane type 'float64'"):
        Pointee("float64")


def test_access_json_round_trips() -> None:
    for a in (KhrAccess(R, 8), KhrAccess(C, 4, 12, Pointee("uint32", 4))):
        assert KhrAccess.from_json(a.to_json()) == a


# -- properties ------------------------------------------------------------------------------------
def _by_byte_address(access: KhrAccess, rows: int, cols: int, raw: bytes, component: ComponentType) -> np.ndarray:
    """The spec read literally: element k of line i at byte (offset + i*stride)*P + k*C."""
    p = access.pointee_for(component).size
    out = np.empty((rows, cols), dtype=component.dtype)
    for r in range(rows):
        for c in range(cols):
            line, k = (r, c) if access.layout is R else (c, r)
            at = (access.offset + line * access.stride) * p + k * component.size
            out[r, c] = np.frombuffer(raw[at:at + component.size], dtype=component.dtype)[0]
    return out


SHAPES = st.sampled_from([(8, 8), (16, 8), (8, 16), (16, 24), (2, 3)])
COMPONENTS = st.sampled_from([F16, F32, U8, ComponentType.sint32, ComponentType.bfloat16])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_load_reads_what_the_byte_addresses_say(data: st.DataObject) -> None:
    (rows, cols), comp = data.draw(SHAPES), data.draw(COMPONENTS)
    access = data.draw(khr_accesses(rows, cols, comp, is_store=False))
    memory = pattern_values("iota", comp, extent_components(access, rows, cols, comp), 0)
    got = expected_load(access, rows, cols, memory, comp)
    np.testing.assert_array_equal(to_bits(got, comp), to_bits(_by_byte_address(access, rows, cols, memory.tobytes(),
                                                                               comp), comp))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_store_then_a_load_round_trips_and_touches_nothing_else(data: st.DataObject) -> None:
    (rows, cols), comp = data.draw(SHAPES), data.draw(COMPONENTS)
    access = data.draw(khr_accesses(rows, cols, comp, is_store=True))
    n = extent_components(access, rows, cols, comp) + data.draw(st.integers(0, 8))
    memory = np.full(n, from_bits(sentinel_bits(comp), comp), dtype=comp.dtype)
    matrix = pattern_values("random", comp, rows * cols, data.draw(st.integers(0, 99))).reshape(rows, cols)
    after = expected_store(access, matrix, memory, comp)
    np.testing.assert_array_equal(to_bits(expected_load(access, rows, cols, after, comp), comp), to_bits(matrix, comp))
    written = np.zeros(n, bool)
    written[component_indices(access, rows, cols, comp).ravel()] = True
    assert written.sum() == rows * cols  # disjoint: every element has its own component
    assert (to_bits(after, comp)[~written] == sentinel_bits(comp)).all()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_extent_is_the_last_byte_address_rounded_up_to_a_pointee_element(data: st.DataObject) -> None:
    (rows, cols), comp = data.draw(SHAPES), data.draw(COMPONENTS)
    access = data.draw(khr_accesses(rows, cols, comp, is_store=data.draw(st.booleans())))
    p = access.pointee_for(comp).size
    last_byte = max((access.offset + line * access.stride) * p + (k + 1) * comp.size
                    for line in range(cols if access.layout is C else rows) for k in range(rows if access.layout is C
                                                                                           else cols))
    assert extent_components(access, rows, cols, comp) * comp.size == -(-last_byte // p) * p


def test_a_negative_stride_reaches_furthest_from_its_first_line() -> None:
    assert extent_components(KhrAccess(R, stride=-4, offset=8), 3, 4, F32) == 12  # lines at 8, 4, 0


def test_index_arrays_are_read_only_so_a_shared_one_cannot_be_changed() -> None:
    access = KhrAccess(C, stride=16, offset=4, pointee=Pointee("uint32", 2))
    first = component_indices(access, 8, 8, F16)
    with pytest.raises(ValueError, match="read-only"):
        first[0, 0] = -1
    np.testing.assert_array_equal(component_indices(access, 8, 8, F16),
                                  (16 + 64 * np.arange(8)).reshape(1, -1) + np.arange(8).reshape(-1, 1))


def test_numpy_integer_arguments_give_plain_ints_to_every_caller() -> None:
    """The geometry is kept per argument: a numpy integer (equal to, and hashed as, a Python int)
    must not hand its type to a later caller (a stride drawn from it goes into JSON)."""
    from ctsgen.ops.khr_addressing import alignment_unit, min_disjoint_stride

    p = Pointee("uint32", 4)
    for rows, cols in ((np.int64(16), np.uint32(24)), (16, 24)):
        assert type(alignment_bytes(C, rows, cols, F16)) is int
        assert type(alignment_unit(C, rows, cols, F16, p)) is int
        assert type(min_disjoint_stride(C, rows, cols, F16, p)) is int
        assert type(extent_components(KhrAccess(C, np.int64(2), np.int64(1), p), rows, cols, F16)) is int


def test_an_invalid_access_is_refused_every_time_it_is_checked() -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="overlap"):
            check_access(KhrAccess(R, stride=4), 4, 8, F32, is_store=True)


def test_wide_pointee_buffers_are_the_same_bytes() -> None:
    words = np.arange(8, dtype=np.uint32)
    assert as_components(words, F16).size == 16 and as_components(words, F16).tobytes() == words.tobytes()


# -- strategies on every fixture profile --------------------------------------------------------------
def _fixture_matrices() -> list[tuple[str, MatrixType]]:
    out = []
    for path in PROFILES:
        profile = load_profile(path)
        for m in supported_matrices(profile, max_granules=1):
            out.append((path.name, m))
    return out


@pytest.mark.parametrize("is_store", [False, True])
def test_drawn_accesses_are_valid_on_every_fixture_matrix_type(is_store: bool) -> None:
    seen = {(p, m.component, m.rows, m.cols) for p, m in _fixture_matrices()}
    assert {p for p, *_ in seen} == {p.name for p in PROFILES}
    for _, comp, rows, cols in sorted(seen, key=str):
        for access in draw_examples(khr_accesses(rows, cols, comp, is_store=is_store), 6, 7):
            check_access(access, rows, cols, comp, is_store=is_store)
            p = access.pointee_for(comp)
            align = alignment_bytes(access.layout, rows, cols, comp)
            assert access.offset * p.size % align == 0 and access.stride * p.size % align == 0
            n = extent_components(access, rows, cols, comp)
            assert int(component_indices(access, rows, cols, comp).max()) < n


def test_edges_are_reachable_and_the_simplest_access_is_packed_row_major() -> None:
    rows, cols = 16, 16
    drawn = draw_examples(khr_accesses(rows, cols, F16, is_store=False), 300, 1)
    assert drawn[0] == KhrAccess(R, stride=16, offset=0, pointee=None)
    assert any(a.stride == 0 for a in drawn)
    assert any(0 < a.stride * a.pointee_for(F16).size < cols * 2 for a in drawn if a.layout is R)  # overlap
    assert {a.layout for a in drawn} == {R, C}
    assert {a.pointee for a in drawn} == set(pointee_choices(F16))
    assert any(a.offset > 0 for a in drawn)


def test_strategy_bounds_are_checked() -> None:
    with pytest.raises(ValueError, match="layout"):
        khr_accesses(8, 8, F16, is_store=False, layouts=())
    with pytest.raises(ValueError, match="steps"):
        khr_accesses(8, 8, F16, is_store=False, max_offset_steps=-1)


# -- the GLSL macros through glslang and spirv-val ----------------------------------------------------
TEMPLATE = """{% import "common.glsl.j2" as common %}
{% import "khr.glsl.j2" as khr %}
{{ common.header(8) }}
{{ common.params(4) }}
{{ common.storage_buffer(1, "Src", src.glsl, "srcBuf") }}
{{ common.storage_buffer(2, "Dst", dst.glsl, "dstBuf") }}
void main()
{
    {{ m.glsl }} mat;
    {{ khr.load("mat", "srcBuf.x", khr.element("P(0u)", src.lanes, "P(2u)"), "P(3u)", load) }}
    {{ khr.store("mat", "dstBuf.x", khr.element("P(1u)", dst.lanes, "P(2u)"), "P(3u)", store) }}
}
"""


@pytest.mark.parametrize("component, src, dst", [
    (F16, Pointee("uint32", 4), Pointee("float16")),
    (U8, Pointee("uint32"), Pointee("uint32", 2)),
    (F32, Pointee("float32"), Pointee("uint32", 4)),
    (ComponentType.sint8, Pointee("int8"), Pointee("int8")),
])
def test_the_macros_compile_and_validate(tmp_path: Path, component: ComponentType, src: Pointee, dst: Pointee) -> None:
    from ctsgen.toolchain import compile_glsl, validate_spirv

    (tmp_path / "t.comp.j2").write_text(TEMPLATE)
    m = MatrixType(component, Scope.Subgroup, 8, 8, MatrixUse.A, 8)
    glsl = render(tmp_path, "t.comp.j2", m=m, src=src, dst=dst, load=C, store=R)
    assert "coopMatLoad(mat, srcBuf.x, (P(0u)" in glsl and "gl_CooperativeMatrixLayoutColumnMajor" in glsl
    assert f"{src.glsl} x[]" in glsl
    validate_spirv(compile_glsl(glsl, f"khr_{component.name}.comp"))
