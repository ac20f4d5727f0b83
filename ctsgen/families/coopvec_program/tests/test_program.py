"""coopvec-program: the chain model, the composed oracle against hand-worked chains, the exact
domain, strategies, compile + validate, the reference backend, the named seeds, the composition
mutants (and that the single-operation coopvec families cannot see them) and shrinking."""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from contextlib import ExitStack

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.mutants.deviations import expected_under
from ctsgen.runner.options import RunOptions
from ctsgen.families import get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.ops.coopvec_matrix import combinations
from ctsgen.ops.coopvec_matrix import MatrixLayout
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.families.coopvec_program import FAMILY
from ctsgen.families.coopvec_program import oracle as program_oracle
from ctsgen.families.coopvec_program.case import LayerParams, ProgramCase, ProgramVariant, Scalars
from ctsgen.families.coopvec_program.coverage import tables
from ctsgen.families.coopvec_program.data import place_matrix
from ctsgen.families.coopvec_program.program import (F16, INTERP_LIMIT, LOCAL, MAX_LAYERS, S8, S32, Ctl, Layer,
                                                     Node, Op, Program, VecType)
from ctsgen.families.coopvec_program.strategy import LAYER, SEEDS, build
from ctsgen.device.profile import default_profile
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.mutants.catalogue import catalogue
from ctsgen.pack.generate import draw_cases
from ctsgen.strategies.sampling import draw_examples
from ctsgen.execute.judge import judge_buffer
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv
from ctsgen.ops import coopvec as matmul_oracle

CASES = FAMILY.cases(StrategyOptions())
FIND = settings(max_examples=400, database=None, deadline=None, suppress_health_check=list(HealthCheck))
MUTANTS = sorted(n for n, m in catalogue().items() if m.family == "coopvec-program")
FP16 = (F16, F16, F16, F16, F16)
INT8 = (S8, S8, S8, S32, S32)


def _run(p: Program, words: list[int], buffers: list[np.ndarray]) -> list[np.ndarray]:
    """The reference semantics of one case on hand-built buffers (element offsets 0)."""
    out = [b.copy() for b in buffers]
    ProgramVariant(p).execute(np.asarray([words], np.uint32), np.zeros((1, len(out)), np.int64), out)
    return out


def _row_major(rows: list[list[int]], dtype: str, stride: int) -> np.ndarray:
    """A RowMajor matrix written byte by byte at MatrixOffset 0, ``stride`` bytes per row."""
    raw = np.asarray(rows, dtype=dtype)
    buf = np.zeros(stride * raw.shape[0], np.uint8)
    for r in range(raw.shape[0]):
        line = raw[r].view(np.uint8)
        buf[r * stride:r * stride + line.size] = line
    return buf


def test_hand_worked_float_chain() -> None:
    """x = (1, -2); W1 = [[1, 1], [2, 0]], b1 = (0, 1): W1 x + b1 = (-1, 3); max(., 0) = (0, 3);
    W2 = [[2, -1]], b2 = 5: 0 * 2 + 3 * -1 + 5 = 2, in every invocation; the padding after the
    one-component result keeps its poison."""
    L1 = Layer(*FP16, MatrixLayout.RowMajor, False, 2, 2)
    L2 = Layer(*FP16, MatrixLayout.RowMajor, False, 1, 2)
    p = Program((Node(Op.load, L1.input), Node(Op.matmuladd, L1.result, L1),
                 Node(Op.act, L1.result, fn=ElementOp.fmax), Node(Op.matmuladd, L2.result, L2),
                 Node(Op.store, L2.result)))
    assert p.buffers() == [("input", "float16"), ("bias", "uint8"), ("output", "float16"),
                           ("matrix0", "uint8"), ("matrix1", "uint8")]
    inp = np.zeros((LOCAL, 8), np.float16)  # one 16-byte row per invocation
    inp[:, :2] = (1, -2)
    bias = np.zeros(48, np.uint8)
    bias[0:4] = np.asarray([0, 1], np.float16).view(np.uint8)
    bias[32:34] = np.asarray([5], np.float16).view(np.uint8)  # layer 2's BiasOffset: 32
    out0 = np.full(LOCAL * 8, np.nan, np.float16)
    m1, m2 = _row_major([[1, 1], [2, 0]], "float16", 16), _row_major([[2, -1]], "float16", 16)
    words = [0, 16, 0,  0, 0,  0, 16, 32]  # MatMulAdd 1; max's s = 0, t = 0; MatMulAdd 2
    out = _run(p, words, [inp.ravel(), bias, out0, m1, m2])[2].reshape(LOCAL, 8)
    assert (out[:, 0] == 2).all() and np.isnan(out[:, 1:].astype(np.float32)).all()


