"""Device numeric models (ctsgen.oracle.models.h100): hand-worked MMA steps, and mutants only a
model can see: each stays within the spec tolerance and is killed by the model's bit-exact
prediction (docs/spec-decisions.md, device-numeric-models; docs/mutation.md "Numeric-model mutants")."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ctsgen.ops.cm2_gemm import expected_tile
from ctsgen.ops import coopvec as cv
from ctsgen.model.types import ComponentType as C
from ctsgen.model.types import CoopVecType
from ctsgen.oracle.models import MODELS, model_params
from ctsgen.oracle.models import h100
from ctsgen.runner.model_verdict import model_verdict
from ctsgen.execute.judge import judge_buffer
from ctsgen.core.verdict import CaseResult, Status


def test_mma_step_aligns_truncates_and_rounds_toward_zero() -> None:
    """Terms 1 and -2^-26: aligned to 1's exponent with 25 fractional bits, -2^-26 truncates to 0
    (sum 1); with 26 bits the sum 1 - 2^-26 rounds toward zero to 1 - 2^-24. Terms 1 and
    3 * 2^-25: the exact sum 1 + 0.75 * 2^-23 rounds toward zero to 1, to nearest to 1 + 2^-23."""
    acc = np.zeros(1)
    assert h100.mma_step(np.array([[1.0, -2.0**-26]]), acc, 25, "rtz").tolist() == [1.0]
    assert h100.mma_step(np.array([[1.0, -2.0**-26]]), acc, 26, "rtz").tolist() == [1 - 2.0**-24]
    assert h100.mma_step(np.array([[1.0, 3 * 2.0**-25]]), acc, 25, "rtz").tolist() == [1.0]
    assert h100.mma_step(np.array([[1.0, 3 * 2.0**-25]]), acc, 25, "rne").tolist() == [1 + 2.0**-23]
    # negative sums truncate toward zero too; the accumulator is one of the aligned terms
    assert h100.mma_step(np.array([[-1.0, -3 * 2.0**-25]]), acc, 25, "rtz").tolist() == [-1.0]
    assert h100.mma_step(np.array([[2.0**-30]]), np.array([4.0]), 25, "rtz").tolist() == [4.0]


def test_gemm_chains_k_steps_of_16() -> None:
    """K = 32 of fp16 ones with one 2^-24 product in the second step: the first step gives 16, the
    second aligns 2^-24 to 16's exponent (grid 2^-21) and drops it."""
    a = np.ones((1, 32), np.float16)
    b = np.ones((32, 1), np.float16)
    b[20, 0] = np.float16(2.0**-24)
    assert h100.gemm(a, b, C.float16).tolist() == [[31.0]]
    # alone in its step (largest term 1, grid 2^-25) the 2^-24 product survives the alignment
    assert float(h100.gemm(a[:, 16:], b[16:], C.float16)[0, 0]) == 15.0
    assert float(h100.gemm(a[:, 20:21], b[20:21], C.float16)[0, 0]) == 2.0**-24


def test_products_align_by_their_exponent_sum_not_their_binade() -> None:
    """a = [1.5, -2^-12], b = [1.5, 2^-13]: products 2.25 and -2^-25. Alignment exponents are
    e_a + e_b: 0 + 0 = 0 and -12 - 13 = -25, so E = 0 and the grid is 2^(0-25): -2^-25 is kept,
    and 2.25 - 2^-25 rounds toward zero to fp32 (spacing 2^-22 in [2, 4)) as 2.25 - 2^-22.
    Aligned by the binade of 2.25 (E = 1, grid 2^-24) the -2^-25 would truncate to 0 (sum 2.25).
    Xie et al. 2025 (MMA-Sim, arXiv:2511.10909), the fused dot-add's exponents; fitted on the
    H100 (docs/validation.md, "Device numeric models")."""
    a = np.array([[1.5, -2.0**-12]], np.float16)
    b = np.array([[1.5], [2.0**-13]], np.float16)
    assert h100.gemm(a, b, C.float16).tolist() == [[2.25 - 2.0**-22]]
    assert h100.gemm(a, b, C.float16, replace(h100.H100, mma_alignment="magnitude")).tolist() == [[2.25]]
    with pytest.raises(ValueError, match="exponents, magnitude"):
        h100.gemm(a, b, C.float16, replace(h100.H100, mma_alignment="binade"))


