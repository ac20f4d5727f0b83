"""The tensor-layout strategies draw only valid cases, reach the edges, and shrink well."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis.errors import NoSuchExample
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from ctsgen.device.profile import default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.families.tensor_layout import FAMILY
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.ops.tensor_layout import Operation, decode_layout
from ctsgen.model.tensor import ClampMode, ceil_div, TensorLayout
from ctsgen.model.types import ComponentType, Scope
from ctsgen.oracle.addressing import tensor_addresses
from ctsgen.strategies import clamp_values, layout_dimensions, matrix_types, slices, strides, tensor_layouts

PROFILE = default_profile()
FIXED_TYPES = set(PROFILE.matrix_types())
CASES = FAMILY.cases(StrategyOptions())
HAZARDOUS = FAMILY.cases(StrategyOptions(include_hazardous=True))
FIND = settings(max_examples=2000, database=None, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
#: reachability only needs one example, not the minimal one: skip the (slow) shrink phase
REACH = settings(FIND, phases=[Phase.generate])


def addresses(c: TensorLayoutCase):
    m = c.shader.matrix
    return tensor_addresses(c.layout(), m.rows, m.cols, is_store=c.shader.operation is Operation.store)


def check_case(c: TensorLayoutCase, hazardous: bool = False) -> None:
    t = c.layout()  # runs check()
    t.check()
    v, m = c.shader, c.shader.matrix
    assert PROFILE.supports_matrix(m) is None
    a = addresses(c)
    if v.clampMode is ClampMode.Undefined:
        assert not a.out_of_bounds.any()
    if v.operation is Operation.store:
        assert c.blockSize is None
        idx = a.index[a.valid]
        assert np.unique(idx).size == idx.size, "two stored elements share a tensor element"
    if v.clampMode is ClampMode.RepeatMirrored and not hazardous:
        assert min(t.layoutDimension) >= 2
    d = c.data()
    n_out = m.elements if v.operation is Operation.load else t.extent()
    assert d.initial[1].size == n_out and d.expected[1].size == n_out and d.expected[0] is None
    assert d.initial[0].dtype == m.component.dtype
    assert TensorLayoutCase.from_json(c.to_json()) == c
    assert FAMILY.case_from_json(c.to_json()).name() == c.name()
    assert decode_layout(c.params(), v.Dim, v.clampMode) == t


@given(CASES)
def test_every_drawn_case_is_valid(c):
    check_case(c)


@given(HAZARDOUS)
def test_every_hazardous_case_is_valid(c):
    check_case(c, hazardous=True)


@pytest.mark.parametrize("cell", FAMILY.strata(), ids=lambda s: f"{s['operation'].value}-dim{s['Dim']}-"
                         f"{s['clampMode'].name}")
@settings(max_examples=3)
@given(data=st.data())
def test_every_stratum_draws_valid_cases(cell, data):
    v = data.draw(FAMILY.variants(StrategyOptions(), **cell))
    assert (v.operation, v.Dim, v.clampMode) == (cell["operation"], cell["Dim"], cell["clampMode"])
    check_case(data.draw(FAMILY.cases_for(v, StrategyOptions())))


# -- edges are reachable -------------------------------------------------

def _oob(c: TensorLayoutCase) -> bool:
    return bool(addresses(c).out_of_bounds.any())


def _crosses_block(c: TensorLayoutCase) -> bool:
    if c.blockSize is None:
        return False
    a = addresses(c)
    for d, b in enumerate(c.blockSize):
        if b > 1 and a.valid.any():
            bc = a.blockCoord[d][a.valid]
            cib = a.coordInBlock[d][a.valid]
            if np.unique(bc).size > 1 and np.unique(cib).size > 1:
                return True
    return False


EDGES = {
    "negative offset": lambda c: c.offset is not None and min(c.offset) < 0,
    "layoutDimension of 1": lambda c: 1 in c.layoutDimension,
    "span larger than the layout": lambda c: c.span is not None and any(
        s > d for s, d in zip(c.span, c.layoutDimension)),
    **{f"out of bounds with {m.name}": (lambda m: lambda c: c.shader.clampMode is m and _oob(c))(m)
       for m in ClampMode if m is not ClampMode.Undefined},
    "blockSize > 1 in >= 2 dims": lambda c: c.blockSize is not None and sum(b > 1 for b in c.blockSize) >= 2,
    "block boundary inside the matrix": _crosses_block,
    "workgroup scope": lambda c: c.shader.matrix.scope is Scope.Workgroup,
    "flexible size": lambda c: c.shader.matrix not in FIXED_TYPES,
    "bfloat16": lambda c: c.shader.matrix.component is ComponentType.bfloat16,
    "store with a slice out of bounds": lambda c: c.shader.operation is Operation.store and _oob(c),
    "explicit stride with padding": lambda c: c.stride is not None and c.stride[-1] > 1,
    "random data": lambda c: c.data_pattern == "random",
    "clampValue set": lambda c: c.clampValue is not None and c.clampValue > 0xFFFF,
}


@pytest.mark.parametrize("edge", list(EDGES))
def test_edges_are_reachable(edge):
    c = find(CASES, EDGES[edge], settings=REACH)
    check_case(c)


@pytest.mark.slow
def test_hazardous_mirror_dim1_is_reachable_only_when_asked():
    def hazard(c):
        return c.shader.clampMode is ClampMode.RepeatMirrored and 1 in c.layoutDimension and _oob(c)

    c = find(HAZARDOUS, hazard, settings=REACH)
    check_case(c, hazardous=True)
    # a load through it: every coordinate of a dimension of 1 maps to 0 (decision mirror-repeat-dim-1)
    c = find(HAZARDOUS, lambda c: hazard(c) and c.shader.operation is Operation.load, settings=REACH)
    check_case(c, hazardous=True)
    a = addresses(c)
    assert a.valid.all()
    for d, L in enumerate(c.layout().layoutDimension):
        if L == 1:
            assert (a.tensorCoord[d] == 0).all()
    # and never without include_hazardous
    with pytest.raises(NoSuchExample):
        find(FAMILY.cases(StrategyOptions(), clampMode=ClampMode.RepeatMirrored),
             lambda c: 1 in c.layoutDimension, settings=settings(REACH, max_examples=60))


# -- shrinking ----------------------------------------------------------

@pytest.mark.slow
def test_shrinks_to_a_small_discarding_store():
    def discarding_store(c):
        if c.shader.operation is not Operation.store or c.shader.clampMode is not ClampMode.Constant:
            return False
        return not addresses(c).valid.all()

    pinned = FAMILY.cases(StrategyOptions(), operation=Operation.store, clampMode=ClampMode.Constant)
    c = find(pinned, discarding_store, settings=FIND)
    m = c.shader.matrix
    assert c.shader.Dim == 1
    assert c.blockSize is None and c.stride is None and c.clampValue is None
    assert c.data_pattern == "iota" and c.seed == 0
    assert m.scope is Scope.Subgroup and m.component is ComponentType.float16 and m.elements <= 256
    assert c.offset is not None and abs(c.offset[0]) <= 2 * m.elements


@pytest.mark.slow
def test_shrinks_to_a_small_out_of_bounds_load():
    def oob_repeat(c):
        return c.shader.operation is Operation.load and c.shader.clampMode is ClampMode.Repeat and _oob(c)

    pinned = FAMILY.cases(StrategyOptions(), operation=Operation.load, clampMode=ClampMode.Repeat)
    c = find(pinned, oob_repeat, settings=FIND)
    assert c.shader.Dim == 1 and c.blockSize is None and c.stride is None and c.clampValue is None
    assert c.data_pattern == "iota"
    assert c.shader.matrix.elements <= 256 and c.shader.matrix.scope is Scope.Subgroup
    assert c.layoutDimension[0] <= 4


@pytest.mark.slow
def test_simplest_case_is_the_documented_default():
    # strategy.py: "Everything shrinks toward Dim 1, Undefined clamping, the smallest float16
    # subgroup matrix the device lists (8x8 B on the H100), no block size, default strides,
    # no slice, iota data" (load or store: a store is one draw shorter).
    c = find(CASES, lambda c: True, settings=FIND)
    v, m = c.shader, c.shader.matrix
    assert v.Dim == 1 and v.clampMode is ClampMode.Undefined
    assert (m.component, m.scope, m.rows, m.cols) == (ComponentType.float16, Scope.Subgroup, 8, 8)
    assert c.blockSize is None and c.stride is None and c.offset is None and c.clampValue is None
    assert c.data_pattern == "iota"


# -- the shared strategies ----------------------------------------------

@given(t=tensor_layouts())
def test_tensor_layouts_are_valid(t):
    t.check()
    if t.clampMode is ClampMode.RepeatMirrored:
        assert min(t.layoutDimension) >= 2
    if t.clampMode is ClampMode.Undefined:
        for o, s, d in zip(t.offset, t.span, t.layoutDimension):
            assert 0 <= o and o + s <= d
    if t.clampMode is not ClampMode.Constant:
        assert t.clampValue == 0


@given(t=tensor_layouts(in_bounds=True))
def test_tensor_layouts_in_bounds(t):
    t.check()
    assert not tensor_addresses(t, 1, t.span_elements, is_store=False).out_of_bounds.any()


@given(data=st.data(), D=st.integers(1, 5))
def test_strides_are_valid_and_at_least_the_default(data, D):
    dims = data.draw(layout_dimensions(D))
    blocks = data.draw(st.tuples(*[st.integers(1, 8)] * D))
    s = data.draw(strides(dims, blocks))
    t = TensorLayout.create(D).set_block_size(*blocks).set_dimension(*dims)
    default = t.stride
    t = t.set_stride(*s)
    t.check()
    assert s[-1] >= 1
    for i in range(D - 1):
        assert s[i] >= s[i + 1] * ceil_div(dims[i + 1], blocks[i + 1])
    assert all(x >= y for x, y in zip(s, default))


@given(data=st.data(), D=st.integers(1, 5), in_bounds=st.booleans(), need=st.integers(1, 600))
def test_slices_are_valid(data, D, in_bounds, need):
    dims = data.draw(layout_dimensions(D))
    if in_bounds and math.prod(dims) < need:
        with pytest.raises(ValueError):
            data.draw(slices(dims, in_bounds=True, min_elements=need))
        return
    offset, span = data.draw(slices(dims, in_bounds=in_bounds, min_elements=need))
    assert len(offset) == len(span) == D
    assert all(s >= 1 for s in span) and math.prod(span) >= need
    assert all(-(2**31) <= o < 2**31 for o in offset)
    if in_bounds:
        assert all(0 <= o and o + s <= d for o, s, d in zip(offset, span, dims))


@given(matrix_types(PROFILE))
def test_matrix_types_are_supported_by_the_profile(mt):
    assert PROFILE.supports_matrix(mt) is None
    assert max(mt.rows, mt.cols) <= PROFILE.flexible_max_dimension


@given(matrix_types(PROFILE, flexible=False))
def test_fixed_matrix_types_are_listed(mt):
    assert mt in FIXED_TYPES


@given(matrix_types(PROFILE, workgroup=False))
def test_matrix_types_without_workgroup_are_subgroup(mt):
    assert mt.scope is Scope.Subgroup and mt.workgroup_size == 32


@given(clamp_values())
def test_clamp_values_are_32_bit(v):
    assert 0 <= v <= 0xFFFFFFFF
