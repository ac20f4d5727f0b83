"""coopvec-program's divergent control flow and partial subgroups (docs/spec-decisions.md
"coopvec-program-divergence"): hand-worked masks, trips and partial workgroups against the
composed oracle, the rules that keep them valid, the exact domain through loops, shaders that
compile and validate, the reference backend, the mutants, coverage and shrinking to today's chain."""

from __future__ import annotations

import functools
import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, find, settings

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.errors import UserError
from ctsgen.families.coopvec_program import FAMILY
from ctsgen.families.coopvec_program import oracle as program_oracle
from ctsgen.families.coopvec_program.case import LayerParams, ProgramCase, ProgramVariant, Scalars
from ctsgen.families.coopvec_program.coverage import tables
from ctsgen.families.coopvec_program.data import trip_bounds
from ctsgen.families.coopvec_program.program import (F16, F32, LOCAL, MAX_TRIPS, Ctl, Layer, Node, Op, Program,
                                                     VecType)
from ctsgen.families.coopvec_program.strategy import CONSTRUCTS, SEEDS, program_variants
from ctsgen.model.types import CoopVecType as T
from ctsgen.mutants.catalogue import catalogue
from ctsgen.ops import coopvec as matmul_oracle
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.ops.coopvec_matrix import MatrixLayout
from ctsgen.pack.generate import draw_cases
from ctsgen.families import get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv

FP16 = (F16, F16, F16, F16, F16)
CASES = FAMILY.cases(StrategyOptions())
FIND = settings(max_examples=400, database=None, deadline=None, suppress_health_check=list(HealthCheck))
LANES = np.arange(LOCAL)
POISON = np.float16(np.nan)


def _f16_word(v: float) -> int:
    return int(np.asarray(v, np.float16).view(np.uint16))


def _row_major(rows: list[list[float]], stride: int = 16) -> np.ndarray:
    raw = np.asarray(rows, np.float16)
    buf = np.zeros(stride * raw.shape[0], np.uint8)
    for r in range(raw.shape[0]):
        buf[r * stride:r * stride + raw.shape[1] * 2] = raw[r].view(np.uint8)
    return buf


def _run(p: Program, words: list[int], buffers: list[np.ndarray], mutant: str | None = None) -> np.ndarray:
    """The reference semantics on hand-built buffers; the output as LOCAL rows of 8 float16."""
    out = [b.copy() for b in buffers]
    run = lambda: ProgramVariant(p).execute(np.asarray([words], np.uint32),  # noqa: E731
                                            np.zeros((1, len(out)), np.int64), out)
    if mutant is None:
        run()
    else:
        with catalogue()[mutant].applied():
            run()
    return out[p.buffer_index("output")].reshape(LOCAL, 8)


def _identity_then(act: Node, local: int = LOCAL, layout: MatrixLayout = MatrixLayout.RowMajor
                   ) -> tuple[Program, list[np.ndarray]]:
    """x (one float16 per invocation: lane - 16), y = 1 * x + 0, then ``act``, stored; the control
    word of invocation l is l % 4. Buffers: input, bias, output (poisoned), matrix0, [optimal0], [control]."""
    L = Layer(*FP16, layout, False, 1, 1)
    p = Program((Node(Op.load, L.input), Node(Op.matmuladd, L.result, L), act, Node(Op.store, L.result)), local)
    inp = np.zeros((local, 8), np.float16)
    inp[:, 0] = np.arange(local) - 16
    bufs = [inp.ravel(), np.zeros(16, np.uint8), np.full(LOCAL * 8, POISON, np.float16)]
    bufs.append(_row_major([[1]]) if not layout.optimal else np.asarray([1], np.float16).view(np.uint8).copy())
    if layout.optimal:
        bufs.append(np.zeros(0, np.uint8))
    if act.ctl is not None:
        bufs.append((np.arange(local) % 4).astype(np.uint32))
    assert len(bufs) == len(p.buffers()) and ([n for n, _ in p.buffers()][-1] == "control") == (act.ctl is not None)
    return p, bufs