#: A float16 -> float32 element the H100 computed and the binade-aligned model missed: cm2-gemm
#: seed 1501, case cm2_gemm.float16_to_float32.subgroup.tile_32x32x16
#: .case_789411cea6, tile element (0, 10): K = 16 (one MMA step), alpha = 0.5, beta = 0.
#: Dumped on the device (docs/validation.md, "The float16 MMA refitted"; bench/analyse_mma_misses.py at commit adeb587 prints it).
H100_MISS_A = "b366 bb42 b652 bfa7 3a04 31b1 b7c4 b90c baeb 3425 377d 3419 30e1 b99a b07b bcce"
H100_MISS_B = "3f7c 3d6c 3bba 3559 3ac5 321f 3da5 bbe1 bcf5 341b b088 ba28 31e9 bf7c 3cae 3467"
H100_MISS_D = 0xBE372D2E


def test_h100_miss_of_the_binade_rule_is_reproduced() -> None:
    """The worked miss (H100_MISS_*), in exact arithmetic.

    Every a and b is a multiple of 2^-13 (the smallest, 0x30e1 = 0.15247 and 0x31e9 = 0.18469,
    have exponent -3 and 10 fraction bits), so every product is an integer n times 2^-26:
    n = -29031232, -82524928, -25603232, -42909936, 42701120, 2283119, -45962560, 41695424,
    71916768, 4460444, -4447440, -13225792, 1889737, 87921408, -10992848, -22179360,
    sum -24009308. The exponent sums e_a + e_b are -3 -1 -3 -2 -2 -6 -2 -2 -1 -4 -5 -3 -6 -1 -3 -2:
    E = -1, grid 2^(-1-25) = 2^-26, nothing truncates, r = -24009308 * 2^-26 = -12004654 * 2^-25,
    an fp32 (12004654 < 2^24, binade 2^-2, spacing 2^-25); D = 0.5 * r = -6002327 * 2^-25, bits
    0xbe372d2e, the H100's. The binade rule takes E = 0 from the largest product, 0xb99a * 0xbf7c
    = -0.70020 * -1.87109 = 1.31014 (exponent sum -1, but the significands' product carries),
    grid 2^-25: the two odd n (2283119 and 1889737, both positive) lose half a unit each,
    r = -12004655 * 2^-25, D bits 0xbe372d2f, one ulp below the device."""
    from fractions import Fraction

    a = np.array([int(h, 16) for h in H100_MISS_A.split()], np.uint16).view(np.float16)
    b = np.array([int(h, 16) for h in H100_MISS_B.split()], np.uint16).view(np.float16)
    units = [Fraction(float(x)) * Fraction(float(y)) * 2**26 for x, y in zip(a, b)]
    assert all(u.denominator == 1 for u in units) and sum(units) == -24009308
    assert sorted(int(u) for u in units if u % 2) == [1889737, 2283119]

    def d_bits(params: h100.H100Params) -> int:
        r = h100.gemm(a[None, :], b[:, None], C.float16, params)
        return int(h100.gemm_epilogue(r, np.zeros((1, 1)), 0.5, 0.0).astype(np.float32).view(np.uint32)[0, 0])

    assert d_bits(h100.H100) == H100_MISS_D
    assert d_bits(replace(h100.H100, mma_alignment="magnitude")) == H100_MISS_D + 1


def test_accumulator_is_an_aligned_truncated_term() -> None:
    """Two MMA steps (K = 32). Step 1: products 1 * 1 and 2^-12 * 2^-11 = 2^-23 (E = 0, grid 2^-25)
    give the fp32 accumulator 1 + 2^-23. Step 2: products 16 * 16 and -16 * 16 (exponent sums 8,
    E = 8, grid 2^-17) cancel, and the accumulator, truncated like a product to a multiple of
    2^-17, is 1: the result is 1, not 1 + 2^-23. On the H100 data an exactly added accumulator
    predicts 99.987% of the float16 elements (docs/validation.md, "The float16 MMA
    refitted"), the truncated one all."""
    a = np.zeros((1, 32), np.float16)
    b = np.zeros((32, 1), np.float16)
    a[0, [0, 1, 16, 17]] = [1.0, 2.0**-12, 16.0, -16.0]
    b[[0, 1, 16, 17], 0] = [1.0, 2.0**-11, 16.0, 16.0]
    assert float(h100.gemm(a[:, :16], b[:16], C.float16)[0, 0]) == 1 + 2.0**-23
    assert float(h100.gemm(a, b, C.float16)[0, 0]) == 1.0


