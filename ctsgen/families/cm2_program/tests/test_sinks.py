"""cm2-program's stores through a tensor view (docs/spec-decisions.md, cm2-program-view-stores):
a hand-worked program of three stores, sampled programs with view stores compile and validate and
keep to the clip, the composition mutant only a view store can show, and the debug re-run naming a
broken view store.

The expected values below are written out from the spec, not computed by the oracle under test
(SPV_NV_cooperative_matrix2 / SPV_NV_tensor_addressing, "Tensor Layout and View",
matrixCoordToTensorElementWithView): an element (row, col) inside the clip has the index
``(row - clipRowOffset) * min(N, clipColSpan) + (col - clipColOffset)``; linearToViewCoord peels
``viewCoord[p[dim]]`` for dim from VDim-1 down to 0, so tensorViewNV<2, false, 1, 0> over a
16 x 16 span gives viewCoord (col, row) and stores the matrix transposed; outside the clip the
"store is skipped"; an out-of-bounds store through any clamp mode but Undefined is discarded
(decision stores-discard). Output regions start poisoned, so a skipped element keeps the poison.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.families.cm2_program import FAMILY
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant, layout_variant
from ctsgen.families.cm2_program.coverage import tables
from ctsgen.families.cm2_program.program import ACC32, Node, Op, Program, view_variant
from ctsgen.families.cm2_program.strategy import (KINDS, STEP, STORE, VIEW_STORE_EVERY, build, program_cases_for,
                                                  program_variants)
from ctsgen.families.cm2_program.tests.test_program import killed
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.ops.tensor_view_case import TensorViewCase
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType
from ctsgen.oracle.values import from_bits, sentinel_bits
from ctsgen.runner.debug_run import debug_rerun
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv

C = ClampMode
F32 = ComponentType.float32
POISON = from_bits(sentinel_bits(F32), F32)
MUTANT = "program-view-store-permutation-dropped"


def _three_stores(transposed: tuple[int, int] = (1, 0), clipped_view: bool = True) -> ProgramCase:
    """v0 = load of a 16 x 16 row-major tensor, then three stores of v0, each into its own
    256-element region of the float32 output buffer:

    #1 through tensorLayoutNV<2, Undefined> (16 x 16) and tensorViewNV<2, false, ``transposed``>;
    #2 through tensorLayoutNV<2, Constant> sliced at offset (14, 0), span (16, 16), and
       tensorViewNV<2, false, 0, 1> clipped to rows 0-7, columns 4-11 (``clipped_view``;
       without it #2 is a plain store through that layout);
    #3 through tensorLayoutNV<2, ClampToEdge> sliced at offset (8, 0), span (16, 16)."""
    n0 = Node(Op.load, ACC32, (), C.Undefined, 2)
    n1 = Node(Op.storeview, ACC32, (0,), C.Undefined, 2, hasDimensions=False, permutation=transposed)
    n2 = (Node(Op.storeview, ACC32, (0,), C.Constant, 2, hasDimensions=False, permutation=(0, 1)) if clipped_view
          else Node(Op.store, ACC32, (0,), C.Constant, 2))
    n3 = Node(Op.store, ACC32, (0,), C.ClampToEdge, 2)
    slice2 = TensorLayoutCase(layout_variant(n2), (16, 16), offset=(14, 0), span=(16, 16))
    p2 = TensorViewCase(view_variant(n2), slice2, clip=(0, 8, 4, 8)) if clipped_view else slice2
    params = (TensorLayoutCase(layout_variant(n0), (16, 16)),
              TensorViewCase(view_variant(n1), TensorLayoutCase(layout_variant(n1), (16, 16))), p2,
              TensorLayoutCase(layout_variant(n3), (16, 16), offset=(8, 0), span=(16, 16)))
    return ProgramCase(ProgramVariant(Program((n0, n1, n2, n3))), params, seed=9)


def test_hand_worked_view_stores() -> None:
    """#1 holds v0 transposed. #2: the clip's 64 elements have indices (row * 8 + col - 4) 0-63,
    i.e. span rows 0-3, tensor rows 14-17 (offset 14): the 32 of rows 14-15 (matrix rows 0-3,
    columns 4-11) land in tensor elements 224-255, the 32 of rows 16-17 are out of bounds and
    discarded, everything else is clipped. #3: matrix rows 0-7 land in tensor rows 8-15, rows
    8-15 are out of bounds (ClampToEdge stores discard them). All else keeps the poison."""
    c = _three_stores()
    d = c.data()
    assert c.layout_regions() == ({0: 0, 1: 0, 2: 256, 3: 512}, [256, 768])
    x = d.initial[0].reshape(16, 16)
    want = np.full((3, 256), POISON, np.float32)
    want[0] = x.T.ravel()
    want[1][224:256] = x[0:4, 4:12].ravel()
    want[2][128:256] = x[0:8].ravel()
    assert d.expected[0] is None
    assert np.array_equal(d.expected[1].view(np.uint32), want.ravel().view(np.uint32))
    assert check_case(ReferenceBackend(), c).status.value == "Pass"


def test_the_view_store_mutant_needs_another_view_and_a_permutation() -> None:
    """program-view-store-permutation-dropped: #1 stores untransposed only while #2 is a view
    store too; an identity permutation gives the mutant nothing to drop; the view-load mutant
    has no view load to act on."""
    assert killed(MUTANT, _three_stores())
    assert not killed(MUTANT, _three_stores(clipped_view=False))
    assert not killed(MUTANT, _three_stores(transposed=(0, 1)))
    assert not killed("program-view-permutation-dropped", _three_stores())


def test_the_debug_rerun_names_the_broken_view_store() -> None:
    """Under the mutant the first differing node is the view store #1 (the load before it is
    right, the stores after it are right too); the debug shader compiles and validates."""
    c = _three_stores()
    backend = MutantBackend(MUTANT)
    assert check_case(backend, c).status.value == "Fail"
    run = debug_rerun(FAMILY, c, backend)
    assert run.first is not None and run.first.index == 1 and run.first.label == "#1 storeview"
    validate_spirv(compile_glsl(run.glsl, f"{MUTANT}.debug"))
    assert debug_rerun(FAMILY, c, ReferenceBackend()).first is None


def test_view_stores_show_in_the_coverage_tables() -> None:
    """The hand-worked program: four tensor objects of three clamp modes, the view stores two of
    a kind in one shader, each store an edge from the load."""
    pairs, lengths, objects, seeds, kinds, decodes, domains = tables([{"variant": _three_stores().shader.to_json()}])
    assert pairs.counts[("load", "storeview")] == 2 and pairs.counts[("load", "store")] == 1
    assert "storeview" not in pairs.rows  # a sink defines no value
    assert kinds.counts[("storeview", 2)] == 1 and kinds.counts[("store", 1)] == 1
    assert objects.counts[(4, 3)] == 1 and lengths.counts[(1, "drawn")] == 1  # the three sinks are not length


@settings(max_examples=12, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=6), st.lists(STORE, max_size=2), st.integers(0, 63),
       st.integers(0, 2**14 - 1), st.booleans())
