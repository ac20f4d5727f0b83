"""coopvec-program's float domain: the propagated bounds against exact rational arithmetic, a
hand-worked 2-layer bound, the reference backend, a composition mutant, compile + validate."""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.device.profile import default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.ops.coopvec_matrix import combinations
from ctsgen.ops.coopvec_matrix import MatrixLayout
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.families.coopvec_program import FAMILY
from ctsgen.families.coopvec_program import oracle as program_oracle
from ctsgen.families.coopvec_program.bounds import float_domain_rule, node_bounds
from ctsgen.families.coopvec_program.case import ProgramCase, ProgramVariant
from ctsgen.families.coopvec_program.program import ACT_NAME, F16, LOCAL, Layer, Node, Op, Program
from ctsgen.families.coopvec_program.strategy import SEEDS, build, program_cases_for
from ctsgen.mutants.catalogue import catalogue
from ctsgen.execute.judge import judge_buffer
from ctsgen.strategies.sampling import draw_examples
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv
from tests.rounding_device import RoundingDevice

FP16 = (F16, F16, F16, F16, F16)
#: the float combinations a float program draws from (build(floats=True))
FLOAT_COMBOS = [c for c in combinations(default_profile()) if c[4].is_float and c[1] is c[0] and c[2] is c[0]]


def _float(c: ProgramCase) -> ProgramCase:
    return dataclasses.replace(c, domain="float")


# -- exact rational simulation of a device ------------------------------------------------
class Device(RoundingDevice):
    """One device execution: each rounding picks a result among those allowed: always the
    largest ("up"), the smallest ("down"), or at random. Element-wise operations and conversions
    are correctly rounded (either neighbour, or a flush); a MatMulAdd follows the coopvec
    accumulation model (decision "coopvec-numeric-model"): a random order, blocks of 16 products
    summed at binary32, the partial sum rounded to the Result Type after each block, each rounding
    to nearest (a tie either way, a subnormal possibly flushed), the bias first or added on its
    own; fma fused or not."""

    def matmuladd(self, x: list[Fraction], w: np.ndarray, b: np.ndarray, dtype: np.dtype) -> list[Fraction]:
        out = []
        for m in range(w.shape[0]):
            order = list(range(len(x)))
            if self.mode == "random":
                self.rng.shuffle(order)
            bias_first = self.rng.random() < 0.5
            acc = Fraction(float(b[m])) if bias_first else Fraction(0)
            for s0 in range(0, len(order), 16):
                block = Fraction(0)
                for k in order[s0:s0 + 16]:
                    block = self.nearest(block + Fraction(float(w[m, k])) * x[k], np.dtype(np.float32))
                acc = self.nearest(acc + block, dtype)
            out.append(acc if bias_first else self.nearest(acc + Fraction(float(b[m])), dtype))
        return out

    def act(self, fn: ElementOp, x: list[Fraction], s: Fraction, t: Fraction, dtype: np.dtype) -> list[Fraction]:
        name = ACT_NAME[fn]
        if name == "max":
            return [max(v, s) for v in x]
        if name == "min":
            return [min(v, s) for v in x]
        if name == "clamp":
            return [min(max(v, s), t) for v in x]
        if name == "scale":
            return [self.round(v * s, dtype) for v in x]
        if name == "add":
            return [self.round(v + s, dtype) for v in x]
        fused = self.rng.random() < 0.5
        return [self.round(v * s + t if fused else self.round(v * s, dtype) + t, dtype) for v in x]

    def run(self, run: program_oracle.Run, inv: int) -> list[list[Fraction] | None]:
        """Every node's value for invocation ``inv`` (the store's: None)."""
        p, vals = run.program, []
        for i, n in enumerate(p.nodes[:p.store_index + 1]):
            dt = n.type.component.dtype
            prev = vals[-1] if vals else None
            if n.op is Op.load:
                vals.append([Fraction(float(v)) for v in run.values[0][inv]])
            elif n.op is Op.matmuladd:
                w, b = program_oracle.layer_operands(run, i)
                vals.append(self.matmuladd(prev, w, b, dt))
            elif n.op is Op.act:
                s, t = Fraction(float(run.scalar(i, 0))), Fraction(float(run.scalar(i, 1)))
                vals.append(self.act(n.fn, prev, s, t, dt))
            elif n.op is Op.convert:
                vals.append([self.round(v, dt) for v in prev])
            else:
                vals.append(None)
        return vals


def _evaluated(c: ProgramCase) -> program_oracle.Run:
    d = c.data()
    run = program_oracle.Run(c.shader.program, d.params, [b.copy() for b in d.initial],
                             np.zeros(len(d.initial), np.int64))
    program_oracle.evaluate(run)
    return run


#: small float programs: sizes up to 24 (so K crosses a block of 16), 1-3 layers, float conversion paths
SMALL_LAYER = st.tuples(st.integers(0, 63), st.integers(0, 3), st.integers(0, 1), st.integers(0, 9),
                        st.integers(0, 1), st.lists(st.integers(0, 63), max_size=3))