def test_bfloat16_conversion_truncates() -> None:
    """bfloat16 spacing at 1 is 2^-7: 1 + 0.75 * 2^-7 truncates to 1 (RNE: 1 + 2^-7), and
    -(1 + 0.75 * 2^-7) to -1 (RNE: -(1 + 2^-7)); integers truncate as well."""
    x = np.array([1 + 2.0**-8 + 2.0**-9, -(1 + 2.0**-8 + 2.0**-9)], np.float32)
    assert h100.convert_values(x, C.float32, C.bfloat16).astype(np.float64).tolist() == [1.0, -1.0]
    assert h100.convert_values(x, C.float32, C.bfloat16, replace(h100.H100, bf16_rounding="rne")) \
        .astype(np.float64).tolist() == [1 + 2.0**-7, -(1 + 2.0**-7)]
    assert h100.convert_values(np.array([16842753], np.int32), C.sint32, C.bfloat16).astype(float).tolist() \
        == [16777216.0]


def test_an_integer_converted_to_bfloat16_rounds_to_float32_first() -> None:
    """The H100 (docs/validation.md, "Confirmed on new seeds": cm2-convert case_2f3803c63a
    element 1615): sint32 0x78ffffe8 = 2030043112 became bfloat16 2030043136 = 2^30 * (1 + 57/64).
    Its bfloat16 neighbours (spacing 2^23) are 2^30 * (1 + 113/128) = 2021654528 and 2030043136;
    truncating the exact value gives the first, but float32 (spacing 128) rounds it to nearest,
    2030043136, which is a bfloat16 value and truncates to itself. The rule before
    (``bf16_source="exact"``) gives the first."""
    x = np.array([0x78FFFFE8, -0x78FFFFE8, 2030043000], np.int32)
    assert h100.convert_values(x, C.sint32, C.bfloat16).astype(float).tolist() \
        == [2030043136.0, -2030043136.0, 2021654528.0]
    assert h100.convert_values(x, C.sint32, C.bfloat16, replace(h100.H100, bf16_source="exact")) \
        .astype(float).tolist() == [2021654528.0, -2021654528.0, 2021654528.0]
    with pytest.raises(ValueError, match="float32, exact"):
        h100.convert_values(x, C.sint32, C.bfloat16, replace(h100.H100, bf16_source="f32"))