def test_hand_worked_integer_chain_wraps_between_layers() -> None:
    """x = (10, 20) int8; W1 = [[10, 5]], b1 = 100: 300 as int32; converted to int8 it wraps to
    44 (OpSConvert keeps the low bits); W2 = [[2]], b2 = 0: 88. The conversion-folded mutant
    saturates 300 to 127 instead (the MatMulAdd's own input conversion) and gives 254."""
    L1 = Layer(*INT8, MatrixLayout.RowMajor, False, 1, 2)
    L2 = Layer(*INT8, MatrixLayout.ColumnMajor, False, 1, 1)
    p = Program((Node(Op.load, L1.input), Node(Op.matmuladd, L1.result, L1), Node(Op.convert, VecType(S8, 1)),
                 Node(Op.matmuladd, L2.result, L2), Node(Op.store, L2.result)))
    inp = np.zeros((LOCAL, 16), np.int8)
    inp[:, :2] = (10, 20)
    bias = np.zeros(32, np.uint8)
    bias[0:4] = np.asarray([100], np.int32).view(np.uint8)
    words = [0, 16, 0, 0, 16, 16]
    bufs = [inp.ravel(), bias, np.zeros(LOCAL * 4, np.int32), _row_major([[10, 5]], "int8", 16),
            _row_major([[2]], "int8", 16)]
    assert (_run(p, words, bufs)[2].reshape(LOCAL, 4)[:, 0] == 88).all()
    with catalogue()["cvprogram-conversion-folded"].applied():
        assert (_run(p, words, bufs)[2].reshape(LOCAL, 4)[:, 0] == 254).all()


def test_hand_worked_training_step() -> None:
    """x = 1 (K 1) in all 32 invocations, W = 2, b = 1: y = 3. dW starts at -1 and gains
    y h = 3 per invocation: -1 + 96 = 95; db starts at 2: 2 + 96 = 98. The training step needs
    a float16 last layer with a float16 input, its result stored unconverted."""
    L = Layer(*FP16, MatrixLayout.RowMajor, False, 1, 1)
    p = Program((Node(Op.load, L.input), Node(Op.matmuladd, L.result, L), Node(Op.store, L.result),
                 Node(Op.outer, L.result), Node(Op.reducesum, L.result)))
    assert p.training and [b for b, _ in p.buffers()][-3:] == ["grad_matrix", "grad_optimal", "grad_bias"]
    inp = np.zeros((LOCAL, 8), np.float16)
    inp[:, 0] = 1
    bias = np.asarray([1] + [0] * 7, np.float16).view(np.uint8)
    out = _run(p, [0, 16, 0], [inp.ravel(), bias, np.zeros(LOCAL * 8, np.float16), _row_major([[2]], "float16", 16),
                               np.asarray([-1], np.float16), np.zeros(0, np.uint8), np.asarray([2], np.float16)])
    assert (out[2].reshape(LOCAL, 8)[:, 0] == 3).all() and out[4][0] == 95 and out[6][0] == 98
    with pytest.raises(ValueError, match="training step needs a float16 last layer"):
        Program(p.nodes[:1] + (Node(Op.matmuladd, L.result, L), Node(Op.convert, VecType(S32, 1)),
                               Node(Op.store, VecType(S32, 1)), Node(Op.outer, VecType(S32, 1)),
                               Node(Op.reducesum, VecType(S32, 1))))


@pytest.mark.parametrize("layout,transpose", [(MatrixLayout.RowMajor, False), (MatrixLayout.ColumnMajor, False),
                                              (MatrixLayout.InferencingOptimal, True),
                                              (MatrixLayout.TrainingOptimal, False)])
def test_placed_matrices_read_back_through_the_coopvec_reader(layout: MatrixLayout, transpose: bool) -> None:
    """place_matrix is the inverse of the coopvec family's CoopVecVariant.read_matrix."""
    L = Layer(*FP16, layout, transpose, 5, 3)
    w = np.arange(15, dtype=np.float64).reshape(5, 3) - 7
    moff, stride = (64, 32) if not layout.optimal else (0, 0)
    assert np.array_equal(L.variant().read_matrix(place_matrix(L, w, moff, stride), moff, stride), w)


@pytest.mark.parametrize("interp", sorted(INTERP_LIMIT, key=lambda t: t.name))
def test_interpretation_limits_are_the_exact_integers(interp: object) -> None:
    """Every integer up to the limit survives a conversion to the interpretation; the next does not."""
    lim = INTERP_LIMIT[interp]
    ints = np.arange(-lim, lim + 1, dtype=np.float64)
    assert np.array_equal(ints.astype(interp.dtype).astype(np.float64), ints)
    assert float(np.float64(lim + 1).astype(interp.dtype)) != lim + 1