def test_hand_worked_if_keeps_or_takes_the_else_side_per_invocation() -> None:
    """y = x + 5 where the invocation's word l % 4 is odd; the others keep x, or (else max(x, 0))
    take max(x, 0). The mask-ignored mutant adds 5 everywhere."""
    x = LANES - 16.0
    odd = LANES % 2 == 1
    p, bufs = _identity_then(Node(Op.act, VecType(F16, 1), fn=ElementOp.fadd, ctl=Ctl.branch))
    words = [0, 16, 0, _f16_word(5), 0]
    assert p.lines()[2] == "v2 = if (c2 & 1) add(v1, s) else v1  : coopvecNV<float16_t, 1>"
    assert np.array_equal(_run(p, words, bufs)[:, 0], np.where(odd, x + 5, x))
    assert np.array_equal(_run(p, words, bufs, "cvprogram-branch-mask-ignored")[:, 0], x + 5)
    p, bufs = _identity_then(Node(Op.act, VecType(F16, 1), fn=ElementOp.fadd, ctl=Ctl.branch, alt=ElementOp.fmax))
    assert np.array_equal(_run(p, words, bufs)[:, 0], np.where(odd, x + 5, np.maximum(x, 0)))


def test_hand_worked_loop_runs_each_invocations_own_trips() -> None:
    """x + 3 repeated l % 4 times (0 to 3 trips in one subgroup): x + 3 (l % 4); the max-trips
    mutant gives every invocation the subgroup's 3 trips: x + 9."""
    x = LANES - 16.0
    p, bufs = _identity_then(Node(Op.act, VecType(F16, 1), fn=ElementOp.fadd, ctl=Ctl.loop))
    words = [0, 16, 0, _f16_word(3), 0]
    assert np.array_equal(_run(p, words, bufs)[:, 0], x + 3 * (LANES % 4))
    assert np.array_equal(_run(p, words, bufs, "cvprogram-loop-max-trips")[:, 0], x + 9)


def test_a_control_word_past_the_most_trips_is_refused_not_looped() -> None:
    """A hand-edited control buffer asking 2^32 - 1 trips: one line naming the node and the fix."""
    p, bufs = _identity_then(Node(Op.act, VecType(F16, 1), fn=ElementOp.fadd, ctl=Ctl.loop))
    bufs[-1][5] = 2**32 - 1
    with pytest.raises(UserError, match="loop node 2: control word 4294967295 is past the 3 trips"):
        _run(p, [0, 16, 0, _f16_word(3), 0], bufs)


def test_hand_worked_square_matmuladd_loop_and_a_type_changing_if() -> None:
    """A square layer W = [[1, 1], [0, 1]], b = (1, 0) on x = (0, 1), repeated l % 4 times:
    (0, 1), (2, 1), (4, 1), (6, 1). Then a 1 x 2 layer [[1, 10]] + 0 under an if, which changes the
    component count: where l % 4 is odd, v0 + 10 v1; elsewhere the zero vector."""
    sq = Layer(*FP16, MatrixLayout.RowMajor, False, 2, 2)
    out = Layer(*FP16, MatrixLayout.RowMajor, False, 1, 2)
    p = Program((Node(Op.load, sq.input), Node(Op.matmuladd, sq.result, sq, ctl=Ctl.loop),
                 Node(Op.matmuladd, out.result, out, ctl=Ctl.branch), Node(Op.store, out.result)))
    assert p.ctl_nodes == (1, 2) and p.nodes[2].line(2).endswith("else 0  : coopvecNV<float16_t, 1>")
    inp = np.zeros((LOCAL, 8), np.float16)
    inp[:, 1] = 1
    bias = np.zeros(32, np.uint8)
    bias[0:2] = np.asarray([1], np.float16).view(np.uint8)
    control = np.stack([LANES % 4, LANES % 4], axis=1).astype(np.uint32).ravel()  # [invocation][node]
    bufs = [inp.ravel(), bias, np.full(LOCAL * 8, POISON, np.float16), _row_major([[1, 1], [0, 1]]),
            _row_major([[1, 10]]), control]
    words = [0, 16, 0, 0, 16, 16]
    t = LANES % 4
    assert np.array_equal(_run(p, words, bufs)[:, 0], np.where(t % 2 == 1, 2 * t + 10, 0))
    # the loop alone, every invocation taking the if: 2 t + 10
    bufs[-1] = np.stack([t, np.ones(LOCAL)], axis=1).astype(np.uint32).ravel()
    assert np.array_equal(_run(p, words, bufs)[:, 0], 2 * t + 10)
    assert np.array_equal(_run(p, words, bufs, "cvprogram-loop-max-trips")[:, 0], np.full(LOCAL, 16))