def _gemm_data(seed: int, k: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full-mantissa fp16 data in [-2, 2]: the sums round, so the device's rounding shows."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, (16, k)).astype(np.float16)
    b = rng.uniform(-2, 2, (k, 16)).astype(np.float16)
    c = rng.uniform(-4, 4, (16, 16)).astype(np.float32)
    return a, b, c


@pytest.mark.parametrize("mutant", [
    replace(h100.H100, mma_rounding="rne"),   # accumulation rounds to nearest instead of toward zero
    replace(h100.H100, frac_bits=24),         # one fewer alignment bit
    replace(h100.H100, mma_alignment="magnitude"),  # products aligned by their binade
], ids=["rne-accumulation", "one-fewer-alignment-bit", "binade-alignment"])
def test_gemm_mutants_survive_the_spec_tolerance_and_die_under_the_model(mutant: h100.H100Params) -> None:
    a, b, c = _gemm_data(1)
    rows, cols = slice(0, 16), slice(0, 16)
    spec_expected, tol = expected_tile(a, b, c, 1.0, 1.0, rows, cols, np.zeros((16, 16), np.float32), C.float32)
    model = h100.gemm_epilogue(h100.gemm(a, b, C.float16), c, 1.0, 1.0).astype(np.float32)
    device = h100.gemm_epilogue(h100.gemm(a, b, C.float16, mutant), c, 1.0, 1.0).astype(np.float32)
    assert judge_buffer(model.ravel(), spec_expected.ravel(), {"rule": "tolerance"}, tol.ravel()).bad.size == 0
    assert judge_buffer(device.ravel(), spec_expected.ravel(), {"rule": "tolerance"}, tol.ravel()).bad.size == 0
    assert judge_buffer(device.ravel(), model.ravel(), {"rule": "bitwise", "signed_zero": False}).bad.size > 0


@pytest.mark.parametrize("mutant", [
    replace(h100.H100, coopvec_block=32),        # 32-wide binary32 blocks instead of 16
    replace(h100.H100, coopvec_reverse=True),    # blocks added in reverse order
], ids=["block-32", "reversed-block-order"])
def test_coopvec_mutants_survive_the_spec_tolerance_and_die_under_the_model(mutant: h100.H100Params) -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(0.125, 2, (32, 128)).astype(np.float16)
    w = rng.uniform(-1, 2, (24, 128)).astype(np.float16)
    bias = rng.uniform(-2, 2, 24).astype(np.float16)
    r = CoopVecType.float16
    spec_expected = cv.matmul(x, w, bias, r)
    tol = cv.matmul_tolerance(x, w, bias, r)
    model = h100.coopvec_f16(x, w, bias).astype(np.float16)
    device = h100.coopvec_f16(x, w, bias, mutant).astype(np.float16)
    for out in (model, device):
        assert judge_buffer(out.ravel(), np.asarray(spec_expected, np.float16).ravel(), {"rule": "tolerance"},
                            tol.ravel()).bad.size == 0
    assert judge_buffer(device.ravel(), model.ravel(), {"rule": "bitwise", "signed_zero": False}).bad.size > 0


def test_model_verdict_is_its_own_status_and_only_after_a_spec_pass() -> None:
    """A gemm case whose output is the model's passes; one element moved by one fp32 ulp (still
    within the spec tolerance) is ModelMismatch, not Fail; a spec Fail stays Fail."""
    from ctsgen.families.cm2_gemm.case import GemmCase, GemmVariant, h100_model
    from ctsgen.model.types import Scope

    v = GemmVariant(C.float16, C.float32, Scope.Workgroup, 128, 16, 16, 16)
    case = GemmCase(v, 1, 1, 4, 0, 0, 1.0, 1.0, seed=3)
    predicted = h100_model(case, model_params("h100"))
    d = predicted[3].copy()
    names = ["A", "B", "C", "D"]
    ok = CaseResult("c", Status.Pass)
    params = case.to_json()
    assert model_verdict(ok, "cm2-gemm", params, names, [None, None, None, d], "h100").status is Status.Pass
    d[0] = np.nextafter(d[0], np.float32(np.inf))
    moved = model_verdict(ok, "cm2-gemm", params, names, [None, None, None, d], "h100")
    assert moved.status is Status.ModelMismatch and not moved.status.is_failure
    failed = CaseResult("c", Status.Fail)
    assert model_verdict(failed, "cm2-gemm", params, names, [None, None, None, d], "h100").status is Status.Fail


def test_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="h100"):
        model_params("a100")
    assert set(MODELS) == {"h100"}


def test_family_random_gemm_cases_model_passes_the_spec_and_mutants_are_seen() -> None:
    """cm2-gemm's full-mantissa cases (values 'random'): the H100 model's D is within the spec
    tolerance of every case, and the RNE-accumulation mutant differs from it somewhere."""
    from ctsgen.families.cm2_gemm.case import GemmCase, GemmVariant, h100_model
    from ctsgen.model.types import Scope

    seen = 0
    for a_type in (C.float16, C.bfloat16):
        v = GemmVariant(a_type, C.float32, Scope.Workgroup, 128, 16, 16, 32)
        for seed in range(3):
            case = GemmCase(v, 2, 1, 3, 1, 0, 1.0, -0.5, seed, "random")
            data = case.data()
            model = h100_model(case, model_params("h100"))[3]
            mutant = h100_model(case, replace(h100.H100, mma_rounding="rne"))[3]
            rule = case.compare_rule().to_json()
            assert judge_buffer(model, data.expected[3], rule, data.tolerance[3]).bad.size == 0
            assert judge_buffer(mutant, data.expected[3], rule, data.tolerance[3]).bad.size == 0
            seen += int((model.view(np.uint32) != mutant.view(np.uint32)).sum())
    assert seen > 0
    with pytest.raises(ValueError, match="float A, B and C"):
        GemmCase(GemmVariant(C.sint8, C.sint32, Scope.Workgroup, 128, 16, 16, 32), values="random")


