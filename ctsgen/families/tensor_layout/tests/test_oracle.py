"""The vectorised oracle against the spec: a scalar transcription of the
pseudo-code, properties the spec implies, and hand-worked examples."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ctsgen.ops.tensor_layout import expected_load, expected_store
from ctsgen.model.tensor import ClampMode, InvalidLayoutError, TensorLayout, ceil_div
from ctsgen.model.types import ComponentType
from ctsgen.oracle.addressing import tensor_addresses, TensorAddresses
from ctsgen.oracle.values import to_bits
from ctsgen.strategies import block_sizes, clamp_values, layout_dimensions, tensor_layouts

from tests import spec_reference as ref

SHAPES = [(16, 16), (16, 8), (32, 16)]
shapes = st.sampled_from(SHAPES)
NON_UNDEFINED = [m for m in ClampMode if m is not ClampMode.Undefined]


def create(Dim: int, mode: ClampMode = ClampMode.Undefined) -> TensorLayout:
    return TensorLayout.create(Dim, mode)


# ---------------------------------------------------------------------------
# 1. the vectorised oracle equals the literal transcription
# ---------------------------------------------------------------------------

def test_reference_opsmod_is_sign_of_divisor():
    for a in range(-20, 21):
        for b in (1, 2, 3, 5, 7):
            assert ref.opsmod(a, b) == a % b
    assert ref.opsmod(-3, 5) == 2 and ref.opsmod(-5, 5) == 0 and ref.opsmod(7, 5) == 2


def _compare_with_reference(t: TensorLayout, M: int, N: int, is_store: bool) -> None:
    expect_ub = False
    try:
        want = ref.all_elements(t, M, N, is_store)
    except ref.UndefinedBehaviour:
        expect_ub = True
    if expect_ub:
        with pytest.raises(ValueError):
            tensor_addresses(t, M, N, is_store=is_store)
        return
    a = tensor_addresses(t, M, N, is_store=is_store)
    assert a.index.shape == a.valid.shape == (M, N)
    for r in range(M):
        for c in range(N):
            w = want[r][c]
            assert bool(a.valid[r, c]) == (w is not None), (t, r, c)
            if w is not None:
                assert int(a.index[r, c]) == w, (t, r, c)
                assert [int(x) for x in a.tensorCoord[:, r, c]] == ref.tensor_coord(t, r, c, N, is_store)
                assert w < t.extent(), "a valid index must lie inside the layout's extent"


@given(t=tensor_layouts(), shape=shapes, is_store=st.booleans())
def test_vectorised_oracle_matches_spec_pseudocode(t, shape, is_store):
    _compare_with_reference(t, *shape, is_store)


@given(t=tensor_layouts(max_side=6), shape=shapes, is_store=st.booleans())
def test_oracle_matches_pseudocode_small_layouts(t, shape, is_store):
    # small layouts: spans wrap, most accesses are out of bounds
    _compare_with_reference(t, *shape, is_store)


@given(t=tensor_layouts(dim=1, clamp_mode=ClampMode.RepeatMirrored), shape=shapes)
def test_mirror_dim1_decision_matches_reference(t, shape):
    # decision "mirror-repeat-dim-1": layoutDimension 1 maps every coordinate to 0
    t1 = t.set_dimension(1).slice((-7,), (5,))
    _compare_with_reference(t1, *shape, False)
    a = tensor_addresses(t1, *shape, is_store=False)
    assert (a.tensorCoord == 0).all() and (a.index == 0).all() and a.valid.all()


@given(t=tensor_layouts(), shape=shapes, data=st.data())
def test_expected_load_matches_reference_load(t, shape, data):
    M, N = shape
    assume(t.clampMode is not ClampMode.Undefined or not _ub(t, M, N, False))
    n = t.extent()
    tensor = np.arange(1, n + 1, dtype=np.int64) * 3 + 7
    got = expected_load(t, M, N, tensor.astype(np.uint32), ComponentType.uint32)
    want = ref.load(t, M, N, [int(x) for x in tensor], t.clampValue)
    assert got.tolist() == want


def _ub(t, M, N, is_store) -> bool:
    try:
        ref.all_elements(t, M, N, is_store)
    except ref.UndefinedBehaviour:
        return True
    return False


# ---------------------------------------------------------------------------
# 2. properties the spec implies
# ---------------------------------------------------------------------------

@given(t=tensor_layouts(clamp_mode=ClampMode.Repeat), shape=shapes, d=st.integers(0, 4),
       k=st.integers(-3, 3), is_store=st.booleans())
def test_repeat_is_periodic(t, shape, d, k, is_store):
    assume(d < t.LDim)
    delta = [0] * t.LDim
    delta[d] = k * t.layoutDimension[d]
    shifted = t.slice(tuple(delta), t.span)  # Slice *adds* the offset
    assert shifted.offset[d] == t.offset[d] + k * t.layoutDimension[d]
    a = tensor_addresses(t, *shape, is_store=is_store)
    b = tensor_addresses(shifted, *shape, is_store=is_store)
    if is_store:  # stores discard out-of-bounds elements, so only the in-bounds ones agree
        return
    np.testing.assert_array_equal(a.index, b.index)
    np.testing.assert_array_equal(a.valid, b.valid)


@given(t=tensor_layouts(clamp_mode=ClampMode.ClampToEdge), shape=shapes)
def test_clamp_to_edge_is_idempotent(t, shape):
    M, N = shape
    a = tensor_addresses(t, M, N, is_store=False)
    dims = np.asarray(t.layoutDimension).reshape(-1, 1, 1)
    assert ((a.tensorCoord >= 0) & (a.tensorCoord < dims)).all()
    # clamping the clamped coordinate again (per the spec's min(max(c,0),dim-1)) is a no-op
    for dim in range(t.LDim):
        for c in np.unique(a.tensorCoord[dim]).tolist():
            assert min(max(c, 0), t.layoutDimension[dim] - 1) == c
    # and an element whose coordinate was in bounds is not moved at all
    span = ref.linearToSpanCoord
    for r in range(0, M, 5):
        for c in range(0, N, 3):
            sc = span(t, r * N + c)
            for dim in range(t.LDim):
                raw = sc[dim] + t.offset[dim]
                clamped = int(a.tensorCoord[dim, r, c])
                if 0 <= raw < t.layoutDimension[dim]:
                    assert clamped == raw
                else:
                    assert clamped == (0 if raw < 0 else t.layoutDimension[dim] - 1)


@given(t=tensor_layouts(clamp_mode=ClampMode.Undefined, in_bounds=True), shape=shapes,
       is_store=st.booleans())
def test_in_bounds_access_is_the_same_in_every_clamp_mode(t, shape, is_store):
    M, N = shape
    assume(not _ub(t, M, N, is_store))
    base = tensor_addresses(t, M, N, is_store=is_store)
    assert base.valid.all() and not base.out_of_bounds.any()
    for mode in NON_UNDEFINED:
        if mode is ClampMode.RepeatMirrored and min(t.layoutDimension) < 2:
            continue
        other = tensor_addresses(replace(t, clampMode=mode), M, N, is_store=is_store)
        np.testing.assert_array_equal(other.index, base.index)
        assert other.valid.all()


@given(d=st.integers(2, 40), c=st.integers(-200, 200))
def test_repeat_mirrored_reflects(d, c):
    def at(coord: int) -> int:
        t = create(1, ClampMode.RepeatMirrored).set_dimension(d).slice((coord,), (1,))
        a = tensor_addresses(t, 1, 1, is_store=False)
        assert a.valid.all()
        return int(a.index[0, 0])

    m = at(c)
    assert 0 <= m < d
    assert at(-c) == m                 # reflection about 0
    assert at(c + 2 * d - 2) == m      # period 2*dim-2
    assert at(2 * (d - 1) - c) == m    # reflection about dim-1
    if 0 <= c < d:
        assert m == c


@given(L=st.integers(1, 600), shape=shapes, data=st.data())
def test_1d_default_stride_is_plain_indexing(L, shape, data):
    M, N = shape
    assume(L >= M * N)
    off = data.draw(st.integers(0, L - M * N))
    mode = data.draw(st.sampled_from(list(ClampMode)))
    t = create(1, mode).set_dimension(L).slice((off,), (M * N,))
    tensor = (np.arange(L, dtype=np.uint32) * 2654435761) & 0xFFFFFFFF
    got = expected_load(t, M, N, tensor.astype(np.uint32), ComponentType.uint32)
    rows, cols = np.indices((M, N))
    np.testing.assert_array_equal(got, tensor[off + rows * N + cols])


@given(H=st.integers(1, 40), W=st.integers(1, 40), shape=shapes, data=st.data())
def test_2d_default_strides_equal_numpy_slicing(H, W, shape, data):
    M, N = shape
    assume(M <= H and N <= W)
    o0 = data.draw(st.integers(0, H - M))
    o1 = data.draw(st.integers(0, W - N))
    t = create(2).set_dimension(H, W).slice((o0, o1), (M, N))
    tensor = np.random.default_rng(H * 100 + W).integers(0, 2**16, H * W).astype(np.uint16).view(np.float16)
    tensor = np.where(np.isnan(tensor), np.float16(1), tensor)
    got = expected_load(t, M, N, tensor, ComponentType.float16)
    np.testing.assert_array_equal(got.view(np.uint16), tensor.reshape(H, W)[o0:o0 + M, o1:o1 + N].view(np.uint16))


@given(dims=layout_dimensions(2, max_side=40), b=block_sizes(2))
def test_block_load_gives_each_element_its_blocks_value(dims, b):
    H, W = dims
    t = create(2).set_block_size(*b).set_dimension(H, W)
    blocks_h, blocks_w = ceil_div(H, b[0]), ceil_div(W, b[1])
    assert t.stride == (blocks_w, 1)
    tensor = np.arange(1000, 1000 + blocks_h * blocks_w, dtype=np.int32)
    got = expected_load(t, H, W, tensor, ComponentType.sint32)
    for r in range(H):
        for c in range(W):
            assert got[r, c] == tensor[(r // b[0]) * blocks_w + c // b[1]]
    # every element of a block is the same
    for br in range(blocks_h):
        for bc in range(blocks_w):
            blk = got[br * b[0]:(br + 1) * b[0], bc * b[1]:(bc + 1) * b[1]]
            assert (blk == blk.flat[0]).all()


@pytest.mark.parametrize("component", list(ComponentType), ids=lambda c: c.name)
@given(clampValue=clamp_values(), shape=shapes)
@settings(max_examples=25)
def test_constant_out_of_bounds_load_is_clamp_value_bits(component, clampValue, shape):
    M, N = shape
    # a 2x3 layout sliced entirely below it: every access is out of bounds
    t = create(2, ClampMode.Constant).set_dimension(2, 3).slice((-M - 5, 0), (M, N)).set_clamp_value(clampValue)
    tensor = np.zeros(t.extent(), dtype=component.dtype)
    got = expected_load(t, M, N, tensor, component)
    width = 8 * component.size
    bits = to_bits(got, component).astype(np.uint64)
    assert (bits == (clampValue & ((1 << width) - 1))).all()


def test_constant_clamp_value_bits_hand_examples():
    t = create(1, ClampMode.Constant).set_dimension(4).slice((10,), (1,))
    cases = [(ComponentType.float16, 0x12343C00, 0x3C00), (ComponentType.bfloat16, 0xABCD3F80, 0x3F80),
             (ComponentType.uint8, 0x123456FF, 0xFF), (ComponentType.sint8, 0x00000180, 0x80),
             (ComponentType.float32, 0x7FC00001, 0x7FC00001), (ComponentType.sint32, 0xFFFFFFFF, 0xFFFFFFFF),
             (ComponentType.float16, 0x7E01, 0x7E01)]  # NaN payloads must survive bit for bit
    for comp, cv, want in cases:
        got = expected_load(t.set_clamp_value(cv), 1, 1, np.zeros(4, comp.dtype), comp)
        assert int(to_bits(got, comp)[0, 0]) == want, comp
    # sint8 0x80 is -128, uint8 0xFF is 255
    assert expected_load(t.set_clamp_value(0x180), 1, 1, np.zeros(4, np.int8), ComponentType.sint8)[0, 0] == -128
    assert expected_load(t.set_clamp_value(0x3C00), 1, 1, np.zeros(4, np.float16),
                         ComponentType.float16)[0, 0] == 1.0


@given(dims=st.integers(1, 5).flatmap(lambda d: st.tuples(layout_dimensions(d), block_sizes(d))))
def test_default_strides_are_minimal_and_valid(dims):
    dimension, blocks = dims
    t = create(len(dimension)).set_block_size(*blocks).set_dimension(*dimension)
    t.check()
    # stride[LDim-1] = 1, stride[i] = prod_{j>i} ceil(Dim[j]/blockSize[j])
    for i in range(t.LDim):
        assert t.stride[i] == math.prod(ceil_div(dimension[j], blocks[j]) for j in range(i + 1, t.LDim))
    # minimal: lowering any stride by one breaks the rule
    for i in range(t.LDim):
        lowered = list(t.stride)
        lowered[i] -= 1
        bad = t.set_stride(*lowered)
        if i < t.LDim - 1 or lowered[i] < 1:
            with pytest.raises(InvalidLayoutError):
                bad.check()


@given(dims=st.integers(2, 5).flatmap(lambda d: st.tuples(layout_dimensions(d, min_side=2), block_sizes(d))),
       data=st.data())
def test_stride_below_rule_is_rejected_naming_the_stride(dims, data):
    dimension, blocks = dims
    t = create(len(dimension)).set_block_size(*blocks).set_dimension(*dimension)
    i = data.draw(st.integers(0, t.LDim - 2))
    need = t.stride[i + 1] * ceil_div(dimension[i + 1], blocks[i + 1])
    below = data.draw(st.integers(0, need - 1)) if need > 1 else 0
    s = list(t.stride)
    s[i] = below
    with pytest.raises(InvalidLayoutError, match=rf"stride\[{i}\]"):
        t.set_stride(*s).check()


# ---------------------------------------------------------------------------
# 3. hand-worked examples
# ---------------------------------------------------------------------------

def test_hand_repeat_5x7_sliced_at_minus3_2():
    # 5x7 layout, Repeat, sliced at offset (-3, 2) with span (4, 6); a 4x6 matrix (N = 6).
    # element (0,5): linear 0*6+5 = 5 -> spanCoord (5//6 % 4, 5 % 6) = (0, 5)
    #   c0 = 0 + -3 = -3 -> OpSMod(-3, 5) = 2;  c1 = 5 + 2 = 7 -> 7 % 7 = 0
    #   tensor coord (2, 0), strides (7, 1) -> index 2*7 + 0 = 14
    # element (3,0): spanCoord (3, 0) -> c0 = 0 (in bounds), c1 = 2 -> index 2
    # element (1,4): spanCoord (1, 4) -> c0 = -2 -> 3, c1 = 6 -> index 3*7 + 6 = 27
    t = create(2, ClampMode.Repeat).set_dimension(5, 7).slice((-3, 2), (4, 6))
    a = tensor_addresses(t, 4, 6, is_store=False)
    assert a.tensorCoord[:, 0, 5].tolist() == [2, 0]
    assert a.index[0, 5] == 14 and a.index[3, 0] == 2 and a.index[1, 4] == 27
    assert a.valid.all()


def test_hand_repeat_mirrored_dim4():
    # layoutDimension 4: period 2*4-2 = 6
    #   5 -> 5 % 6 = 5 >= 4 -> 6-5 = 1;   -1 -> OpSMod(-1,6) = 5 -> 1;   4 -> 2;  6 -> 0;  -4 -> 2 -> 2
    want = {5: 1, -1: 1, 4: 2, 6: 0, -4: 2, 7: 1, -6: 0, 3: 3}
    for c, m in want.items():
        t = create(1, ClampMode.RepeatMirrored).set_dimension(4).slice((c,), (1,))
        assert tensor_addresses(t, 1, 1, is_store=False).index[0, 0] == m, c


def test_hand_blocked_4x9_block_2x3():
    # blockSize (2,3) over 4x9, default strides: stride1 = 1, stride0 = ceil(9/3) = 3
    # tensor (3,7): blockCoord (1, 2), coordInBlock (1, 1) -> index 1*3 + 2 = 5
    # tensor (0,0..2) and (1,0..2) all -> block (0,0) -> index 0; (2,3) -> block (1,1) -> 4
    t = create(2).set_block_size(2, 3).set_dimension(4, 9)
    assert t.stride == (3, 1) and t.extent() == 6
    a = tensor_addresses(t, 4, 9, is_store=False)
    assert a.index[3, 7] == 5
    assert a.blockCoord[:, 3, 7].tolist() == [1, 2] and a.coordInBlock[:, 3, 7].tolist() == [1, 1]
    assert set(a.index[0:2, 0:3].ravel().tolist()) == {0}
    assert a.index[2, 3] == 4
    tensor = np.array([10, 11, 12, 13, 14, 15], dtype=np.int32)
    got = expected_load(t, 4, 9, tensor, ComponentType.sint32)
    assert got.tolist() == [[10] * 3 + [11] * 3 + [12] * 3] * 2 + [[13] * 3 + [14] * 3 + [15] * 3] * 2


def test_hand_clamp_to_edge_corner():
    # 3x4 layout, ClampToEdge, sliced at (-2, 3) span (2, 2); 2x2 matrix:
    # (0,0): c=(-2, 3) -> (0, 3) -> 3;  (0,1): (-2, 4) -> (0, 3) -> 3
    # (1,0): (-1, 3) -> (0, 3) -> 3;    (1,1): (-1, 4) -> (0, 3) -> 3
    t = create(2, ClampMode.ClampToEdge).set_dimension(3, 4).slice((-2, 3), (2, 2))
    a = tensor_addresses(t, 2, 2, is_store=False)
    assert a.index.tolist() == [[3, 3], [3, 3]] and a.valid.all() and a.out_of_bounds.tolist() == [[True] * 2] * 2


def test_hand_constant_partial():
    # 1-D layout of 5, offset 3, span 4; 1x4 matrix: coords 3, 4 in bounds, 5, 6 -> clampValue
    t = create(1, ClampMode.Constant).set_dimension(5).slice((3,), (4,)).set_clamp_value(99)
    got = expected_load(t, 1, 4, np.arange(10, 15, dtype=np.uint32), ComponentType.uint32)
    assert got.tolist() == [[13, 14, 99, 99]]


def test_hand_span_smaller_than_matrix_wraps():
    # 1-D span 3, 2x4 matrix: linear index 0..7, spanCoord = index % 3 (the quotient is dropped)
    # (1,1): 5 % 3 = 2;  (1,3): 7 % 3 = 1
    t = create(1, ClampMode.Undefined).set_dimension(10).slice((4,), (3,))
    a = tensor_addresses(t, 2, 4, is_store=False)
    assert a.index.tolist() == [[4, 5, 6, 4], [5, 6, 4, 5]]


def test_hand_3d_span():
    # 3-D layout (3,5,4), default strides (20,4,1), span (2,3,4), 4x6 matrix (N=6)
    # (2,5): index 17 -> d2 = 17 % 4 = 1, 17//4 = 4 -> d1 = 4 % 3 = 1, 4//3 = 1 -> d0 = 1 % 2 = 1
    #   tensor (1,1,1) + offset (1,2,0) = (2,3,1) -> 2*20 + 3*4 + 1 = 53
    t = create(3).set_dimension(3, 5, 4).slice((1, 2, 0), (2, 3, 4))
    assert t.stride == (20, 4, 1)
    a = tensor_addresses(t, 4, 6, is_store=False)
    assert a.tensorCoord[:, 2, 5].tolist() == [2, 3, 1]
    assert a.index[2, 5] == 53
    assert a.index[0, 0] == 1 * 20 + 2 * 4


def test_hand_explicit_stride_padding():
    # 2x3 layout with row pitch 8 (SetStride(8, 1)): element (1,2) -> 1*8 + 2 = 10
    t = create(2).set_dimension(2, 3).set_stride(8, 1)
    t.check()
    assert tensor_addresses(t, 2, 3, is_store=False).index.tolist() == [[0, 1, 2], [8, 9, 10]]
    assert t.extent() == 11


def test_set_dimension_resets_slice_and_create_defaults():
    t = create(3, ClampMode.Constant)
    assert t.blockSize == (1, 1, 1) and t.layoutDimension == (0, 0, 0) and t.stride == (0, 0, 0)
    assert t.offset == (0, 0, 0) and t.span == (0, 0, 0) and t.clampValue == 0
    t = t.set_dimension(2, 3, 4).slice((1, 1, 1), (1, 1, 1)).set_dimension(5, 6, 7)
    assert t.offset == (0, 0, 0) and t.span == (5, 6, 7) and t.stride == (42, 7, 1)
    # slices accumulate offsets
    assert t.slice((1, 2, 3), (1, 1, 1)).slice((1, 1, 1), (2, 2, 2)).offset == (2, 3, 4)


# ---------------------------------------------------------------------------
# 4. stores
# ---------------------------------------------------------------------------

@given(t=tensor_layouts(blocked=False), shape=shapes)
def test_expected_store_matches_reference(t, shape):
    M, N = shape
    assume(not _ub(t, M, N, True))
    n = t.extent()
    tensor = [-(i + 1) for i in range(n)]
    matrix = [[1000 + r * N + c for c in range(N)] for r in range(M)]
    try:
        want = ref.store(t, matrix, tensor)
    except ValueError:
        with pytest.raises(ValueError):
            expected_store(t, np.array(matrix, dtype=np.int64), np.array(tensor, dtype=np.int64))
        return
    got = expected_store(t, np.array(matrix, dtype=np.int64), np.array(tensor, dtype=np.int64))
    assert got.tolist() == want
    # exactly the stored positions changed
    stored = {i for row in ref.all_elements(t, M, N, True) for i in row if i is not None}
    changed = {i for i in range(n) if got[i] != tensor[i]}
    assert changed == stored


@pytest.mark.parametrize("mode", NON_UNDEFINED, ids=lambda m: m.name)
def test_store_discards_out_of_bounds_in_every_mode(mode):
    # 4x4 layout, sliced at (2, -1) with span (4, 4): rows 2,3 and cols 0..2 of the
    # matrix land at tensor (2..3, 0..2); everything else is out of bounds and discarded,
    # even for ClampToEdge/Repeat/RepeatMirrored (which would otherwise race).
    t = create(2, mode).set_dimension(4, 4).slice((2, -1), (4, 4))
    matrix = np.arange(1, 17, dtype=np.int32).reshape(4, 4)
    out = expected_store(t, matrix, np.zeros(16, dtype=np.int32))
    want = np.zeros((4, 4), dtype=np.int32)
    want[2:4, 0:3] = matrix[0:2, 1:4]
    np.testing.assert_array_equal(out.reshape(4, 4), want)


def test_store_race_raises():
    # span 8 < 16 matrix elements: (0,0) and (2,0) both go to span coordinate 0
    t = create(1).set_dimension(16).slice((0,), (8,))
    with pytest.raises(ValueError):
        expected_store(t, np.ones((4, 4), np.float16), np.zeros(16, np.float16))
    # a blocked store races too (four elements per 2x2 block)
    tb = create(2).set_block_size(2, 2).set_dimension(4, 4)
    with pytest.raises(ValueError):
        expected_store(tb, np.ones((4, 4), np.float16), np.zeros(tb.extent(), np.float16))


def test_store_leaves_unaddressed_elements():
    # 2x3 matrix into a 2x3 window of a 4x5 tensor with row pitch 6
    t = create(2).set_dimension(4, 5).set_stride(6, 1).slice((1, 2), (2, 3))
    tensor = np.full(t.extent(), -1, dtype=np.int32)
    out = expected_store(t, np.array([[1, 2, 3], [4, 5, 6]], np.int32), tensor)
    want = tensor.copy()
    want[[8, 9, 10, 14, 15, 16]] = [1, 2, 3, 4, 5, 6]
    np.testing.assert_array_equal(out, want)
    assert (tensor == -1).all(), "expected_store must not modify its input"


def test_locate_names_a_failing_element_in_spec_terms() -> None:
    """Hand-worked: a 2-D layout 4 x 6 (row stride 6), a 2 x 3 matrix loaded at offset (1, 2) with
    ClampToEdge: output element 5 is matrix (1, 2), tensorCoord (2, 4), tensor element 2*6 + 4 = 16.
    Sliced to start at column 4, matrix column 2 reads column 6, clamped to 5: out of bounds."""
    t = TensorLayout.create(2, ClampMode.ClampToEdge).set_dimension(4, 6).slice((1, 2), (2, 3))
    assert tensor_addresses(t, 2, 3, is_store=False).locate(5, is_store=False) == {
        "row": 1, "col": 2, "tensorCoord": [2, 4], "outOfBounds": False, "tensorElement": 16}
    edge = TensorLayout.create(2, ClampMode.ClampToEdge).set_dimension(4, 6).slice((0, 4), (2, 3))
    assert tensor_addresses(edge, 2, 3, is_store=False).locate(2, is_store=False) == {
        "row": 0, "col": 2, "tensorCoord": [0, 5], "outOfBounds": True, "tensorElement": 5}
    store = tensor_addresses(t, 2, 3, is_store=True)
    assert store.locate(16, is_store=True) == {"tensorElement": 16, "storedBy": {"row": 1, "col": 2},
                                               "tensorCoord": [2, 4]}
    assert store.locate(0, is_store=True) == {"tensorElement": 0, "storedBy": None}


def test_racing_stores_are_refused_by_the_oracle_and_land_last_on_a_device() -> None:
    """Two matrix elements on one tensor element: no expected value exists (ValueError), while
    the reference device stores one of them, as hardware would (the last, row-major), so a
    mutant that makes stores collide fails its cases instead of crashing the backend."""
    index = np.array([[0, 2], [2, 1]])
    none = np.zeros((1, 2, 2), dtype=np.int64)
    a = TensorAddresses(index=index, valid=np.ones((2, 2), bool), out_of_bounds=np.zeros((2, 2), bool),
                          tensorCoord=none, blockCoord=none, coordInBlock=none)
    matrix, tensor = np.array([[10, 20], [30, 40]]), np.array([-1, -1, -1, -1])
    with pytest.raises(ValueError, match="data race"):
        a.store(matrix, tensor)
    assert a.store(matrix, tensor, racing=True).tolist() == [10, 40, 30, -1]
