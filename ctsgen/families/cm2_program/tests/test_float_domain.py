"""cm2-program's float domain: the propagated bounds against exact rational arithmetic, the
reference backend, composition mutants and a planted numeric slip, the debug re-run."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import ContextManager
from unittest import mock
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_program import FAMILY
from ctsgen.families.cm2_program import oracle as program_oracle
from ctsgen.families.cm2_program.bounds import node_bounds
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant, layout_variant
from ctsgen.families.cm2_program.debug import intermediates
from ctsgen.families.cm2_program.program import A16, ACC16, ACC32, B16, SIDE, SINKS, W_C0, W_R0, Node, Op, Program
from ctsgen.families.cm2_program.strategy import SEEDS, STEP, STORE, build, program_cases_for
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, reduction_domains
from tests.rounding_device import RoundingDevice
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.model.tensor import ClampMode
from ctsgen.mutants.catalogue import catalogue
from ctsgen.runner.debug_run import first_difference
from ctsgen.execute.judge import judge_buffer
from ctsgen.strategies.sampling import draw_examples
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv


U = ClampMode.Undefined


def _float(c: ProgramCase) -> ProgramCase:
    return dataclasses.replace(c, domain="float")


# -- exact rational simulation of a device ------------------------------------------------
class Device(RoundingDevice):
    """One device execution in exact rationals; each rounding picks among the results allowed,
    always the largest ("up"), the smallest ("down") or at random (coopvec-program's device:
    ``round`` correctly rounded, either neighbour or 0 for a subnormal; ``nearest`` to nearest,
    ties and flushes either way). Element-wise operations and conversions are correctly
    rounded; affine is OpFMul then two OpFAdd, or fused; a MulAdd follows the cm2-gemm model
    (products exact or rounded to nearest in a float16 accumulator, partial sums to nearest, a
    random order with C at a random place); a sum reduction the cm2-reduce model (partial sums
    to nearest, any order)."""

    def sum(self, terms: list[Fraction], dt: np.dtype) -> Fraction:
        order = list(terms)
        self.rng.shuffle(order)
        acc = order[0]
        for t in order[1:]:
            acc = self.nearest(acc + t, dt)
        return acc

    def muladd(self, a: list[list[Fraction]], b: list[list[Fraction]], c: list[list[Fraction]],
               dt: np.dtype) -> list[list[Fraction]]:
        round_products = dt == np.float16 and self.rng.random() < 0.5
        out = []
        for i in range(SIDE):
            row = []
            for j in range(SIDE):
                ps = [a[i][k] * b[k][j] for k in range(SIDE)]
                if round_products:
                    ps = [self.nearest(p, dt) for p in ps]
                row.append(self.sum(ps + [c[i][j]], dt))
            out.append(row)
        return out

    def run(self, run: program_oracle.Run) -> list[list[list[Fraction]] | None]:
        """Every node's device value (a store's: None), each computed from the device's operands."""
        p, vals = run.program, []
        for i, n in enumerate(p.nodes):
            dt = n.type.component.dtype
            x = [vals[a] for a in n.args]
            each = [(r, c) for r in range(SIDE) for c in range(SIDE)]
            grid = [[Fraction(0)] * SIDE for _ in range(SIDE)]
            if n.op in SINKS:
                vals.append(None)
                continue
            if n.op in (Op.load, Op.loadview, Op.loaddecode, Op.loaddecodeview, Op.const, Op.generate):
                grid = [[Fraction(float(v)) for v in row] for row in run.values[i]]
            elif n.op is Op.transpose:
                grid = [[x[0][c][r] for c in range(SIDE)] for r in range(SIDE)]
            elif n.op is Op.convert:
                grid = [[self.round(v, dt) for v in row] for row in x[0]]
            elif n.op is Op.muladd:
                grid = self.muladd(x[0], x[1], x[2], dt)
            elif n.op is Op.reduce:
                grid = self.reduce(n, x[0], dt)
            else:
                s = Fraction(float(run.scalar(i))) if n.op in (Op.scale, Op.perelement) else None
                for r, c in each:
                    grid[r][c] = self.element(run, i, n, [v[r][c] for v in x], s, r, c, dt)
            vals.append(grid)
        return vals

    def element(self, run: program_oracle.Run, i: int, n: Node, x: list[Fraction], s: Fraction | None,
                r: int, c: int, dt: np.dtype) -> Fraction:
        if n.op is Op.add:
            return self.round(x[0] + x[1], dt)
        if n.op is Op.sub:
            return self.round(x[0] - x[1], dt)
        if n.op is Op.mul:
            return self.round(x[0] * x[1], dt)
        if n.op is Op.scale:
            return self.round(x[0] * s, dt)
        if n.fn == "select":
            return s if r == run.word(i, W_R0) or c == run.word(i, W_C0) else x[0]
        g = Fraction(r * SIDE + c)
        if self.rng.random() < 0.5:  # fused: fma(x, s, m), then + g
            return self.round(self.round(x[0] * s + x[1], dt) + g, dt)
        return self.round(self.round(self.round(x[0] * s, dt) + x[1], dt) + g, dt)

    def reduce(self, n: Node, x: list[list[Fraction]], dt: np.dtype) -> list[list[Fraction]]:
        idx = reduction_domains(np.arange(SIDE * SIDE).reshape(SIDE, SIDE), n.mode)
        flat = [v for row in x for v in row]
        red = {}
        for a in range(idx.shape[0]):
            for b in range(idx.shape[1]):
                terms = [flat[k] for k in idx[a, b]]
                red[a, b] = (max(terms) if n.combine is Combine.max else min(terms)
                             if n.combine is Combine.min else self.sum(terms, dt))
        return [[red[min(r, idx.shape[0] - 1), min(c, idx.shape[1] - 1)] for c in range(SIDE)] for r in range(SIDE)]