@pytest.mark.slow
def test_coopvec_family_cases_under_the_model_pass_the_spec() -> None:
    """Drawn coopvec cases the model covers (fp16 MatMul / MatMulAdd): the model's output is
    within each case's spec tolerance; the 32-wide-block mutant differs from it somewhere."""
    from ctsgen.core.family import StrategyOptions
    from ctsgen.families.coopvec import FAMILY
    from ctsgen.pack.generate import draw_cases

    cases = [c for c in draw_cases(FAMILY, 60, 9, StrategyOptions(), cases_per_variant=2)
             if FAMILY.numeric_model(c, h100.H100) is not None]
    assert len(cases) >= 3
    differ = 0
    for c in cases:
        d = c.data()
        model = FAMILY.numeric_model(c, h100.H100)[3]
        j = judge_buffer(model, d.expected[3], c.compare_rule().to_json(), d.tolerance[3] if d.tolerance else None)
        assert j.bad.size == 0, c.name()
        mutant = FAMILY.numeric_model(c, replace(h100.H100, coopvec_block=32))[3]
        differ += int((mutant.view(np.uint16) != model.view(np.uint16)).sum())
    assert differ > 0


def test_f16_step_blocks_and_fused_roundings() -> None:
    """One MMA step into an fp16 accumulator of 1 (fp16 spacing 2^-10 in [1, 2)), by hand.

    Products 2^-11 and 2^-12 (exponents -11, -12): the exact sum 1 + 0.75 * 2^-10 lies above the
    midpoint 1 + 2^-11, so every candidate that rounds to nearest gives 1 + 2^-10 and the fused
    step rounded toward zero gives 1. Products 2^-11 and 2^-28: the binary32 block sum keeps
    2^-28 (1 + 2^-11 + 2^-28 rounds up: 1 + 2^-10), the fused step truncates it on the grid 2^-25
    below E = 0, leaving the tie 1 + 2^-11, which rounds to the even 1. Products 2^-11 and 2^-25:
    kept by the fused step (the sum rounds up), but rounded toward zero to fp32 first (spacing
    2^-23) it leaves the tie: "rtz-rne" gives 1. The H100 is the fused step rounded
    to nearest; "blocks" was the model before."""
    acc = np.array([1.0])
    fused = {r: replace(h100.H100, f16_acc="fused", f16_rounding=r) for r in h100.F16_ROUNDINGS}
    blocks = replace(h100.H100, f16_acc="blocks")
    assert fused["rne"] == h100.H100

    def step(p: list[float], e: list[int], params: h100.H100Params) -> float:
        return float(h100.f16_step(np.array([p]), np.array([e]), acc, 25, params)[0])

    up = 1 + 2.0**-10
    assert step([2.0**-11, 2.0**-12], [-11, -12], blocks) == up
    assert [step([2.0**-11, 2.0**-12], [-11, -12], fused[r]) for r in ("rne", "rtz", "rtz-rne")] == [up, 1.0, up]
    assert step([2.0**-11, 2.0**-28], [-11, -28], blocks) == up
    assert [step([2.0**-11, 2.0**-28], [-11, -28], fused[r]) for r in ("rne", "rtz", "rtz-rne")] == [1.0] * 3
    assert [step([2.0**-11, 2.0**-25], [-11, -25], fused[r]) for r in ("rne", "rtz", "rtz-rne")] == [up, 1.0, 1.0]
    with pytest.raises(ValueError, match="blocks, fused"):
        h100.f16_step(np.zeros((1, 1)), None, acc, 25, replace(h100.H100, f16_acc="exact"))