@settings(max_examples=80, deadline=None)
@given(st.lists(LAYER, min_size=1, max_size=MAX_LAYERS), st.integers(0, 63), st.integers(0, 63))
def test_any_draw_builds_a_valid_chain(layers: list, k_pick: int, final_pick: int) -> None:
    """Valid by construction: every draw builds (Program checks the types); one layer per draw,
    each layer's K the previous M, the combinations the profile's."""
    combos = combinations(default_profile())
    p = build(combos, k_pick, layers, final_pick)
    ls = p.layers()
    assert len(ls) == len(layers)
    assert all(b.K == a.M for a, b in zip(ls, ls[1:]))
    assert all((L.inputType, L.inputInterpretation, L.matrixInterpretation, L.biasInterpretation, L.resultType)
               in {c[:5] for c in combos} for L in ls)


@settings(max_examples=40, deadline=None)
@given(CASES)
def test_cases_round_trip_and_stay_in_the_exact_domain(c: ProgramCase) -> None:
    """Every value is within its limit, an integer in the exact domain; every float MatMulAdd's
    sum |w x| + |b| is within its limit (so every partial sum is exact in any order in the exact
    domain); a case survives JSON. (The float domain: test_float_domain.py.)"""
    assert FAMILY.case_from_json(c.to_json()) == c
    p = c.variant().program
    d = c.data()
    run = program_oracle.Run(p, d.params, [b.copy() for b in d.initial], np.zeros(len(d.initial), np.int64))
    values = program_oracle.evaluate(run)
    for i, (n, v, lim) in enumerate(zip(p.nodes, values, p.limits(c.scalars()))):
        if v is None:
            continue
        a = v.astype(np.float64)
        assert c.domain == "float" or np.array_equal(a, np.round(a)), p.lines()[i]
        if n.type.component.is_float:
            assert np.abs(a).max() <= lim, (p.lines()[i], lim)
        if n.op is Op.matmuladd and n.layer.resultType.is_float and not (p.training and i == p.layer_nodes()[-1]):
            w, b = program_oracle.layer_operands(run, i)
            L = n.layer
            x = matmul_oracle.convert_input(values[i - 1], L.inputType, L.inputInterpretation)
            assert (np.abs(x) @ np.abs(w).T + np.abs(b)).max() <= lim, p.lines()[i]
    if p.training:  # every partial sum of the fp16 atomic adds is an exact integer within 2^11
        y, h = (np.abs(values[k].astype(np.float64)) for k in p.gradient_nodes())
        dw0, db0 = (np.abs(d.initial[p.buffer_index(n)].astype(np.float64)) for n in ("grad_matrix", "grad_bias"))
        assert (dw0.reshape(y.shape[1], h.shape[1]) + y.T @ h).max() <= 2**11 and (db0 + y.sum(0)).max() <= 2**11
        assert all(np.array_equal(e, np.round(e)) for e in d.expected if e is not None)


@settings(max_examples=25, deadline=None)
@given(FAMILY.variants(StrategyOptions()))
def test_sampled_programs_compile_and_validate(v: ProgramVariant) -> None:
    validate_spirv(compile_glsl(v.glsl(), v.id))


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_programs_compile_validate_and_pass(name: str) -> None:
    v = ProgramVariant(SEEDS[name])
    validate_spirv(compile_glsl(v.glsl(), v.id))
    c = find(FAMILY.cases_for(v, StrategyOptions()), lambda c: True, settings=FIND)
    validate_spirv(compile_glsl(v.glsl(baked=[0] * len(v.buffers()) + list(c.data().params)), v.id))
    assert check_case(ReferenceBackend(), c).status.value == "Pass"


def test_the_reference_backend_passes_a_default_pack_with_the_seeds_and_their_coverage_line() -> None:
    cases = draw_cases(get_family("coopvec-program"), 24, 0, StrategyOptions())
    backend = ReferenceBackend()
    assert all(check_case(backend, c).status.value == "Pass" for c in cases)
    counts, steps, pairs, chains, seeds, domains, _, _ = tables([c.to_json() for c in cases])
    assert all(seeds.counts[(name, "cases")] >= 1 for name in SEEDS)
    assert counts.counts[(2, "mlp-2-layer")] >= 1 and all(counts.counts[(n, "drawn")] for n in range(1, 5))
    assert pairs.counts[("matmuladd", "max")] >= 1 and not counts.excluded_but_held()