def test_sampled_programs_with_view_stores_compile_and_validate(
        steps: list[tuple[int, int, int]], stores: list[tuple[int, int]], value: int, view: int,
        view_load: bool) -> None:
    """Programs the strategy builds with a view store (any view type and clamp mode; a view
    load first in half of them): the shader and its debug variant compile and validate."""
    first = [(KINDS.index(Op.loadview), 0, view)] if view_load else []
    p = build([*first, *steps], [(value, view * VIEW_STORE_EVERY + VIEW_STORE_EVERY - 1), *stores])
    assert Op.storeview in {n.op for n in p.nodes}
    for v in (ProgramVariant(p), ProgramVariant(p, debug=True)):
        validate_spirv(compile_glsl(v.glsl(), v.id))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_view_store_writes_only_inside_its_clip_values_it_stores(data: st.DataObject) -> None:
    """Every drawn view store changes at most as many elements of its region as its clip holds
    matrix elements, each to a value of the matrix it stores (clip and discards, spec
    properties); the drawn case round-trips through JSON and passes on the reference backend."""
    v = data.draw(program_variants())
    c = data.draw(program_cases_for(v))
    d, values = c.data(), c.values()
    p = v.program
    start, _ = c.layout_regions()
    assert ProgramCase.from_json(c.to_json()) == c
    for i, n in enumerate(p.nodes):
        if n.op is not Op.storeview:
            continue
        q = c.nodes[i]
        b, ext = p.buffer_of(i), q.layout().extent()
        region = d.expected[b][start[i]:start[i] + ext]
        written = region.view(f"u{region.itemsize}") != sentinel_bits(n.type.component)
        view = q.view()
        rows = max(0, min(16, view.clipRowOffset + view.clipRowSpan) - min(16, view.clipRowOffset))
        cols = max(0, min(16, view.clipColOffset + view.clipColSpan) - min(16, view.clipColOffset))
        assert written.sum() <= rows * cols
        assert np.isin(region[written], values[n.args[0]]).all()
    assert check_case(ReferenceBackend(), c).status.value == "Pass"