def test_reduce_orders_by_hand() -> None:
    """float16 [2048, 1, 3, -2048] (spacing 2 in [2048, 4096), 1 below): halving (2048 + 3) +
    (1 - 2048) = 2052 - 2047 = 5 (2051 is a tie, to the even 2052); pairwise (2048 + 1) + (3 - 2048)
    = 2048 - 2045 = 3 (2049 a tie, to 2048); sequential 2048, 2052, 4; exact 4; halving with
    float32 partial sums 2051 - 2047 = 4."""
    d = np.array([[[2048.0, 1.0, 3.0, -2048.0]]])
    got = {o: float(h100.reduce_sum(d, C.float16, replace(h100.H100, reduce_order=o))[0, 0])
           for o in h100.REDUCE_ORDERS if o != "fragment"}
    assert got == {"halving": 5.0, "pairwise": 3.0, "sequential": 4.0, "exact": 4.0}
    assert float(h100.reduce_sum(d, C.float16, replace(h100.H100, reduce_order="halving",
                                                       reduce_width="float32"))[0, 0]) == 4.0
    for order in ("tree", "fragment"):  # the fragment order needs the matrix (reduce_fragment)
        with pytest.raises(ValueError, match="halving, pairwise"):
            h100.reduce_sum(d, C.float16, replace(h100.H100, reduce_order=order))


def test_reduce_fragment_orders_by_hand() -> None:
    """The H100's fragment order, float16 (spacing 2 in [2048, 4096)).

    Row of a 16 x 8 matrix, [2048, 1, 1, 0, -2048, 0, 0, 0]: lane t holds columns 2t, 2t + 1;
    the lanes add per component (t ^ 1, then t ^ 2), then the two components: even columns
    (2048 + 1) + (-2048 + 0) = 2048 - 2048 = 0 (2049 a tie, to 2048), odd columns 1, sum 1.
    Halving gives 2 (= exact), adjacent pairs 0, sequential 0.
    Column of a 16 x 8 matrix, rows 0, 1, 4, 8 = 2048, 1, -2048, 1: lane g holds rows g, g + 8
    (2049 -> 2048, 1, -2048), then a shuffle tree over g: (2048 + 1) + (-2048) = 0; halving 1, exact 2."""
    row = np.zeros((16, 8))
    row[0] = [2048, 1, 1, 0, -2048, 0, 0, 0]
    assert h100.reduce_fragment(row, "row", C.float16, 1)[0, 0] == 1.0
    other = {o: float(h100.reduce_sum(row[:1].reshape(1, 1, 8), C.float16, replace(h100.H100, reduce_order=o))[0, 0])
             for o in ("halving", "pairwise", "sequential", "exact")}
    assert other == {"halving": 2.0, "pairwise": 0.0, "sequential": 0.0, "exact": 2.0}
    col = np.zeros((16, 8))
    col[[0, 1, 4, 8], 0] = [2048, 1, -2048, 1]
    assert h100.reduce_fragment(col, "column", C.float16, 1)[0, 0] == 0.0
    assert float(h100.reduce_sum(col[:, :1].T.reshape(1, 1, 16), C.float16, replace(h100.H100, reduce_order="halving"))
                 [0, 0]) == 1.0
    assert h100.reduce_fragment(np.zeros((16, 8)), "row", C.float32, 2) is None  # no grid of whole 16 x 8 tiles
    with pytest.raises(ValueError, match="row, column, row_column, 2x2"):
        h100.reduce_fragment(row, "rows", C.float16, 1)