def test_hand_worked_partial_subgroup_leaves_the_lanes_past_the_workgroup_poisoned() -> None:
    """20 invocations (an InferencingOptimal layer): lanes 0-19 store x, lanes 20-31 of the
    results (a whole subgroup's) keep the poison; the partial-store mutant writes them."""
    p, bufs = _identity_then(Node(Op.act, VecType(F16, 1), fn=ElementOp.fmax), 20, MatrixLayout.InferencingOptimal)
    assert ProgramVariant(p).local_size_x == 20 and p.partial
    out = _run(p, [0, 0, 0, _f16_word(-100), 0], bufs)
    assert np.array_equal(out[:20, 0], np.arange(20) - 16.0) and np.isnan(out[20:].astype(np.float32)).all()
    bad = _run(p, [0, 0, 0, _f16_word(-100), 0], bufs, "cvprogram-partial-store-past-workgroup")
    assert np.array_equal(bad[20:, 0], (np.arange(20, 32) % 20) - 16.0)
    case = ProgramCase(ProgramVariant(p), (None, LayerParams(), Scalars(-100, 0), None))
    k = p.buffer_index("output")
    assert case.locate(k, 20 * 8) == {"invocation": 20, "component": 0, "pastWorkgroup": True}
    assert case.locate(k, 19 * 8 + 1) == {"invocation": 19, "padding": 1}


def test_rules_keep_control_flow_valid() -> None:
    """A loop repeats only a node whose operand has its type; an else side is an if activation's
    max / min against 0; stores and conversions are not controlled; a partial subgroup takes
    optimal layouts only (hazard partial-subgroup-row-column-major); 1..32 invocations."""
    L = Layer(*FP16, MatrixLayout.RowMajor, False, 1, 2)
    base = (Node(Op.load, L.input), Node(Op.matmuladd, L.result, L), Node(Op.store, L.result))
    bad = [
        ((base[0], Node(Op.matmuladd, L.result, L, ctl=Ctl.loop), base[2]), LOCAL, "a loop repeats"),
        ((base[0], Node(Op.matmuladd, L.result, L, ctl=Ctl.branch, alt=ElementOp.fmax), base[2]), LOCAL,
         "else side"),
        ((base[0], Node(Op.matmuladd, L.result, L, alt=ElementOp.fmax), base[2]), LOCAL, "belongs to an if"),
        ((*base[:2], Node(Op.convert, VecType(F32, 1), ctl=Ctl.branch), Node(Op.store, VecType(F32, 1))), LOCAL,
         "runs in every"),
        (base, 20, "partial-subgroup-row-column-major"),
        (base, 33, "local size"),
    ]
    for nodes, local, why in bad:
        with pytest.raises(ValueError, match=why):
            Program(nodes, local)


