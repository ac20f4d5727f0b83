"""The tensor-view strategies draw valid cases, reach the edges, shrink toward the
identity view, and every sampled variant compiles, validates and passes on the
reference backend."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from ctsgen.core.family import StrategyOptions
from ctsgen.ops.tensor_layout import Operation
from ctsgen.families.tensor_view import FAMILY
from ctsgen.ops.tensor_view_case import TensorViewCase
from ctsgen.ops.tensor_view import decode_view
from ctsgen.families.tensor_view.coverage import CLIPS, clip_class
from ctsgen.strategies.tensor_view import view_variants
from ctsgen.model.tensor import UINT32_MAX
from ctsgen.oracle.addressing import tensor_addresses_with_view
from ctsgen.pack.generate import draw_cases
from ctsgen.toolchain import compile_glsl, validate_spirv

CASES = FAMILY.cases(StrategyOptions())
FIND = settings(max_examples=2000, database=None, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
REACH = settings(FIND, phases=[Phase.generate])


def addresses(c: TensorViewCase):
    m = c.shader.matrix
    return tensor_addresses_with_view(c.layout(), c.view(), m.rows, m.cols,
                                      is_store=c.shader.operation is Operation.store)


@pytest.mark.slow
@given(CASES)
def test_cases_are_valid(c: TensorViewCase) -> None:
    v = c.view()  # runs check()
    a, in_clip = addresses(c)
    if c.shader.operation is Operation.store:
        idx = a.index[a.valid]
        assert np.unique(idx).size == idx.size
    if not c.shader.hasDimensions:
        assert c.shader.VDim == c.shader.Dim
    assert sorted(c.shader.permutation) == list(range(c.shader.VDim))
    d = c.data()
    assert d.expected[0] is None and d.expected[1].size == d.initial[1].size
    assert TensorViewCase.from_json(c.to_json()) == c
    assert FAMILY.case_from_json(c.to_json()).name() == c.name()
    assert decode_view(c.params(), c.shader) == v


@pytest.mark.parametrize("what, pred", [
    ("non-identity permutation", lambda c: c.shader.permutation != tuple(range(c.shader.VDim))),
    ("5-D permutation", lambda c: c.shader.VDim == 5 and c.shader.permutation[0] != 0),
    ("VDim != Dim", lambda c: c.shader.VDim != c.shader.Dim),
    ("clip cutting the matrix", lambda c: c.clip is not None and 0 < addresses(c)[1].sum() < c.shader.matrix.elements),
    ("clip larger than the matrix", lambda c: c.clip is not None and c.clip[1] == UINT32_MAX - c.clip[0]),
    ("everything clipped", lambda c: c.clip is not None and not addresses(c)[1].any()),
    ("explicit view stride", lambda c: c.viewStride is not None),
    ("store through a clipped dims view", lambda c: c.shader.operation is Operation.store
     and c.shader.hasDimensions and c.clip is not None),
    ("clamped element inside the clip", lambda c: (addresses(c)[0].out_of_bounds).any()),
])
def test_reaches(what: str, pred) -> None:
    find(CASES, pred, settings=REACH)


@pytest.mark.slow
@pytest.mark.parametrize("operation", list(Operation))
@pytest.mark.parametrize("has", [False, True])
@pytest.mark.parametrize("clip", [CLIPS[1], CLIPS[3]])
def test_clip_windows_keeping_the_whole_matrix_are_reachable(operation: Operation, has: bool, clip: str) -> None:
    """The coverage table's hasDimensions x clip region cells that independent axes missed, for
    loads and stores: a window exactly the matrix (offsets 0, spans M and N) and one running
    past it without cutting it (offsets 0, spans >= M and N, one larger: the clipped row
    width is min(N, clipColSpan))."""
    find(FAMILY.cases(operation=operation, hasDimensions=has),
         lambda c: clip_class(c.clip, c.shader.matrix.rows, c.shader.matrix.cols) == clip, settings=REACH)


@pytest.mark.slow
@pytest.mark.parametrize("perm", [*permutations(range(4)), (4, 3, 2, 1, 0), (2, 0, 4, 1, 3)])
def test_every_permutation_is_reachable(perm: tuple[int, ...]) -> None:
    """Every p0..p3 of VDim 4 (and two of VDim 5) is drawn: a default pack's 20-odd VDim-4
    variants hold only some of the 24."""
    find(view_variants(Dim=len(perm), hasDimensions=False), lambda v: v.permutation == perm, settings=REACH)


@pytest.mark.slow
def test_shrinks_to_identity_view() -> None:
    c = find(FAMILY.cases(hasDimensions=True), lambda c: True, settings=FIND)
    assert c.shader.permutation == (0,) and c.clip is None and c.viewStride is None
    assert c.viewDimension == (1,)


@pytest.mark.slow
def test_reference_backend_passes_a_pack(private_spirv_cache) -> None:
    """A small stratified pack: every variant compiles and validates, and running
    each variant's reference execute on the initial buffers gives the expected ones."""
    cases = draw_cases(FAMILY, 60, 3, StrategyOptions(), cases_per_variant=3)
    assert {c.shader.operation for c in cases} == set(Operation)
    seen = set()
    for c in cases:
        v = c.variant()
        if v.id not in seen and len(seen) < 12:
            validate_spirv(compile_glsl(v.glsl(), f"{v.id}.comp"))
            seen.add(v.id)
        d = c.data()
        bufs = [x.copy() for x in d.initial]
        v.execute(d.params[None, :], np.zeros((1, 2), dtype=np.int64), bufs)
        np.testing.assert_array_equal(bufs[1].view(np.uint8), d.expected[1].view(np.uint8))