#: The subgroup grid the H100's sums showed where a shape allowed more than one
#: (docs/validation.md, "Confirmed on new seeds": only this grid reproduced every
#: dumped element): (rows, cols, subgroups) -> {mode: (rows of subgroups, columns of subgroups)}.
MEASURED_GRIDS = {
    (32, 16, 2): {"column": (1, 2), "row_column": (1, 2)},
    (32, 32, 2): {"column": (1, 2), "row": (2, 1), "row_column": (1, 2)},
    (32, 32, 4): {"column": (2, 2), "row": (2, 2)},
    (32, 48, 2): {"column": (1, 2), "row": (2, 1), "row_column": (1, 2)},
    (32, 64, 8): {"column": (2, 4), "row": (2, 4)},
    (64, 16, 4): {"column": (2, 2), "row": (4, 1), "row_column": (2, 2)},
    (64, 32, 4): {"column": (2, 2), "row": (4, 1), "row_column": (2, 2)},
    (64, 32, 8): {"column": (2, 4), "row": (2, 4), "row_column": (2, 4)},
    (64, 48, 4): {"row": (4, 1), "row_column": (2, 2)},
    (64, 64, 8): {"column": (2, 4), "row": (2, 4), "row_column": (2, 4)},
    (64, 96, 8): {"row": (2, 4), "row_column": (2, 4)},
    (96, 32, 4): {"column": (2, 2), "row": (2, 2), "row_column": (2, 2)},
    (96, 64, 8): {"column": (2, 4), "row": (2, 4), "row_column": (2, 4)},
}


def test_warp_grid_gives_every_measured_grid() -> None:
    """Where the device had a choice, the rule picks what it measured: a Row sum puts its
    subgroups down the rows where 16-row blocks allow (64 x 32 over 4: 4 x 1) but not 8 of them
    (64 x 32 over 8: 2 x 4, though 4 x 2 fits), while Column and RowColumn sums split 2 x 2."""
    for (rows, cols, subgroups), by_mode in MEASURED_GRIDS.items():
        for mode, grid in by_mode.items():
            assert h100.warp_grid(rows, cols, subgroups, mode) == grid, (rows, cols, subgroups, mode)
    assert h100.warp_grid(16, 8, 2, "row") is None  # 8 columns cannot be split over two subgroups
    assert h100.warp_grid(64, 32, 1, "row") == (1, 1)


#: Device values measured on the H100 (driver 580.159.04; docs/validation.md, "The remaining models"), each a
#: case of the pack (its parameters, whose seed regenerates the inputs), an output element, and
#: the H100's value there; every other order or step the fit tried gives another value.
H100_DATA = [
    ({"alpha": -2.0, "beta": -0.5, "family": "cm2-gemm", "seed": 2147483648, "tile": [0, 1], "tiles": [2, 3, 2],
      "values": "random", "variant": {"aType": "float16", "cType": "float16", "scope": "Workgroup",
                                      "tile": [32, 16, 32], "workgroupSize": 32}}, 257, -3.64453125),
    ({"family": "cm2-reduce", "seed": 10415, "values": "random", "variant": {
        "combine": "sum", "mode": "Row", "result": {"cols": 48, "componentType": "float32", "rows": 16,
                                                    "scope": "Workgroup", "use": "Accumulator", "workgroupSize": 32},
        "source": {"cols": 16, "componentType": "float32", "rows": 16, "scope": "Workgroup", "use": "Accumulator",
                   "workgroupSize": 32}}}, 0, 0.003141164779663086),
    ({"family": "cm2-reduce", "seed": 1, "values": "random", "variant": {
        "combine": "sum", "mode": "Row", "result": {"cols": 48, "componentType": "float16", "rows": 64,
                                                    "scope": "Workgroup", "use": "Accumulator", "workgroupSize": 128},
        "source": {"cols": 48, "componentType": "float16", "rows": 64, "scope": "Workgroup", "use": "Accumulator",
                   "workgroupSize": 128}}}, 96, 0.91796875),
    ({"family": "cm2-reduce", "seed": 0, "values": "random", "variant": {
        "combine": "sum", "mode": "RowColumn", "result": {"cols": 64, "componentType": "float32", "rows": 32,
                                                          "scope": "Workgroup", "use": "Accumulator",
                                                          "workgroupSize": 256},
        "source": {"cols": 32, "componentType": "float32", "rows": 64, "scope": "Workgroup", "use": "Accumulator",
                   "workgroupSize": 256}}}, 0, -14.054187774658203),
    ({"family": "cm2-reduce", "seed": 444, "values": "random", "variant": {
        "combine": "sum", "mode": "Column", "result": {"cols": 32, "componentType": "float32", "rows": 32,
                                                       "scope": "Subgroup", "use": "Accumulator", "workgroupSize": 32},
        "source": {"cols": 32, "componentType": "float32", "rows": 32, "scope": "Subgroup", "use": "Accumulator",
                   "workgroupSize": 32}}}, 2, -0.41812586784362793),
]