@st.composite
def small_float_cases(draw: st.DrawFn) -> ProgramCase:
    layers = draw(st.lists(SMALL_LAYER, min_size=1, max_size=3))
    p = build(FLOAT_COMBOS, draw(st.integers(0, 9)), layers, draw(st.integers(0, 3)), floats=True)
    return _float(draw(program_cases_for(ProgramVariant(p))))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(small_float_cases(), st.integers(0, 2**32 - 1))
def test_propagated_bounds_hold_for_every_rounding_in_exact_arithmetic(c: ProgramCase, seed: int) -> None:
    """For each node: every device execution within the rounding rules (worst-case rounding up,
    down, and at random, simulated in exact rationals) lies within the node's bound of the oracle."""
    run = _evaluated(c)
    bounds = node_bounds(run)
    for mode in ("up", "down", "random"):
        for inv in (0, LOCAL - 1):
            dev = Device(mode, seed + inv).run(run, inv)
            for i, (d, e) in enumerate(zip(dev, bounds)):
                if e is None:
                    continue
                for k, v in enumerate(d):
                    gap = abs(v - Fraction(float(run.values[i][inv, k])))
                    assert gap <= Fraction(float(e[inv, k])), (mode, c.shader.program.lines()[i], float(gap), e[inv, k])


def test_bounds_are_tight_enough_that_an_extreme_device_nearly_reaches_them() -> None:
    """Rounding every step up in one direction reaches a fair part of the bound (it is not
    vacuous): at least 1/20 of it somewhere in a one-layer program with K = 24."""
    L = Layer(*FP16, MatrixLayout.RowMajor, False, 8, 24)
    p = Program((Node(Op.load, L.input), Node(Op.matmuladd, L.result, L), Node(Op.store, L.result)))
    c = _float(draw_examples(program_cases_for(ProgramVariant(p)), 1, 5)[0])
    run = _evaluated(c)
    e = node_bounds(run)[1]
    worst = max(float(abs(v - Fraction(float(run.values[1][0, k]))) / Fraction(float(e[0, k])))
                for mode in ("up", "down") for k, v in enumerate(Device(mode, 0).run(run, 0)[1]))
    assert 0.05 <= worst <= 1


# -- a hand-worked 2-layer bound ------------------------------------------------------------
def test_hand_worked_two_layer_bound() -> None:
    """x = (3, 1); layer 1: W1 = [[0.5, 0.25]], b1 = 0.125 -> 1.875 (exact in float16); x * 3
    -> 5.625; layer 2: W2 = [[1]], b2 = 0 -> 5.625. u = 2^-11, layer roundings r = ceil(K/16) + 1 = 2,
    g = gamma_2(u) = 2u / (1 - 2u), smallest normal 2^-14, binary32 blocks gamma_{K+1}(2^-24); a
    MatMulAdd's own part is the coopvec family's matmul_tolerance at S (with u |y|):

    e1 = g S1 + gamma_3(2^-24) S1 (1 + g) + u |y1| + 2 * 2^-14     S1 = 0.5*3 + 0.25*1 + 0.125 = 1.875
       = 1.83284e-3 + 3.36e-7 + 9.15527e-4 + 1.22070e-4 = 2.87078e-3   (oracle's rounding 0: exact)
    e2 = 3 e1 + (2u (5.625 + 3 e1) + 2^-14)                 (x * 3: one correctly rounded product)
       = 8.61233e-3 + 5.56261e-3 = 1.41749e-2
    e3 = 1 * e2 + g S3 + gamma_2(2^-24) S3 (1 + g) + u |y3| + 2 * 2^-14,   S3 = 1 * (5.625 + e2)
       = 1.41749e-2 + 5.51239e-3 + 6.7e-7 + 2.74658e-3 + 1.22070e-4 = 2.25567e-2
    (float64 terms of about 1e-15 aside). The fp16 spacing at 5.625 is 2^-8: 5 spacings off passes,
    6 fail."""
    L1 = Layer(*FP16, MatrixLayout.RowMajor, False, 1, 2)
    L2 = Layer(*FP16, MatrixLayout.RowMajor, False, 1, 1)
    p = Program((Node(Op.load, L1.input), Node(Op.matmuladd, L1.result, L1),
                 Node(Op.act, L1.result, fn=ElementOp.vts), Node(Op.matmuladd, L2.result, L2),
                 Node(Op.store, L2.result)))
    inp = np.zeros((LOCAL, 8), np.float16)
    inp[:, :2] = (3, 1)
    bias = np.zeros(48, np.uint8)
    bias[0:2] = np.asarray([0.125], np.float16).view(np.uint8)
    m1 = np.zeros(16, np.uint8)
    m1[:4] = np.asarray([0.5, 0.25], np.float16).view(np.uint8)
    m2 = np.zeros(16, np.uint8)
    m2[:2] = np.asarray([1.0], np.float16).view(np.uint8)
    three = int(np.asarray(3.0, np.float16).view(np.uint16))
    words = np.asarray([0, 16, 0, three, 0, 0, 16, 32], np.uint32)
    run = program_oracle.Run(p, words, [inp.ravel(), bias, np.zeros(LOCAL * 8, np.float16), m1, m2],
                             np.zeros(5, np.int64))
    program_oracle.evaluate(run)
    e = node_bounds(run)
    u, tiny = 2.0**-11, 2.0**-14
    g = 2 * u / (1 - 2 * u)
    e1 = g * 1.875 + 3 * 2.0**-24 / (1 - 3 * 2.0**-24) * 1.875 * (1 + g) + u * 1.875 + 2 * tiny
    e2 = 3 * e1 + 2 * u * (5.625 + 3 * e1) + tiny
    s3 = 5.625 + e2
    e3 = e2 + g * s3 + 2 * 2.0**-24 / (1 - 2 * 2.0**-24) * s3 * (1 + g) + u * 5.625 + 2 * tiny
    assert float(run.values[3][0, 0]) == 5.625
    for got, want, written in ((e[1], e1, 2.87078e-3), (e[2], e2, 1.41749e-2), (e[3], e3, 2.25567e-2)):
        assert np.allclose(got, want, rtol=1e-9, atol=0) and abs(want - written) < 1e-8 + 1e-5 * want
    rule = {"rule": "tolerance"}
    expected = np.asarray([5.625], np.float16)
    assert judge_buffer(np.asarray([5.625 + 5 * 2.0**-8], np.float16), expected, rule, e[3][0]).bad.size == 0
    assert judge_buffer(np.asarray([5.625 + 6 * 2.0**-8], np.float16), expected, rule, e[3][0]).bad.size == 1


