"""cm2-program's two routes: the same program with its loads and stores through dense 16 x 16 tensor layouts
and through RowMajor KHR pointers (stride 16) reads the same data and writes the same outputs on the reference
backend; KHR nodes alone chain every operation; KHR accesses are checked when a case is built."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

import ctsgen.device.profile as profile_module
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.device.profile import ProfileLacksError, load_profile
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant, Scalars
from ctsgen.families.cm2_program.program import A16, ACC16, ACC32, B16, Node, Op, Program
from ctsgen.families.cm2_program.strategy import route_twins
from ctsgen.fuzz.buckets import observe, run_with_mutant
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.ops.khr_addressing import KhrAccess, Layout
from ctsgen.strategies.sampling import draw_examples
from ctsgen.mutants.catalogue import catalogue


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(route_twins())
def test_both_routes_write_the_same_outputs_from_the_same_data(pair: tuple[ProgramCase, ProgramCase]) -> None:
    tensor, khr = pair
    assert {n.op for n in khr.shader.program.nodes}.isdisjoint({Op.load, Op.store})
    outputs = []
    for case in pair:
        result, out = observe(ReferenceBackend(), case)
        assert result.status is Status.Pass, (case.name(), result.detail)
        outputs.append([b.tobytes() for b in out])
    assert [b.tobytes() for b in tensor.data().initial] == [b.tobytes() for b in khr.data().initial]
    assert outputs[0] == outputs[1]


def test_khr_nodes_alone_chain_every_operation() -> None:
    """A program without tensor addressing: KHR loads (ColumnMajor, a stride of 0: every column the same),
    reduce, per-element, convert, transpose, arithmetic, scale and muladd, stored through a KHR store."""
    K, S = Op.loadkhr, Op.storekhr
    prog = Program((
        Node(K, A16, layout=Layout.ColumnMajor),                          # v0
        Node(K, B16, layout=Layout.RowMajor),                             # v1
        Node(Op.const, ACC32),                                            # v2
        Node(Op.muladd, ACC32, (0, 1, 2)),                                # v3
        Node(Op.reduce, ACC32, (3,), mode=ReduceMode.Row, combine=Combine.max),  # v4
        Node(Op.sub, ACC32, (3, 4)),                                      # v5
        Node(Op.perelement, ACC32, (5,), fn="select"),                    # v6
        Node(Op.scale, ACC32, (6,)),                                      # v7
        Node(Op.convert, ACC16, (7,)),                                    # v8
        Node(Op.transpose, B16, (8,)),                                    # v9
        Node(S, B16, (9,), layout=Layout.ColumnMajor),
        Node(S, ACC32, (7,), layout=Layout.RowMajor),
    ))
    params = (KhrAccess(Layout.ColumnMajor, 0, 8), KhrAccess(Layout.RowMajor, 24), Scalars(1), None, None, None,
              Scalars(2, 3, 4), Scalars(-1), None, None, KhrAccess(Layout.ColumnMajor, 16, 8),
              KhrAccess(Layout.RowMajor, 32))
    case = ProgramCase(ProgramVariant(prog), params, seed=11)
    run = case.evaluated()
    a = run.values[0]
    assert (a == a[:, :1]).all()  # stride 0: every column is the first
    result, _ = observe(ReferenceBackend(), case)
    assert result.status is Status.Pass
    assert case.shader.requirements().features == ("cooperativeMatrix", "cooperativeMatrixFlexibleDimensions",
                                                   "cooperativeMatrixReductions",
                                                   "cooperativeMatrixPerElementOperations",
                                                   "cooperativeMatrixConversions")


def test_a_store_whose_lines_overlap_is_refused() -> None:
    prog = Program((Node(Op.loadkhr, ACC32, layout=Layout.RowMajor),
                    Node(Op.storekhr, ACC32, (0,), layout=Layout.RowMajor)))
    with pytest.raises(ValueError, match="overlap"):
        ProgramCase(ProgramVariant(prog), (KhrAccess(Layout.RowMajor, 0), KhrAccess(Layout.RowMajor, 8)))
    with pytest.raises(ValueError, match="wrong kind"):
        ProgramCase(ProgramVariant(prog), (KhrAccess(Layout.ColumnMajor, 16), KhrAccess(Layout.RowMajor, 16)))


@pytest.mark.parametrize("load, store, killed", [
    (KhrAccess(Layout.RowMajor, 16), KhrAccess(Layout.RowMajor, 16), set()),
    (KhrAccess(Layout.ColumnMajor, 16), KhrAccess(Layout.RowMajor, 16), {"program-khr-column-major-as-row-major"}),
    (KhrAccess(Layout.RowMajor, 0, 8), KhrAccess(Layout.RowMajor, 24), {"program-khr-store-takes-load-stride"}),
])
def test_each_khr_mutant_is_seen_by_the_access_it_names(load: KhrAccess, store: KhrAccess, killed: set[str]) -> None:
    prog = Program((Node(Op.loadkhr, ACC32, layout=load.layout), Node(Op.storekhr, ACC32, (0,), layout=store.layout)))
    case = ProgramCase(ProgramVariant(prog), (load, store), seed=5)
    names = ("program-khr-column-major-as-row-major", "program-khr-store-takes-load-stride")
    failing = {n for n in names if run_with_mutant(case, catalogue()[n]).status is Status.Fail}
    assert failing == killed


def test_twins_are_refused_where_there_is_no_tensor_route() -> None:
    lavapipe = load_profile(Path(profile_module.__file__).with_name("profiles") / "mesa-lavapipe-26.2.6.txt")
    with pytest.raises(ProfileLacksError, match="cooperativeMatrixTensorAddressing is not supported"):
        draw_examples(route_twins(StrategyOptions(profile=lavapipe)), 1, 0)