def _plain(n: Node) -> Node:
    """A source as a load, a sink as a store, through a whole 16 x 16 layout (every element a drawn
    value: no clamp, clip or decode that would hand the arithmetic constants)."""
    if n.op in SINKS:
        return Node(Op.store, n.type, n.args, U, 2)
    return Node(Op.load, n.type, (), U, 2) if not n.args else n


@st.composite
def small_float_cases(draw: st.DrawFn) -> ProgramCase:
    """Float cases of short programs (1-6 steps, 1-2 stores) whose arithmetic reads full-significand
    data: every source a whole-matrix load (the exact domain's bounds are a source's, so the
    program stays valid)."""
    p = build(draw(st.lists(STEP, min_size=1, max_size=6)), draw(st.lists(STORE, min_size=1, max_size=2)))
    p = Program(tuple(_plain(n) for n in p.nodes))
    c = draw(program_cases_for(ProgramVariant(p)))
    whole = {i: TensorLayoutCase(layout_variant(n), (SIDE, SIDE)) for i, n in enumerate(p.nodes)
             if n.op in (Op.load, Op.store)}
    return _float(dataclasses.replace(c, nodes=tuple(whole.get(i, q) for i, q in enumerate(c.nodes))))


def _worst(c: ProgramCase, modes: tuple[str, ...], seed: int) -> tuple[float, str]:
    """The largest |device - oracle| / bound over every node and element, and where."""
    run = c.evaluated()
    bounds = node_bounds(run)
    worst, where = 0.0, ""
    for mode in modes:
        dev = Device(mode, seed).run(run)
        for i, (d, e) in enumerate(zip(dev, bounds)):
            if e is None:
                continue
            for r in range(SIDE):
                for col in range(SIDE):
                    gap = abs(d[r][col] - Fraction(float(run.values[i][r, col])))
                    if gap == 0:
                        continue
                    ratio = float(gap / Fraction(float(e[r, col]))) if e[r, col] > 0 else float("inf")
                    if ratio > worst:
                        worst, where = ratio, f"{mode} {c.shader.program.lines()[i]} ({r}, {col})"
    return worst, where


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(small_float_cases(), st.integers(0, 2**32 - 1))
def test_propagated_bounds_hold_for_every_rounding_in_exact_arithmetic(c: ProgramCase, seed: int) -> None:
    """Every node's device value, simulated in exact rationals with every rounding up, down or at
    random within the rules, lies within the node's bound of the oracle's value."""
    worst, where = _worst(c, ("up", "down", "random"), seed)
    assert worst <= 1, (worst, where)