def test_old_programs_keep_their_json_ids_and_bindings() -> None:
    """No Ctl and a full subgroup: no new JSON key, no control binding, the variant ids the seed
    programs had before divergence (recorded from the code before it)."""
    ids = {"mlp-2-layer": "coopvec_program.layers2.ops4.2e747a81f4",
           "int8-mlp-2-layer": "coopvec_program.layers2.ops6.10b4ac49cf"}
    for name, p in SEEDS.items():
        v = ProgramVariant(p)
        assert v.id == ids[name] and "local" not in v.to_json() and "control" not in dict(p.buffers())
        assert all("ctl" not in n and "alt" not in n for n in p.to_json())
        assert ProgramVariant.from_json(v.to_json()) == v
    partial = ProgramVariant(Program(SEEDS["mlp-2-layer"].nodes[:1] + (
        Node(Op.matmuladd, VecType(F16, 8), Layer(*FP16, MatrixLayout.InferencingOptimal, False, 8, 16)),
        Node(Op.store, VecType(F16, 8))), 8))
    assert partial.to_json()["local"] == 8 and ProgramVariant.from_json(partial.to_json()) == partial
    assert partial.program.digest != Program(partial.program.nodes).digest  # the local size names it


def test_an_old_case_keeps_its_name_and_data() -> None:
    """A case of a program without control flow: the name and the bytes of every initial and
    expected buffer recorded from the code before divergence (main at 6246189)."""
    c = ProgramCase(ProgramVariant(SEEDS["mlp-2-layer"]), (None, LayerParams(0, 32, 0), Scalars(0, 0),
                                                           LayerParams(64, 0, 64), Scalars(-1, 2), None), 7)
    d = c.data()
    h = hashlib.sha256()
    for b in list(d.initial) + [e for e in d.expected if e is not None]:
        h.update(b.tobytes())
    assert (c.name(), h.hexdigest()[:16]) == ("coopvec_program.layers2.ops4.2e747a81f4.case_7ae21ed20c",
                                              "257a44344923e5ab")


@functools.cache
def _construct_cases(construct: str) -> list[ProgramCase]:
    return draw_examples(FAMILY.cases(StrategyOptions(), construct=construct), 12, 7)


def _holds(construct: str, p: Program) -> bool:
    if construct == "partial":
        return p.partial
    ctl = Ctl.branch if construct == "branch" else Ctl.loop
    return any(p.nodes[i].ctl is ctl for i in p.ctl_nodes)


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_each_construct_compiles_validates_and_passes_on_the_reference(construct: str) -> None:
    """The strata that force a construct hold it; their shaders compile and validate (glslang,
    spirv-val), with the words baked too; the reference backend passes them; the control words
    differ between the invocations of one subgroup (the control flow diverges)."""
    backend = ReferenceBackend()
    for c in _construct_cases(construct)[:6]:
        v, p = c.variant(), c.variant().program
        assert _holds(construct, p), p.lines()
        validate_spirv(compile_glsl(v.glsl(), v.id))
        assert check_case(backend, c).status.value == "Pass", p.lines()
        if p.ctl_nodes and p.local > 1:
            control = c.data().initial[p.buffer_index("control")].reshape(p.local, -1)
            assert (control.min(axis=0) < control.max(axis=0)).any() and control.max() <= MAX_TRIPS
    c = _construct_cases(construct)[0]
    validate_spirv(compile_glsl(c.variant().glsl(baked=[0] * len(c.variant().buffers()) + list(c.data().params)),
                                c.variant().id))