#: The earlier model ("blocks" fp16 accumulation), and for cm2-reduce the other orders the fit tried.
H100_DATA_RIVALS = {
    "cm2-gemm": [replace(h100.H100, f16_acc="blocks")],
    "cm2-reduce": [replace(h100.H100, reduce_order=o) for o in ("halving", "pairwise", "sequential", "exact")],
}


@pytest.mark.parametrize("parameters, element, device", H100_DATA,
                         ids=["gemm-f16-f16", "reduce-row-f32", "reduce-row-4-subgroups",
                              "reduce-row-column-8-subgroups", "reduce-column-subgroup"])
def test_h100_device_values_are_reproduced(parameters: dict, element: int, device: float) -> None:
    """The model gives the H100's value, and the earlier model does not (nor, for the
    reductions, any order over the terms: the fit's other candidates)."""
    from ctsgen.families import get_family

    fam = get_family(parameters["family"])
    case = fam.case_from_json(parameters)

    def value(params: h100.H100Params) -> float:
        return float(fam.numeric_model(case, params)[-1].ravel()[element])

    assert value(h100.H100) == device
    for rival in H100_DATA_RIVALS[fam.name]:
        assert value(rival) != device, rival


def _spec_and_model_verdicts(family: str, mutant: h100.H100Params, count: int, seed: int) -> tuple[int, int]:
    """Drawn cases of ``family`` that the model predicts: every model and mutant output passes the
    spec tolerance (asserted); returns (modelled cases, elements where the mutant differs)."""
    from ctsgen.families import get_family
    from ctsgen.core.family import StrategyOptions
    from ctsgen.pack.generate import draw_cases

    fam = get_family(family)
    modelled, differ = 0, 0
    for c in draw_cases(fam, count, seed, StrategyOptions(), cases_per_variant=3):
        model = fam.numeric_model(c, h100.H100)
        if model is None:
            continue
        modelled += 1
        d = c.data()
        i = len(model) - 1
        got = fam.numeric_model(c, mutant)[i]
        rule = c.compare_rule().to_json()
        for out in (model[i], got):
            j = judge_buffer(out, d.expected[i], rule, d.tolerance[i] if d.tolerance else None)
            assert j.bad.size == 0, c.name()
        bits = f"uint{8 * got.dtype.itemsize}"
        differ += int((got.view(bits) != model[i].view(bits)).sum())
    return modelled, differ


@pytest.mark.slow
@pytest.mark.parametrize("family, mutant", [
    ("cm2-reduce", replace(h100.H100, reduce_order="halving")),      # a changed reduction order (the prior)
    ("cm2-reduce", replace(h100.H100, reduce_order="sequential")),
    ("cm2-reduce", replace(h100.H100, reduce_order="pairwise")),
    ("cm2-reduce", replace(h100.H100, reduce_width="float32")),      # float16 partial sums held in binary32
    ("cm2-gemm", replace(h100.H100, f16_rounding="rtz")),            # fp16 accumulation toward zero
    ("cm2-gemm", replace(h100.H100, f16_acc_k_step=32)),            # fp16 rounding every 32 products, not 16
    ("coopvec", replace(h100.H100, coopvec_block_fp8=32)),           # an fp8 step of 32 products, not 16 (the prior)
], ids=["reduce-halving", "reduce-sequential", "reduce-pairwise", "reduce-f32", "gemm-f16-rtz", "gemm-f16-k-step-32",
        "coopvec-fp8-block-32"])
def test_new_mutants_survive_the_spec_tolerance_and_die_under_the_model(family: str, mutant: h100.H100Params
                                                                         ) -> None:
    """The candidates bench/device/models.sh chose between are mutants of the fitted model: on
    drawn cases each is within the spec tolerance, and the model sees the difference."""
    modelled, differ = _spec_and_model_verdicts(family, mutant, 240, 5)
    assert modelled >= 6
    assert differ > 0