# -- strategy, reference backend, compile ------------------------------------------------------
@functools.cache
def _float_sample() -> list[ProgramCase]:
    return [_float(c) for c in draw_examples(FAMILY.cases(StrategyOptions(), floats=True), 16, 11)]


@pytest.mark.slow
def test_float_programs_take_the_float_domain_and_others_do_not() -> None:
    """Valid by construction: a float program's cases draw either domain (exact first), an
    integer or training program's only the exact one; a float case of an integer program is refused."""
    sample = draw_examples(FAMILY.cases(StrategyOptions()), 120, 4)
    assert {c.domain for c in sample} == {"exact", "float"}
    assert all(float_domain_rule(c.shader.program) is None for c in sample if c.domain == "float")
    int8 = draw_examples(program_cases_for(ProgramVariant(SEEDS["int8-mlp-2-layer"])), 1, 0)[0]
    with pytest.raises(ValueError, match="cannot take float-domain data"):
        _float(int8)
    c = _float_sample()[0]
    assert FAMILY.case_from_json(c.to_json()) == c and c.to_json()["domain"] == "float"
    assert "domain" not in dataclasses.replace(c, domain="exact").to_json()  # exact cases' names as before


def test_float_domain_data_are_full_mantissa_and_within_the_limits() -> None:
    for c in _float_sample()[:6]:
        run = _evaluated(c)
        x = run.values[0].astype(np.float64)
        assert np.mean(x != np.round(x)) > 0.5  # not integers
        assert (np.abs(x) >= 0.125).all()  # normal in float16
        for v, lim in zip(run.values, c.shader.program.limits(c.scalars())):
            if v is not None:
                assert np.abs(v.astype(np.float64)).max() <= lim


def test_the_reference_backend_passes_float_domain_programs() -> None:
    backend = ReferenceBackend()
    for c in _float_sample()[:10] + [_float(draw_examples(program_cases_for(ProgramVariant(SEEDS["mlp-2-layer"])),
                                                          1, 2)[0])]:
        assert c.compare_rule().rule == "tolerance"
        assert check_case(backend, c).status.value == "Pass", c.shader.program.lines()


def test_sampled_float_programs_compile_and_validate() -> None:
    for v in {c.shader for c in _float_sample()[:6]}:
        validate_spirv(compile_glsl(v.glsl(), v.id))


def test_the_float_domain_kills_a_dropped_bias_of_small_magnitude() -> None:
    """A chained MatMulAdd without its bias (|b| in [1/8, 4] against results of up to 2^11): the
    float domain's verdict (within the propagated bound) fails most two-layer float cases."""
    mutant = catalogue()["cvprogram-chained-bias-dropped"]
    sample = [_float(c) for c in draw_examples(FAMILY.cases(StrategyOptions(), floats=True, layers=2), 12, 3)]
    killed = 0
    for c in sample:
        d = c.data()
        bufs = [b.copy() for b in d.initial]
        with mutant.applied(), np.errstate(all="ignore"):
            c.variant().execute(d.params[None, :], np.zeros((1, len(bufs)), np.int64), bufs)
        k = c.shader.program.buffer_index("output")
        killed += judge_buffer(bufs[k], d.expected[k], c.compare_rule().to_json(), d.tolerance[k]).bad.size > 0
    assert killed >= len(sample) // 2
