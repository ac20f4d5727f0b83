"""The view oracle against the spec's pseudo-code, spec properties, and hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctsgen.ops.tensor_layout import expected_load
from ctsgen.ops.tensor_view import expected_load_view, expected_store_view
from ctsgen.families.tensor_view.tests.spec_view_reference import matrixCoordToTensorElementWithView
from ctsgen.model.tensor import ClampMode, InvalidViewError, TensorLayout, TensorView
from ctsgen.model.types import ComponentType
from ctsgen.oracle.addressing import tensor_addresses_with_view
from ctsgen.strategies import clip_regions, permutations, tensor_layouts, view_dimensions, view_strides

F32 = ComponentType.float32
POISON = -7.0


@st.composite
def layouts_and_views(draw: st.DrawFn, has: bool | None = None):
    t = draw(tensor_layouts(max_side=6))
    hasDim = draw(st.booleans()) if has is None else has
    vdim = draw(st.integers(1, 5)) if hasDim else t.LDim
    v = TensorView.create(vdim, hasDim, draw(permutations(vdim)))
    if hasDim:
        v = v.set_dimension(*draw(view_dimensions(vdim)))
        if draw(st.booleans()):
            v = v.set_stride(*draw(view_strides(v.viewDimension)))
    M, N = draw(st.sampled_from([(1, 1), (2, 3), (4, 4), (5, 2), (8, 8)]))
    clip = draw(clip_regions(M, N))
    if clip is not None:
        v = v.set_clip(*clip)
    return t, v, M, N


def _tensor(t: TensorLayout) -> np.ndarray:
    return np.arange(1, t.extent() + 1, dtype=np.float32)


@given(layouts_and_views())
def test_oracle_matches_scalar_pseudo_code(tv) -> None:
    t, v, M, N = tv
    expect = [[matrixCoordToTensorElementWithView(t, v, r, c, N) for c in range(N)] for r in range(M)]
    a, in_clip = tensor_addresses_with_view(t, v, M, N, is_store=False)
    for r in range(M):
        for c in range(N):
            e = expect[r][c]
            if e == "skipped":
                assert not in_clip[r, c] and not a.valid[r, c]
            elif e is None:
                assert in_clip[r, c] and not a.valid[r, c]
            else:
                assert a.valid[r, c] and a.index[r, c] == e


@given(tensor_layouts(max_side=8))
def test_identity_view_is_no_view(t: TensorLayout) -> None:
    """A view without dimensions, identity permutation and no clip maps index -> index."""
    v = TensorView.create(t.LDim, False)
    tensor = _tensor(t)
    before = np.full((8, 8), POISON, dtype=np.float32)
    np.testing.assert_array_equal(expected_load_view(t, v, 8, 8, tensor, F32, before),
                                  expected_load(t, 8, 8, tensor, F32))


@given(layouts_and_views(has=True))
def test_permutation_equals_permuted_dimensions_and_strides(tv) -> None:
    """linearToViewCoord peels dimensions in permuted order and viewCoordToLinear weights
    viewCoord[i] by stride[i]; so permutation p with (dims, strides) equals the identity
    permutation with dims[p[k]] and strides[p[k]]."""
    t, v, M, N = tv
    p = v.permutation
    w = TensorView.create(v.VDim, True).set_dimension(*(v.viewDimension[i] for i in p)) \
        .set_stride(*(v.viewStride[i] for i in p)).set_clip(v.clipRowOffset, v.clipRowSpan,
                                                            v.clipColOffset, v.clipColSpan)
    a, _ = tensor_addresses_with_view(t, v, M, N, is_store=False)
    b, _ = tensor_addresses_with_view(t, w, M, N, is_store=False)
    np.testing.assert_array_equal(np.where(a.valid, a.index, -1), np.where(b.valid, b.index, -1))


@given(st.lists(st.integers(1, 4), min_size=2, max_size=5).flatmap(
    lambda d: st.tuples(st.just(tuple(d)), permutations(len(d)))))
def test_permutation_then_inverse_is_identity(dp) -> None:
    """f = view (permutation p, dimensions d, packed strides) and g = view (the inverse
    permutation, dimensions d[p[k]], packed strides): g(f(i)) == i for every i < prod(d),
    and f is a bijection that moves something whenever p is not the identity
    (and no two of the permuted dimensions are 1)."""
    dims, p = dp
    n = int(np.prod(dims))
    t = TensorLayout.create(1).set_dimension(n)
    inv = tuple(int(i) for i in np.argsort(p))

    def through(perm: tuple[int, ...], d: tuple[int, ...]) -> np.ndarray:
        a, _ = tensor_addresses_with_view(t, TensorView.create(len(d), True, perm).set_dimension(*d), 1, n,
                                          is_store=False)
        return a.index[0]

    f = through(p, dims)
    g = through(inv, tuple(dims[i] for i in p))
    assert sorted(f.tolist()) == list(range(n))
    np.testing.assert_array_equal(g[f], np.arange(n))
    if p != tuple(range(len(p))) and all(d > 1 for d in dims):
        assert (f != np.arange(n)).any()


def test_hand_worked_transpose() -> None:
    """Layout 3x2 (values 0..5 row-major), no view dimensions, permutation (1, 0),
    matrix 2x3: index = 3r + c; linearToViewCoord gives viewCoord[0] = c, viewCoord[1] = r;
    strides (span[1], 1) = (2, 1) give 2c + r: the matrix is the tensor transposed."""
    t = TensorLayout.create(2).set_dimension(3, 2)
    v = TensorView.create(2, False, (1, 0))
    tensor = np.arange(6, dtype=np.float32)
    out = expected_load_view(t, v, 2, 3, tensor, F32, np.zeros(6, np.float32))
    np.testing.assert_array_equal(out, [[0, 2, 4], [1, 3, 5]])


def test_hand_worked_clip_width() -> None:
    """Clip rows [1, 3), columns [1, 11) of a 4x4 matrix, 1-D layout of 16: width =
    min(N, clipColSpan) = 4, so (1,1) -> 0, (1,3) -> 2, (2,1) -> 4 (not 3); the rest keep
    their value ("the matrix element is unmodified")."""
    t = TensorLayout.create(1).set_dimension(16)
    v = TensorView.create(1, False).set_clip(1, 2, 1, 10)
    tensor = np.arange(100, 116, dtype=np.float32)
    out = expected_load_view(t, v, 4, 4, tensor, F32, np.full(16, POISON, np.float32))
    want = np.full((4, 4), POISON, np.float32)
    want[1, 1:4] = [100, 101, 102]
    want[2, 1:4] = [104, 105, 106]
    np.testing.assert_array_equal(out, want)


@given(layouts_and_views(), st.data())
def test_clip_monotone(tv, data: st.DataObject) -> None:
    """A clip inside another clips a subset of the elements; a clip covering the
    whole matrix (offsets 0, spans >= M and N) equals no clip."""
    t, v, M, N = tv
    ro, co = data.draw(st.integers(0, M)), data.draw(st.integers(0, N))
    rs, cs = data.draw(st.integers(0, M + 2)), data.draw(st.integers(0, N + 2))
    outer = v.set_clip(ro, rs, co, cs)
    inner = v.set_clip(ro + data.draw(st.integers(0, 1)), max(0, rs - 2), co, max(0, cs - 1))
    _, a = tensor_addresses_with_view(t, outer, M, N, is_store=False)
    _, b = tensor_addresses_with_view(t, inner, M, N, is_store=False)
    assert not (b & ~a).any()
    full = v.set_clip(0, M + data.draw(st.integers(0, 3)), 0, N + data.draw(st.integers(0, 3)))
    none = v.set_clip(0, 0xFFFFFFFF, 0, 0xFFFFFFFF)
    x, _ = tensor_addresses_with_view(t, full, M, N, is_store=False)
    y, _ = tensor_addresses_with_view(t, none, M, N, is_store=False)
    np.testing.assert_array_equal(np.where(x.valid, x.index, -1), np.where(y.valid, y.index, -1))


def test_clip_wrap_and_bad_permutation_rejected() -> None:
    with pytest.raises(InvalidViewError, match="wraps in 32 bits"):
        TensorView.create(1, False).set_clip(2, 0xFFFFFFFF, 0, 1).check(TensorLayout.create(1).set_dimension(4))
    with pytest.raises(InvalidViewError, match="permutation"):
        TensorView.create(2, False, (1, 1))
    with pytest.raises(InvalidViewError, match="SetDimensionNV"):
        TensorView.create(2, True).check(TensorLayout.create(2).set_dimension(2, 2))


def test_store_race_detected() -> None:
    """A view with a zero stride folds two matrix elements onto one tensor element."""
    t = TensorLayout.create(1, ClampMode.Constant).set_dimension(8)
    v = TensorView.create(1, True).set_dimension(8).set_stride(0)
    with pytest.raises(ValueError, match="data race"):
        expected_store_view(t, v, np.ones((1, 2), np.float32), np.zeros(8, np.float32))