def _killed(name: str, c: ProgramCase) -> bool:
    """Whether the mutant's reference semantics fail ``c``'s verdict (bit for bit in the exact
    domain, within the propagated bounds in the float domain)."""
    d = c.data()
    bufs = [b.copy() for b in d.initial]
    with catalogue()[name].applied(), np.errstate(all="ignore"):  # a wrong value may overflow later nodes
        c.variant().execute(d.params[None, :], np.zeros((1, len(bufs)), np.int64), bufs)
    rule = c.compare_rule().to_json()
    tol = d.tolerance or [None] * len(bufs)
    return any(e is not None and judge_buffer(b, e, rule, t).bad.size > 0
               for e, b, t in zip(d.expected, bufs, tol))


def test_the_catalogue_has_six_composition_mutants() -> None:
    assert len(MUTANTS) >= 6


@functools.cache
def _sample() -> list[ProgramCase]:
    return draw_examples(CASES, 150, 3)


def _two_layers(p: Program) -> bool:
    return len(p.layers()) >= 2


def _training_after_activation(p: Program) -> bool:
    return p.training and p.nodes[p.store_index - 1].op is Op.act


def _holds(ctl: Ctl) -> object:
    return lambda p: any(p.nodes[i].ctl is ctl for i in p.ctl_nodes)


#: what each mutant needs of a program: its chain, or its control flow, or a partial subgroup
NEEDS = {"cvprogram-gradient-reads-pre-activation": _training_after_activation,
         "cvprogram-branch-mask-ignored": _holds(Ctl.branch), "cvprogram-loop-max-trips": _holds(Ctl.loop),
         "cvprogram-partial-store-past-workgroup": lambda p: p.partial}


@pytest.mark.slow
@pytest.mark.parametrize("name", MUTANTS)
def test_each_mutant_needs_a_chain(name: str) -> None:
    """Drawn cases kill it, and every one that does holds the chain the fault needs: two layers,
    a training step after an activation, an if, a loop, or a partial subgroup."""
    killers = [c for c in _sample() if _killed(name, c)]
    assert killers and all(NEEDS.get(name, _two_layers)(c.variant().program) for c in killers)


SINGLE_OPERATION = ("coopvec", "coopvec-elementwise")


@functools.cache
def _single_operation_case(family: str) -> object:
    return find(get_family(family).cases(StrategyOptions()), lambda c: True, settings=FIND)


@pytest.mark.slow
@pytest.mark.parametrize("name", MUTANTS)
def test_single_operation_families_cannot_see_the_mutant(name: str) -> None:
    """By construction: the mutant only replaces names of the program interpreter, which no
    single-operation family's reference semantics reach; their cases still pass under it."""
    targets = catalogue()[name].factory()
    assert all(t.startswith("ctsgen.families.coopvec_program.oracle:eval_") for t in targets)
    backend = ReferenceBackend()
    for fam in SINGLE_OPERATION:
        with catalogue()[name].applied():
            assert check_case(backend, _single_operation_case(fam)).status.value == "Pass", (name, fam)


@pytest.mark.slow
@pytest.mark.parametrize("family", SINGLE_OPERATION)
def test_single_operation_families_never_reach_the_program_interpreter(family: str) -> None:
    """Every function the composition mutants may replace raises while the fuzzer runs the family
    for 150 examples (the default budget): nothing fails, so no mutant of them can be killed there."""
    def trap(run: object, i: int) -> None:
        raise AssertionError("a single-operation family reached the program interpreter")

    names = sorted({t.split(":")[1] for m in MUTANTS for t in catalogue()[m].factory()})
    names += [n for n in dir(program_oracle) if n.startswith("eval_") and n not in names]
    own = find(CASES, lambda c: True, settings=FIND)
    data = own.data()
    with ExitStack() as stack:
        for n in names:
            stack.enter_context(pytest.MonkeyPatch.context()).setattr(program_oracle, n, trap)
        report = Fuzzer(ReferenceBackend(), FuzzOptions(families=(family,), max_examples=150, database=None,
                                                        shrink_time_s=0.1)).run()
        with pytest.raises(AssertionError, match="reached the program interpreter"):  # the trap is live
            own.variant().execute(data.params[None, :], np.zeros((1, len(data.initial)), np.int64), data.initial)
    assert report.case is None and report.examples >= 150


