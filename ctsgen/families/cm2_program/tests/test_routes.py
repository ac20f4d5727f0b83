"""cm2-program's two routes: the same program with its loads and stores through dense 16 x 16 tensor layouts
and through RowMajor KHR pointers (stride 16) reads the same data and writes the same outputs on the reference
backend; KHR nodes alone chain every operation; KHR accesses are checked when a case is built."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.verdict import Status
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant, Scalars, layout_variant
from ctsgen.families.cm2_program.program import A16, ACC16, ACC32, B16, SIDE, Node, Op, Program
from ctsgen.families.cm2_program.strategy import (KINDS, SCALARS, SEEDS, SMALL, STEP, STORE, build, khr_route)
from ctsgen.families.tensor_layout.case import TensorLayoutCase
from ctsgen.fuzz.buckets import observe
from ctsgen.model.tensor import ClampMode
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.ops.khr_addressing import KhrAccess, Layout

#: node kinds with a KHR twin or none needed (views and DecodeFuncs have no KHR form)
PLAIN = tuple(k for k in KINDS if k not in (Op.loadview, Op.loaddecode, Op.loadkhr))


def _dense(program: Program) -> Program:
    """Every load and store through a 2-D layout (the tensor side of the twins)."""
    return Program(tuple(replace(n, clampMode=ClampMode.Undefined, Dim=2) if n.op in (Op.load, Op.store) else n
                         for n in program.nodes))


def _params(program: Program, scalars: list[Scalars]) -> tuple:
    out = []
    for n, s in zip(program.nodes, scalars):
        if n.op in (Op.load, Op.store):
            out.append(TensorLayoutCase(layout_variant(n), (SIDE, SIDE)))
        elif n.op in (Op.loadkhr, Op.storekhr):
            out.append(KhrAccess(Layout.RowMajor, SIDE))
        elif n.op is Op.const or n.op in (Op.generate, Op.perelement, Op.scale):
            out.append(s)
        else:
            out.append(None)
    return tuple(out)


@st.composite
def twins(draw: st.DrawFn) -> tuple[ProgramCase, ProgramCase]:
    steps = draw(st.lists(STEP, min_size=2, max_size=8))
    stores = draw(st.lists(STORE, min_size=1, max_size=3))
    tensor = _dense(draw(st.sampled_from([*SEEDS.values(), build(steps, stores, PLAIN, (Op.store,))])))
    scalars = [Scalars(draw(st.sampled_from(SCALARS)) if n.op is not Op.const else draw(st.integers(-SMALL, SMALL)),
                       draw(st.integers(0, SIDE)), draw(st.integers(0, SIDE))) for n in tensor.nodes]
    scalars = [s if n.op in (Op.generate, Op.perelement) else Scalars(s.s) for n, s in zip(tensor.nodes, scalars)]
    seed, domain = draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from(("exact", "float")))
    khr = khr_route(tensor)
    return (ProgramCase(ProgramVariant(tensor), _params(tensor, scalars), seed, domain),
            ProgramCase(ProgramVariant(khr), _params(khr, scalars), seed, domain))


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(twins())
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
    assert case.shader.requirements().features == ("cooperativeMatrix", "cooperativeMatrixReductions",
                                                   "cooperativeMatrixPerElementOperations",
                                                   "cooperativeMatrixConversions")


def test_a_store_whose_lines_overlap_is_refused() -> None:
    prog = Program((Node(Op.loadkhr, ACC32, layout=Layout.RowMajor),
                    Node(Op.storekhr, ACC32, (0,), layout=Layout.RowMajor)))
    with pytest.raises(ValueError, match="overlap"):
        ProgramCase(ProgramVariant(prog), (KhrAccess(Layout.RowMajor, 0), KhrAccess(Layout.RowMajor, 8)))
    with pytest.raises(ValueError, match="wrong kind"):
        ProgramCase(ProgramVariant(prog), (KhrAccess(Layout.ColumnMajor, 16), KhrAccess(Layout.RowMajor, 16)))