def _one(nodes: list[Node], seed: int = 3) -> ProgramCase:
    """A float case of the program ``nodes`` whose loads and stores cover whole 16 x 16 matrices."""
    p = Program(tuple(nodes))
    c = draw_examples(program_cases_for(ProgramVariant(p)), 1, seed)[0]
    whole = {i: TensorLayoutCase(layout_variant(n), (SIDE, SIDE)) for i, n in enumerate(nodes)
             if n.op in (Op.load, Op.store)}
    return _float(dataclasses.replace(c, nodes=tuple(whole.get(i, q) for i, q in enumerate(c.nodes))))


LOADS = [Node(Op.load, A16, (), U, 2), Node(Op.load, B16, (), U, 2), Node(Op.load, ACC32, (), U, 2),
         Node(Op.load, ACC16, (), U, 2)]
#: A x B + C (float32), squared element-wise: a MulAdd's bound carried through a product
CHAIN = [*LOADS[:3], Node(Op.muladd, ACC32, (0, 1, 2)), Node(Op.mul, ACC32, (3, 3)), Node(Op.store, ACC32, (4,), U, 2)]
#: chains through every MulAdd accumulator and every sum reduction (the drawn programs reach them rarely)
CHAINS = {
    "muladd16-rowsum": [*LOADS, Node(Op.muladd, ACC16, (0, 1, 3)),
                        Node(Op.reduce, ACC16, (4,), mode=ReduceMode.Row, combine=Combine.sum),
                        Node(Op.store, ACC16, (5,), U, 2)],
    "muladd16-colsum-transpose-muladd32": [
        *LOADS, Node(Op.muladd, ACC16, (0, 1, 3)),
        Node(Op.reduce, ACC16, (4,), mode=ReduceMode.Column, combine=Combine.sum), Node(Op.transpose, B16, (5,)),
        Node(Op.muladd, ACC32, (0, 6, 2)), Node(Op.store, ACC32, (7,), U, 2)],
    "muladd32-narrow-muladd32-totalsum": [
        *LOADS[:3], Node(Op.muladd, ACC32, (0, 1, 2)), Node(Op.convert, A16, (3,)),
        Node(Op.muladd, ACC32, (4, 1, 3)),
        Node(Op.reduce, ACC32, (5,), mode=ReduceMode.RowColumn, combine=Combine.sum),
        Node(Op.store, ACC32, (6,), U, 2), Node(Op.store, ACC32, (5,), U, 2)],
    # a sum of loaded data: no inherited error, so the sum's own bound is what holds it (dropping it fails)
    "loads-totalsum16": [LOADS[3], Node(Op.reduce, ACC16, (0,), mode=ReduceMode.RowColumn, combine=Combine.sum),
                         Node(Op.store, ACC16, (1,), U, 2)],
    "muladd32-rowmax-sub": [*LOADS[:3], Node(Op.muladd, ACC32, (0, 1, 2)),
                            Node(Op.reduce, ACC32, (3,), mode=ReduceMode.Row, combine=Combine.max),
                            Node(Op.sub, ACC32, (3, 4)), Node(Op.store, ACC32, (5,), U, 2)],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHAINS))
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(seed=st.integers(0, 2**16))
def test_muladd_and_sum_chains_hold_in_exact_arithmetic(name: str, seed: int) -> None:
    worst, where = _worst(_one(CHAINS[name], seed), ("up", "down", "random"), seed)
    assert worst <= 1, (worst, where)


def test_the_bounds_are_not_vacuous() -> None:
    """A device rounding every step one way reaches a fair part of the bound (at least 1/20)."""
    worst, _ = _worst(_one(CHAIN), ("up", "down"), 0)
    assert 0.05 <= worst <= 1


# -- reference backend, mutants, a planted numeric slip, the debug re-run ------------------------
@functools.cache
def _float_sample() -> list[ProgramCase]:
    return [c for c in draw_examples(FAMILY.cases(StrategyOptions()), 120, 5) if c.domain == "float"]


