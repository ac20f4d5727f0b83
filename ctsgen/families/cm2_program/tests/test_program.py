"""cm2-program: the program model, the composed oracle, strategies, compile + validate, the
reference backend, the named seeds, the composition mutants and shrinking."""

from __future__ import annotations

import dataclasses
import functools
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.families import get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_program import FAMILY, oracle as program_oracle
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant, Scalars, layout_variant
from ctsgen.families.cm2_program.coverage import tables
from ctsgen.families.cm2_program.program import (A16, ACC16, ACC32, B16, EXACT, LAYOUT_WORDS, Node, Op, Program,
                                                 operand_rule, operands_fit)
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, expected_reduce
from ctsgen.families.cm2_program.strategy import MAX_OPS, SEEDS, STEP, STORE, build
from ctsgen.ops import tensor_layout as tensor_layout_ops
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.oracle.values import sentinel_bits
from ctsgen.mutants.catalogue import catalogue
from ctsgen.pack.generate import draw_cases
from ctsgen.execute.judge import judge_buffer
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv

CASES = FAMILY.cases(StrategyOptions())
FIND = settings(max_examples=400, database=None, deadline=None, suppress_health_check=list(HealthCheck))
MUTANTS = sorted(n for n, m in catalogue().items() if m.family == "cm2-program")


def _layout(op: Op, mode: ClampMode, t: MatrixType, dims: tuple[int, ...], offset: tuple[int, ...] | None = None,
            span: tuple[int, ...] | None = None, clampValue: int | None = None) -> TensorLayoutCase:
    return TensorLayoutCase(layout_variant(Node(op, t, (), mode, 2)), dims, offset=offset, span=span,
                            clampValue=clampValue)


def test_the_layout_word_format_is_the_tensor_layout_familys() -> None:
    assert LAYOUT_WORDS == tensor_layout_ops.FAMILY_WORDS


def test_hand_worked_chain() -> None:
    """v0 = load A (all 1 but Constant-clamped: a 16x16 tensor in bounds), v1 = const B = 2,
    v2 = const C = -1, v3 = A x B + C = 16*1*2 - 1 = 31 everywhere, v4 = Row max = 31,
    v5 = v3 - v4 = 0; stores of v3 and v5 through a row-major 16x16 layout."""
    U = ClampMode.Undefined
    p = Program((Node(Op.load, A16, (), ClampMode.Constant, 2), Node(Op.const, B16), Node(Op.const, ACC32),
                 Node(Op.muladd, ACC32, (0, 1, 2)),
                 Node(Op.reduce, ACC32, (3,), mode=ReduceMode.Row, combine=Combine.max),
                 Node(Op.sub, ACC32, (3, 4)), Node(Op.store, ACC32, (3,), U, 2), Node(Op.store, ACC32, (5,), U, 2)))
    c = ProgramCase(ProgramVariant(p), (
        _layout(Op.load, ClampMode.Constant, A16, (16, 16)), Scalars(2), Scalars(-1), None, None, None,
        _layout(Op.store, U, ACC32, (16, 16)), _layout(Op.store, U, ACC32, (16, 16))))
    d = c.data()
    ones = d.initial[0].astype(np.float64)  # the loaded A: the input tensor itself
    expected = ones.reshape(16, 16).sum(axis=1, keepdims=True) * 2 - 1
    out = d.expected[1].reshape(2, 16, 16)
    assert np.array_equal(out[0], np.broadcast_to(expected, (16, 16)))
    assert np.array_equal(out[1], np.broadcast_to(expected - expected.max(axis=1, keepdims=True), (16, 16)))


def test_an_out_of_bounds_constant_load_and_a_discarded_store() -> None:
    """A 4x4 slice at (14, 14) of a 16x16 tensor: a Constant-clamped load returns clampValue (bits of
    float16 -2.0) outside; a Constant-clamped store of it discards what falls outside."""
    cv = int(np.asarray([-2], np.float16).view(np.uint16)[0])
    C = ClampMode.Constant
    p = Program((Node(Op.load, ACC16, (), C, 2), Node(Op.store, ACC16, (0,), C, 2)))
    c = ProgramCase(ProgramVariant(p), (
        _layout(Op.load, ClampMode.Constant, ACC16, (16, 16), (8, 8), (16, 16), cv),
        _layout(Op.store, ClampMode.Constant, ACC16, (20, 20), (8, 8), (16, 16))))
    d = c.data()
    src = d.initial[0].reshape(16, 16)
    loaded = np.full((16, 16), -2.0, np.float16)
    loaded[:8, :8] = src[8:, 8:]
    out = d.expected[1].reshape(20, 20)
    assert np.array_equal(out[8:, 8:12], loaded[:12, :4])
    assert (out[:8].view(np.uint16) == sentinel_bits(ComponentType.float16)).all()  # discarded: still poison