@pytest.mark.slow
def test_shrinking_a_planted_mutant_reaches_a_short_chain() -> None:
    """A MatMulAdd that reads the previous layer's pre-activation value: the shortest chain that
    shows it is a layer, its activation and the next layer."""
    c = find(CASES, lambda c: _killed("cvprogram-reads-pre-activation", c), settings=FIND)
    p = c.variant().program
    assert len(p.layers()) <= 2 and p.ops <= 3, p.lines()


#: SPV_EXT_replicated_composites: OpCompositeConstructReplicateEXT
OP_COMPOSITE_CONSTRUCT_REPLICATE = 4463


def _opcodes(v: ProgramVariant) -> Counter:
    words = np.frombuffer(compile_glsl(v.glsl(), v.id), np.uint32)
    out, i = Counter(), 5  # after the header
    while i < len(words):
        out[int(words[i]) & 0xFFFF] += 1
        i += int(words[i]) >> 16
    return out


def test_requirements_name_each_combination_and_replicated_composites_for_activations() -> None:
    """Each layer's combination and every vector type are required; an activation's broadcast
    scalar (OpCompositeConstructReplicateEXT in the SPIR-V) needs VK_EXT_shader_replicated_composites;
    the H100 read-out supports both seed programs, and a profile without the extension does not."""
    h100 = default_profile()
    fp16, int8 = ProgramVariant(SEEDS["mlp-2-layer"]), ProgramVariant(SEEDS["int8-mlp-2-layer"])
    assert _opcodes(fp16)[OP_COMPOSITE_CONSTRUCT_REPLICATE] == 4  # s and t of each of its two activations
    assert "VK_EXT_shader_replicated_composites" in fp16.requirements().extensions
    assert "coopvecCombination(3,3,3,5,5,0)" in int8.requirements().features
    assert all(h100.unsupported_reason(v.requirements()) is None for v in (fp16, int8))
    no_act = Program(tuple(n for n in SEEDS["int8-mlp-2-layer"].nodes if n.op is not Op.act))
    assert ProgramVariant(no_act).requirements().extensions == ("VK_NV_cooperative_vector",)
    bare = dataclasses.replace(h100, extensions=h100.extensions - {"VK_EXT_shader_replicated_composites"})
    assert "VK_EXT_shader_replicated_composites" in (bare.unsupported_reason(int8.requirements()) or "")


def test_an_expected_deviation_keeps_the_inputs_and_judges_the_mutant_backend_pass() -> None:
    """A case's weights are drawn through the oracle, so the family declares its expectation on
    given inputs (FamilySpec.expectation): under an expected deviation the inputs stay the spec
    case's, only the expected output changes, and the deviating backend then passes while the
    plain reference fails (docs/spec-decisions.md, "expected-deviation")."""
    name = "cvprogram-reads-pre-activation"

    def drawn_under_the_mutant(c: ProgramCase) -> list[np.ndarray]:
        with catalogue()[name].applied():
            return c.data().initial

    # a case whose data, drawn under the mutant, would differ (a third layer's weights follow the
    # second layer's deviated output): without the hook the deviation would change its inputs
    c = next(c for c in _sample() if _killed(name, c) and any(
        a.shape != b.shape or not np.array_equal(a, b) for a, b in zip(drawn_under_the_mutant(c), c.data().initial)))
    spec = c.data()
    deviated = expected_under(FAMILY, c, spec, (name,))
    assert all(a is b for a, b in zip(deviated.initial, spec.initial))
    k = c.variant().program.buffer_index("output")
    assert not np.array_equal(deviated.expected[k], spec.expected[k])
    backend = MutantBackend(name)
    assert check_case(backend, c).status.value == "Fail"
    assert check_case(backend, c, RunOptions(expect_deviations=(name,))).status.value == "Pass"
    assert check_case(ReferenceBackend(), c, RunOptions(expect_deviations=(name,))).status.value == "Fail"


def test_a_case_rejects_run_time_operands_the_spec_forbids() -> None:
    """MatrixOffset a multiple of 64, BiasOffset of 16, MatrixStride at least a row and a
    multiple of 16 (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10096..10098), scalars
    inside the exact domain."""
    p = SEEDS["mlp-2-layer"]
    v = ProgramVariant(p)
    ok = (None, LayerParams(0, 32, 0), Scalars(0, 0), LayerParams(64, 0, 64), Scalars(-1, 2), None)
    ProgramCase(v, ok)
    for i, bad in ((1, LayerParams(32, 32, 0)), (1, LayerParams(0, 32, 8)), (1, LayerParams(0, 16, 0)),
                   (3, LayerParams(64, 0, 16)), (4, Scalars(2, 1))):
        with pytest.raises(ValueError):
            ProgramCase(v, ok[:i] + (bad,) + ok[i + 1:])