@pytest.mark.slow
def test_float_cases_are_drawn_judged_by_tolerance_and_round_trip() -> None:
    sample = _float_sample()
    assert len(sample) >= 20
    c = sample[0]
    assert c.compare_rule().rule == "tolerance" and FAMILY.case_from_json(c.to_json()) == c
    assert c.to_json()["domain"] == "float" and "domain" not in dataclasses.replace(c, domain="exact").to_json()
    x = np.concatenate([b.astype(np.float64) for b, (name, _) in zip(c.data().initial, c.shader.program.buffers())
                        if name in ("in_float16", "in_float32")])
    assert np.mean(x != np.round(x)) > 0.5 and np.all(np.abs(x) >= 0.125)  # full-significand, normal in float16


def test_the_reference_backend_passes_float_domain_programs() -> None:
    backend = ReferenceBackend()
    seeds = [_float(draw_examples(program_cases_for(ProgramVariant(p)), 1, 2)[0]) for p in SEEDS.values()]
    for c in _float_sample()[:20] + seeds:
        assert check_case(backend, c).status.value == "Pass", c.shader.program.lines()


def _killed(c: ProgramCase, fault: ContextManager[object]) -> bool:
    """Whether ``c`` fails when the reference semantics run inside ``fault`` (a mutant applied,
    or a function of the oracle module patched)."""
    d = c.data()
    bufs = [b.copy() for b in d.initial]
    with fault, np.errstate(all="ignore"):
        c.variant().execute(d.params[None, :], np.zeros((1, len(bufs)), np.int64), bufs)
    return any(e is not None and judge_buffer(b, e, c.compare_rule().to_json(), t).bad.size
               for b, e, t in zip(bufs, d.expected, d.tolerance))


def test_a_composition_mutant_is_killed_in_the_float_domain() -> None:
    """A chained MulAdd that drops its C: every float case of a two-MulAdd chain fails."""
    mutant = catalogue()["program-muladd-chain-drops-c"]
    two = [*LOADS[:3], Node(Op.muladd, ACC32, (0, 1, 2)), Node(Op.muladd, ACC32, (0, 1, 3)),
           Node(Op.store, ACC32, (4,), U, 2)]
    cases = [_one(two, seed) for seed in range(6)]
    assert all(_killed(c, mutant.applied()) for c in cases)


_ORIGINAL_MULADD = program_oracle.eval_muladd


def _fp16_accumulation(run: program_oracle.Run, i: int) -> np.ndarray:
    """A planted numeric slip: a float32-accumulator MulAdd whose sum is kept in float16."""
    d = _ORIGINAL_MULADD(run, i)
    return d.astype(np.float16).astype(d.dtype) if d.dtype == np.float32 else d


def test_a_planted_numeric_slip_is_killed_and_the_exact_semantics_pass() -> None:
    """A float32 MulAdd that loses its result to float16 precision (about 2^-11 relative, far
    beyond the float32 bound) fails every float case of a MulAdd chain; unpatched, each passes."""
    cases = [_one(CHAIN, seed) for seed in range(6)]
    assert all(_killed(c, mock.patch.object(program_oracle, "eval_muladd", _fp16_accumulation)) for c in cases)
    assert not any(_killed(c, contextlib.nullcontext()) for c in cases)


def test_the_debug_rerun_judges_each_node_within_its_bound() -> None:
    """In the float domain a node that rounds differently, within its bound, is not the first
    differing node; one past its bound is."""
    c = _one(CHAIN)
    probe = intermediates(c, c.data())
    assert probe.tolerance is not None and len(probe.tolerance) == len(probe.expected)
    within = [e.copy() for e in probe.expected]
    within[3] = (within[3].astype(np.float64) + probe.tolerance[3] * 0.5).astype(within[3].dtype)
    assert first_difference(probe.labels, probe.expected, within, tolerance=probe.tolerance) is None
    beyond = [e.copy() for e in probe.expected]
    beyond[3] = (beyond[3].astype(np.float64) + probe.tolerance[3] * 2 + 1e-3).astype(beyond[3].dtype)
    assert first_difference(probe.labels, probe.expected, beyond, tolerance=probe.tolerance).index == 3


def test_sampled_float_programs_compile_and_validate() -> None:
    """A float case runs its program's one shader (the domain is run-time data only)."""
    for v in list({c.shader: None for c in _float_sample()})[:4]:
        validate_spirv(compile_glsl(v.glsl(), v.id))