def test_the_sign_of_a_computed_zero_does_not_count_but_a_moved_one_does() -> None:
    """The H100 campaign's ten cm2-program buckets were all -0 against +0: v0 = generate, v1 = v0 - v0
    (+0), v2 = -1 * v1 (-0 in IEEE 754), stored; the device wrote +0. The shader does not declare
    SignedZeroInfNanPreserve, so Vulkan lets it ignore the sign of that zero: it passes, while any
    other wrong bit still fails. A program that only moves data keeps the sign (data-movement-bits)."""
    U = ClampMode.Undefined
    p = Program((Node(Op.generate, A16), Node(Op.sub, A16, (0, 0)), Node(Op.scale, A16, (1,)),
                 Node(Op.store, A16, (2,), U, 2)))
    c = ProgramCase(ProgramVariant(p), (Scalars(1, 0, 0), None, Scalars(-1), _layout(Op.store, U, A16, (256, 1))))
    d = c.data()
    want = d.expected[-1]
    assert (want.view(np.uint16) == 0x8000).all()  # the oracle's IEEE -0 everywhere
    rule = c.compare_rule().to_json()
    assert judge_buffer(np.zeros_like(want), want, rule).bad.size == 0
    wrong = np.zeros_like(want)
    wrong[3] = np.float16(2 ** -24)  # the smallest subnormal is not a zero
    assert judge_buffer(wrong, want, rule).bad.tolist() == [3]
    moved = Program((Node(Op.load, ACC16, (), U, 2), Node(Op.store, ACC16, (0,), U, 2)))
    mc = ProgramCase(ProgramVariant(moved), (_layout(Op.load, U, ACC16, (16, 16)), _layout(Op.store, U, ACC16, (16, 16))))
    assert mc.compare_rule().to_json() == {"rule": "bitwise"}


@settings(max_examples=60, deadline=None)
@given(st.lists(STEP, min_size=2, max_size=12), st.lists(STORE, min_size=1, max_size=3))
def test_any_draw_builds_a_valid_program(steps: list[tuple[int, int, int]], stores: list[tuple[int, int]]) -> None:
    """Valid by construction: every list of raw steps builds (Program checks types, order and
    exact-domain bounds), with 2-12 operations and 1-3 stores."""
    p = build(steps, stores)
    assert 2 <= p.ops <= MAX_OPS and 1 <= len(p.nodes) - p.ops <= 3
    assert all(b <= EXACT[n.type.component] for n, b in zip(p.nodes, p.bounds()))


ACC32_64 = dataclasses.replace(ACC32, workgroup_size=64)


@pytest.mark.parametrize("op, fn, result, operands, fits", [
    (Op.muladd, "", ACC32, (A16, B16, ACC32), True),
    (Op.muladd, "", ACC16, (A16, B16, ACC32), False),     # C and the result differ
    (Op.muladd, "", ACC32, (B16, A16, ACC32), False),     # A and B swapped
    (Op.convert, "", A16, (ACC32,), True),
    (Op.convert, "", ACC32, (ACC32,), False),            # a conversion changes the type
    (Op.convert, "", B16, (A16,), False),                # from an accumulator only
    (Op.transpose, "", B16, (ACC16,), True),
    (Op.transpose, "", B16, (ACC32,), False),
    (Op.transpose, "", A16, (ACC16,), False),             # to B only
    (Op.reduce, "", ACC32, (ACC32,), True),
    (Op.reduce, "", A16, (A16,), False),                 # an accumulator only
    (Op.perelement, "affine", ACC16, (ACC16, ACC16), True),
    (Op.perelement, "select", ACC16, (ACC16, ACC16), False),  # select takes one operand
    (Op.add, "", ACC32, (ACC32, ACC32), True),
    (Op.mul, "", ACC32, (ACC32, ACC16), False),
    (Op.store, "", ACC16, (ACC16,), True),
    (Op.load, "", A16, (), True),
    (Op.load, "", A16, (A16,), False),                   # a source reads nothing
    (Op.add, "", ACC32_64, (ACC32_64, ACC32_64), True),  # one workgroup size, not the written one
])
def test_operands_fit_and_operand_rule_agree_with_the_type_rules(op: Op, fn: str, result: MatrixType,
                                                                 operands: tuple[MatrixType, ...],
                                                                 fits: bool) -> None:
    """A drawn program checks its candidates with operands_fit (a bool), Program its nodes with
    operand_rule (the reason): each admits a node exactly where its kind's type rule holds."""
    node = Node(op, result, fn=fn)
    assert operands_fit(node, list(operands)) is fits
    why = operand_rule(node, list(operands))
    assert (why is None) is fits
    if not fits:
        assert why.startswith(f"{op.value} cannot take [")


def test_operands_of_another_workgroup_size_are_refused_with_that_reason() -> None:
    node = Node(Op.add, ACC32, fn="")
    assert operands_fit(node, [ACC32, ACC32_64]) is False
    assert operand_rule(node, [ACC32, ACC32_64]) == "add mixes workgroup sizes"


@settings(max_examples=40, deadline=None)
@given(CASES)
def test_cases_round_trip_and_stay_exact(c: ProgramCase) -> None:
    """Every value stays within the exact domain's magnitude bound, and is an integer unless the
    case takes float data (whose inputs have the same magnitudes)."""
    assert FAMILY.case_from_json(c.to_json()) == c
    for v, n, b in zip(c.values(), c.variant().program.nodes, c.variant().program.bounds()):
        if v is not None:
            assert np.all(np.abs(v.astype(np.float64)) <= b), n
            assert c.domain == "float" or np.array_equal(v, np.round(v)), n