def test_loops_stay_in_the_exact_domain_through_their_most_trips() -> None:
    """Every value of a looped float MatMulAdd's trips is within its limit: the bound after each of
    MAX_TRIPS repetitions (data.trip_bounds), from the operand's largest magnitudes."""
    sq = Layer(*FP16, MatrixLayout.RowMajor, False, 16, 16)
    e4m3 = Layer(F16, T.floate4m3, T.floate4m3, F16, F16, MatrixLayout.InferencingOptimal, False, 16, 16)
    looped = [Program((Node(Op.load, sq.input), Node(Op.matmuladd, sq.result, L, ctl=Ctl.loop),
                       Node(Op.act, sq.result, fn=ElementOp.fadd, ctl=Ctl.loop), Node(Op.store, sq.result)))
              for L in (sq, e4m3)]
    seen = 0
    for c in _construct_cases("loop") + [c for p in looped for c in draw_examples(
            FAMILY.cases_for(ProgramVariant(p), StrategyOptions()), 10, 9)]:
        p, d = c.variant().program, c.data()
        run = program_oracle.Run(p, d.params, [b.copy() for b in d.initial], np.zeros(len(d.initial), np.int64))
        values = program_oracle.evaluate(run)
        limits = p.limits(c.scalars())
        for i in p.ctl_nodes:
            n = p.nodes[i]
            if n.type.component.is_float:
                assert np.abs(values[i].astype(np.float64)).max() <= limits[i]
            if n.ctl is Ctl.loop and n.op is Op.matmuladd and n.layer.resultType.is_float:
                L = n.layer
                w, b = program_oracle.layer_operands(run, i)
                x = matmul_oracle.convert_input(values[i - 1], L.inputType, L.inputInterpretation)
                X = np.abs(x.astype(np.float64)).max(axis=0)
                assert (trip_bounds(w, b, X, MAX_TRIPS) <= limits[i]).all()
                seen += 1
    assert seen >= 20


def test_a_default_pack_holds_each_construct_in_a_twentieth_of_its_cases() -> None:
    """On the embedded H100 profile (the reference backend runs coopvec) the forced strata put
    each construct in at least 5% of a pack's cases; the coverage table counts them."""
    cases = draw_cases(get_family("coopvec-program"), 60, 0, StrategyOptions())
    table = tables([c.to_json() for c in cases])[-1]
    for construct in ("if", "loop", "partial"):
        held = sum(v for (row, col), v in table.counts.items() if construct in row.split("+") or col == construct)
        assert held >= 0.05 * len(cases), (construct, table.counts)
    assert sum(table.counts.values()) == len(cases)


@pytest.mark.slow
def test_shrinking_leads_to_todays_straight_chain() -> None:
    """A fault a straight chain shows shrinks to a chain with no control flow in a full subgroup;
    a fault only a loop shows shrinks to one layer holding the loop."""
    c = find(CASES, lambda c: bool(c.variant().program.layers()) and len(c.variant().program.layers()) >= 2,
             settings=FIND)
    p = c.variant().program
    assert not p.ctl_nodes and not p.partial
    c = find(CASES, lambda c: any(c.variant().program.nodes[i].ctl is Ctl.loop for i in c.variant().program.ctl_nodes),
             settings=FIND)
    p = c.variant().program
    assert len(p.layers()) == 1 and len(p.ctl_nodes) == 1 and not p.partial, p.lines()


@pytest.mark.parametrize("name,construct", [("cvprogram-branch-mask-ignored", "branch"),
                                            ("cvprogram-loop-max-trips", "loop"),
                                            ("cvprogram-partial-store-past-workgroup", "partial")])
def test_each_new_mutant_is_killed_by_its_construct_and_spares_straight_chains(name: str, construct: str) -> None:
    def killed(c: ProgramCase) -> bool:
        d = c.data()
        bufs = [b.copy() for b in d.initial]
        with catalogue()[name].applied(), np.errstate(all="ignore"):
            c.variant().execute(d.params[None, :], np.zeros((1, len(bufs)), np.int64), bufs)
        return any(e is not None and not np.array_equal(e, b, equal_nan=True) for e, b in zip(d.expected, bufs))

    assert any(killed(c) for c in _construct_cases(construct))
    straight = [c for c in draw_examples(CASES, 30, 2) if not c.variant().program.ctl_nodes
                and not c.variant().program.partial]
    assert straight and not any(killed(c) for c in straight)


def test_program_variants_refuse_an_unknown_construct() -> None:
    with pytest.raises(ValueError, match="unknown construct"):
        find(program_variants(construct="while"), lambda v: True, settings=FIND)