@settings(max_examples=25, deadline=None)
@given(FAMILY.variants(StrategyOptions()))
def test_sampled_programs_compile_and_validate(v: ProgramVariant) -> None:
    validate_spirv(compile_glsl(v.glsl(), v.id))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_programs_compile_validate_and_pass(name: str) -> None:
    v = ProgramVariant(SEEDS[name])
    validate_spirv(compile_glsl(v.glsl(), v.id))
    c = find(FAMILY.cases_for(v, StrategyOptions()), lambda c: True, settings=FIND)
    assert check_case(ReferenceBackend(), c).status.value == "Pass"


def test_the_reference_backend_passes_a_default_pack_with_the_seeds_and_their_coverage_line() -> None:
    cases = draw_cases(get_family("cm2-program"), 24, 0, StrategyOptions())
    backend = ReferenceBackend()
    assert all(check_case(backend, c).status.value == "Pass" for c in cases)
    pairs, lengths, objects, seeds, kinds, decodes, domains = tables([c.to_json() for c in cases])
    assert {d for (_, d), k in domains.counts.items() if k} == {"exact", "float"}  # the pack holds both domains
    assert all(seeds.counts[(name, "cases")] >= 1 for name in SEEDS)
    assert pairs.counts[("muladd", "reduce")] >= 1 and lengths.counts[(11, "flash-attention")] >= 1
    assert sum(objects.counts.values()) == len(cases)


def killed(name: str, c: ProgramCase) -> bool:
    """Whether the mutant's reference semantics give another output than the oracle for ``c``."""
    d = c.data()
    bufs = [b.copy() for b in d.initial]
    with catalogue()[name].applied():
        c.variant().execute(d.params[None, :], np.zeros((1, len(bufs)), np.int64), bufs)
    return any(e is not None and not np.array_equal(e.view(np.uint8), b.view(np.uint8))
               for e, b in zip(d.expected, bufs))


SINGLE_OPERATION = ("tensor-layout", "tensor-view", "decode", "cm2-gemm", "cm2-reduce", "cm2-convert",
                    "cm2-elementwise")


@functools.cache
def _single_operation_case(family: str) -> object:
    return find(get_family(family).cases(StrategyOptions()), lambda c: True, settings=FIND)


def test_the_catalogue_has_eight_composition_mutants() -> None:
    assert len(MUTANTS) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("name", MUTANTS)
def test_single_operation_families_cannot_see_the_mutant(name: str) -> None:
    """By construction: the mutant only replaces names of the program interpreter, which no
    single-operation family's reference semantics reach; their cases still pass under it."""
    targets = catalogue()[name].factory()
    assert all(t.startswith("ctsgen.families.cm2_program.oracle:") for t in targets)
    backend = ReferenceBackend()
    for fam in SINGLE_OPERATION:
        c = _single_operation_case(fam)
        with catalogue()[name].applied():
            assert check_case(backend, c).status.value == "Pass", (name, fam)


@pytest.mark.slow
def test_shrinking_a_planted_mutant_reaches_a_short_program() -> None:
    """A store after a per-element op writes the pre-op value: the shortest program
    that shows it is a source, the per-element op and its store."""
    name = "program-store-after-perelement-writes-source"
    c = find(CASES, lambda c: killed(name, c), settings=FIND)
    assert c.variant().program.ops <= 3, c.describe()["program"]


def test_the_lavapipe_reduce_mutant_reaches_the_reduce_nodes() -> None:
    """lavapipe-reduce-tiles (a cm2-reduce mutant) patches this family's reduce nodes too: a Row
    sum of a 16x16 matrix keeps result rows 0-7 and gives rows 8-15 the row sums of the second
    8x8 tile, numbered row-major (rows 0-7, columns 8-15), alone (docs/validation.md, "lavapipe:
    Row and Column reductions")."""
    s32 = ComponentType.sint32
    m = np.random.default_rng(1616).integers(-1000, 1000, size=(16, 16)).astype(np.int32)
    spec = expected_reduce(m, ReduceMode.Row, Combine.sum, s32, 16, 16)[0]
    tile = expected_reduce(m[:8, 8:], ReduceMode.Row, Combine.sum, s32, 8, 16)[0]
    # one Row-sum node over m: what eval_reduce reads of a program run
    node = SimpleNamespace(mode=ReduceMode.Row, combine=Combine.sum, type=SimpleNamespace(component=s32, rows=16,
                                                                                          cols=16))
    run = SimpleNamespace(program=SimpleNamespace(nodes=[node]), arg=lambda i, k: m)
    with catalogue()["lavapipe-reduce-tiles"].applied():
        got = program_oracle.eval_reduce(run, 0)
    assert np.array_equal(program_oracle.eval_reduce(run, 0), spec)
    assert np.array_equal(got[:8], spec[:8]) and np.array_equal(got[8:], tile)
    assert not np.array_equal(got, spec)
