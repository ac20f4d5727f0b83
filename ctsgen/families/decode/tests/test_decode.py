"""Decode oracle: hand-worked blocks of each format (from its definition), probes that
round-trip their coordinates, and strategies/variants that compile and pass on the
reference semantics."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from ctsgen.core.family import StrategyOptions
from ctsgen.families.decode import FAMILY
from ctsgen.ops.decode_case import DecodeCase, DecodeVariant
from ctsgen.ops.decode import MXFP4, Q4_0, Q4_K, Q5_K, Q6_K, Q8_0, dequantize, encode_blocks
from ctsgen.ops.decode_load import BC_MUL, CIB_MUL, probe_values
from ctsgen.strategies.decode import DECODERS
from ctsgen.ops.decode import block_shapes
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.model.tensor import ClampMode, TensorLayout
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.oracle.addressing import tensor_addresses
from ctsgen.pack.generate import draw_cases
from ctsgen.toolchain import compile_glsl, validate_spirv
from ctsgen.execute.judge import judge_buffer

REACH = settings(max_examples=1000, database=None, deadline=None, derandomize=True,
                 suppress_health_check=list(HealthCheck), phases=[Phase.generate])


def f16(x: float) -> list[int]:
    return list(np.array([x], dtype=np.float16).view(np.uint8))


def test_q8_0_hand_worked_block() -> None:
    """d = 0.5 (f16 0x3800), qs = 0, 1, -1, 127, -128, then 2 ... : x[j] = d * qs[j]."""
    qs = np.array([0, 1, -1, 127, -128] + list(range(2, 29)), dtype=np.int8)
    block = np.array(f16(0.5) + list(qs.view(np.uint8)), dtype=np.uint8)[None, :]
    assert block.shape == (1, 34) and list(block[0, :2]) == [0x00, 0x38]
    x = dequantize(Q8_0, block)[0]
    assert list(x[:5]) == [0.0, 0.5, -0.5, 63.5, -64.0] and x[5] == 1.0 and x[31] == 14.0


def test_q4_0_hand_worked_block() -> None:
    """d = 2, qs[0] = 0x9F: x[0] = 2 * (0xF - 8) = 14, x[16] = 2 * (0x9 - 8) = 2;
    qs[1] = 0x08: x[1] = 0, x[17] = -16."""
    qs = [0x9F, 0x08] + [0x88] * 14
    x = dequantize(Q4_0, np.array([f16(2.0) + qs], dtype=np.uint8))[0]
    assert (x[0], x[16], x[1], x[17]) == (14.0, 2.0, 0.0, -16.0)
    assert (x[2:16] == 0).all() and (x[18:] == 0).all()


def test_q4_k_hand_worked_block() -> None:
    """d = 1, dmin = 0.5. scales[0] = 0x45 -> sc0 = 5 (low 6 bits), its top bits 01 feed
    sub-block 4's sc; scales[4] = 0x03 -> m0 = 3; scales[8] = 0x21 -> sc4 = 1 | (1 << 4) = 17,
    m4 = 2 | (scales[4] >> 6 = 0) = 2. qs[0] = 0x7A: element 0 (sub-block 0, low nibble 0xA)
    = 1*5*10 - 0.5*3 = 48.5; element 32 (sub-block 1, high nibble 7) uses sc1 = m1 = 0 -> 0.
    qs[64] = 0x0C: element 128 (chunk 2, sub-block 4, low nibble 12) = 17*12 - 0.5*2 = 203."""
    scales = [0x45, 0, 0, 0, 0x03, 0, 0, 0, 0x21, 0, 0, 0]
    qs = [0] * 128
    qs[0], qs[64] = 0x7A, 0x0C
    x = dequantize(Q4_K, np.array([f16(1.0) + f16(0.5) + scales + qs], dtype=np.uint8))[0]
    assert (x[0], x[32], x[128]) == (48.5, 0.0, 203.0)
    assert x[1] == -1.5  # q = 0: -dmin * m0


def test_mxfp4_hand_worked_block() -> None:
    """e = 128 (scale 2): qs[0] = 0xF1 -> x[0] = fp4(0x1) * 2 = 0.5 * 2 = 1, x[16] = fp4(0xF) * 2
    = -6 * 2 = -12; qs[1] = 0x35 -> x[1] = 3 * 2 = 6 (0b0101: exponent 2, mantissa 1 -> 3),
    x[17] = 1.5 * 2 = 3."""
    x = dequantize(MXFP4, np.array([[128, 0xF1, 0x35] + [0] * 14], dtype=np.uint8))[0]
    assert (x[0], x[16], x[1], x[17]) == (1.0, -12.0, 6.0, 3.0)
    codes = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(float)
    assert list(codes[:8]) == [0, 0.5, 1, 1.5, 2, 3, 4, 6]


def _scale_min_k4(j: int, q: list[int]) -> tuple[int, int]:
    """llama.cpp get_scale_min_k4."""
    if j < 4:
        return q[j] & 63, q[j + 4] & 63
    return (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4)


def _half(b: np.ndarray) -> float:
    return float(b.copy().view(np.float16)[0])


def _llama_q5_k(block: np.ndarray) -> list[float]:
    """llama.cpp dequantize_row_q5_K for one block, element by element (in double precision)."""
    d, dmin, scales = _half(block[0:2]), _half(block[2:4]), [int(v) for v in block[4:16]]
    qh, ql = [int(v) for v in block[16:48]], [int(v) for v in block[48:176]]
    y: list[float] = []
    u1, u2 = 1, 2
    for chunk in range(4):
        sc1, m1 = _scale_min_k4(2 * chunk, scales)
        sc2, m2 = _scale_min_k4(2 * chunk + 1, scales)
        q = ql[32 * chunk:32 * chunk + 32]
        y += [d * sc1 * ((q[l] & 0xF) + (16 if qh[l] & u1 else 0)) - dmin * m1 for l in range(32)]
        y += [d * sc2 * ((q[l] >> 4) + (16 if qh[l] & u2 else 0)) - dmin * m2 for l in range(32)]
        u1, u2 = u1 << 2, u2 << 2
    return y


def _llama_q6_k(block: np.ndarray) -> list[float]:
    """llama.cpp dequantize_row_q6_K for one block, element by element (in double precision)."""
    ql, qh = [int(v) for v in block[0:128]], [int(v) for v in block[128:192]]
    sc, d = [int(v) for v in block[192:208].view(np.int8)], _half(block[208:210])
    y = [0.0] * 256
    for half in range(2):
        L, H, S, Y = ql[64 * half:], qh[32 * half:], sc[8 * half:], 128 * half
        for l in range(32):
            is_ = l // 16
            y[Y + l] = d * S[is_] * (((L[l] & 0xF) | (((H[l] >> 0) & 3) << 4)) - 32)
            y[Y + l + 32] = d * S[is_ + 2] * (((L[l + 32] & 0xF) | (((H[l] >> 2) & 3) << 4)) - 32)
            y[Y + l + 64] = d * S[is_ + 4] * (((L[l] >> 4) | (((H[l] >> 4) & 3) << 4)) - 32)
            y[Y + l + 96] = d * S[is_ + 6] * (((L[l + 32] >> 4) | (((H[l] >> 6) & 3) << 4)) - 32)
    return y


@pytest.mark.parametrize("fmt, llama", [(Q5_K, _llama_q5_k), (Q6_K, _llama_q6_k)], ids=["q5_k", "q6_k"])
def test_k_quants_are_llama_cpps_dequantization(fmt, llama) -> None:
    """Every byte random except finite f16 scales: each element is llama.cpp's, bit for bit."""
    rng = np.random.default_rng(11)
    blocks = rng.integers(0, 256, (3, fmt.block_bytes), dtype=np.uint8)
    for at in ((0, 2), (2, 4)) if fmt is Q5_K else ((208, 210),):
        blocks[:, at[0]:at[1]] = rng.uniform(-4, 4, (3, 1)).astype(np.float16).view(np.uint8)
    got = dequantize(fmt, blocks)
    for block, row in zip(blocks, got):
        assert row.tolist() == llama(block)


@pytest.mark.parametrize("fmt", [Q8_0, Q4_0, Q4_K, MXFP4, Q5_K, Q6_K])
@pytest.mark.parametrize("comp", [ComponentType.float16, ComponentType.float32])
def test_encoded_values_are_exact_in_the_output_type(fmt, comp) -> None:
    """decision "decode-exact-scales": every decoded value survives the output type unchanged."""
    x = dequantize(fmt, encode_blocks(fmt, 200, 7, comp))
    assert np.isfinite(x).all()
    np.testing.assert_array_equal(x.astype(comp.dtype).astype(np.float64), x)
    if comp is ComponentType.float16:
        assert (np.abs(x[x != 0]) >= 2.0**-14).all()  # no f16 subnormals


@given(FAMILY.cases(decoder="probe1"))
def test_probe_round_trips_coordinates(c: DecodeCase) -> None:
    """With all-zero data the probe is a known function of (blockCoord, coordInBlock): solving it
    back for the tensor coordinate gives blockCoord * blockSize + coordInBlock, the clamped
    coordinate the spec's spanCoordToTensorCoord computes."""
    t = c.layout()
    m = c.shader.matrix
    a = tensor_addresses(t, m.rows, m.cols, is_store=False)
    zero = np.zeros(max(1, t.extent()), dtype=np.uint32)
    got = probe_values(a, zero, 1, ComponentType.uint32).astype(np.uint64)
    want = np.zeros_like(got)
    for i in range(t.LDim):
        want += a.blockCoord[i].astype(np.uint64) * BC_MUL[i] + a.coordInBlock[i].astype(np.uint64) * CIB_MUL[i]
    np.testing.assert_array_equal(got, want & np.uint64(0xFFFFFFFF))
    bs = np.asarray(t.blockSize).reshape(-1, 1, 1)
    np.testing.assert_array_equal((a.blockCoord * bs + a.coordInBlock)[:, a.valid], a.tensorCoord[:, a.valid])


def test_probe_sees_the_pointer() -> None:
    """A probe of 3 words at block index 2 reads word 2*3 + coordInBlock % 3."""
    t = TensorLayout.create(1).set_block_size(2).set_dimension(8)
    a = tensor_addresses(t, 1, 8, is_store=False)
    words = np.arange(100, 112, dtype=np.uint32)
    got = probe_values(a, words, 3, ComponentType.uint32).astype(np.int64)[0]
    coord = np.arange(8)
    want = (100 + 3 * (coord // 2) + (coord % 2) + (coord // 2) * BC_MUL[0] + (coord % 2) * CIB_MUL[0]) % 2**32
    np.testing.assert_array_equal(got, want)


def test_block_shapes() -> None:
    assert block_shapes(1, 32) == [(32,)]
    assert block_shapes(2, 32)[0] == (1, 32) and (4, 8) in block_shapes(2, 32)
    assert all(np.prod(s) == 256 for s in block_shapes(3, 256))


@pytest.mark.parametrize("what, pred", [
    ("blockSize > 1 in several dims", lambda c: sum(b > 1 for b in (c.layout_case.blockSize or ())) >= 2),
    ("format block straddling the slice edge", lambda c: c.shader.format is not None
     and c.layout_case.offset is not None and any(o % b for o, b in zip(c.layout().offset, c.layout().blockSize))),
    ("clamped probe", lambda c: c.shader.format is None and c.layout_case.clampValue is not None),
])
def test_reaches(what, pred) -> None:
    find(FAMILY.cases(StrategyOptions()), pred, settings=REACH)


def test_strata_give_every_decoder_every_dim_and_clamp_mode() -> None:
    """latin_strata: decoder i's cell r has Dim r + 1 and the (r + i)-th clampMode, so probe3
    (decoder 1) runs Dim 1 with Constant and Dim 5 with Undefined clamping; every decoder has
    every Dim and every clampMode, and the 40 cells hold all 25 Dim x clampMode pairs."""
    cells = FAMILY.strata()
    assert len(cells) == 40
    assert {"decoder": "probe3", "Dim": 1, "clampMode": ClampMode.Constant} in cells
    assert {"decoder": "probe3", "Dim": 5, "clampMode": ClampMode.Undefined} in cells
    for dec in DECODERS:
        mine = [c for c in cells if c["decoder"] == dec]
        assert sorted(c["Dim"] for c in mine) == [1, 2, 3, 4, 5]
        assert {c["clampMode"] for c in mine} == set(ClampMode)
    assert len({(c["Dim"], c["clampMode"]) for c in cells}) == 25


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [Q8_0, Q4_0, Q4_K, MXFP4, Q5_K, Q6_K], ids=lambda f: f.name)
@pytest.mark.parametrize("dim", [4, 5])
def test_formats_reach_dim_4_and_5_with_a_block_over_every_dimension(fmt, dim: int) -> None:
    """A block format at Dim 4 and 5 (unpinned draws), and its K elements spread over all Dim
    dimensions (blockSize > 1 in each, e.g. 2 x 2 x 2 x 2 x 2 for a 32-element block)."""
    find(FAMILY.variants(StrategyOptions()), lambda v: (v.decoder, v.Dim) == (fmt.name, dim), settings=REACH)
    find(FAMILY.variants(StrategyOptions(), decoder=fmt.name, Dim=dim),
         lambda v: all(b > 1 for b in v.blockShape), settings=REACH)


@pytest.mark.slow
def test_variants_compile_and_reference_matches(private_spirv_cache) -> None:
    """One variant per stratum (every format at Dim 1..5 included) compiles and validates; each
    case's reference execute on its initial buffers equals its expected output; JSON round-trips."""
    cases = draw_cases(FAMILY, 40, 5, StrategyOptions(), cases_per_variant=1)
    assert {(c.shader.decoder, c.shader.Dim) for c in cases} == {(d, n) for d in DECODERS for n in range(1, 6)}
    for c in cases:
        v = c.variant()
        validate_spirv(compile_glsl(v.glsl(), f"{v.id}.comp"))
        d = c.data()
        bufs = [x.copy() for x in d.initial]
        v.execute(d.params[None, :], np.zeros((1, 2), dtype=np.int64), bufs)
        np.testing.assert_array_equal(bufs[1].view(np.uint8), d.expected[1].view(np.uint8))
        assert FAMILY.case_from_json(c.to_json()).name() == c.name()


def q8_0_case(clamp: ClampMode) -> DecodeCase:
    """A float32 q8_0 load: layoutDimension 64, slice offset 32, span 256, clampValue 0x80000000
    (-0); matrix elements 0..31 read tensor elements 32..63, 32..255 are out of bounds."""
    v = DecodeVariant(1, clamp, MatrixType(ComponentType.float32, Scope.Subgroup, 16, 16, MatrixUse.A), "q8_0", (32,))
    return DecodeCase(v, TensorLayoutCase(v.layout_variant(), (64,), (32,), None, (32,), (256,), 0x80000000), 5)


@pytest.mark.parametrize("fmt, block", [
    (Q8_0, f16(-0.5) + [0] * 32),                     # negative scale x zero quant
    (Q4_0, f16(-2.0) + [0x88] * 16),                  # negative scale x (8 - 8)
    (MXFP4, [127] + [0x88] * 16),                     # code 0b1000: -0 in OCP MX E2M1
], ids=lambda v: getattr(v, "name", ""))
def test_sign_of_zero_is_not_part_of_a_decode_verdict(fmt, block) -> None:
    """Decision "signed-zero": the oracle's -0.0 and a device's +0.0 (llama.cpp's MXFP4 table,
    or a device that ignores the sign as Vulkan allows without SignedZeroInfNanPreserve) both
    pass; a nonzero difference still fails."""
    want = dequantize(fmt, np.array([block], dtype=np.uint8))[0].astype(np.float32)
    assert np.signbit(want).all() and (want == 0).all()
    rule = q8_0_case(ClampMode.ClampToEdge).compare_rule().to_json()  # every element decoded
    got = np.zeros_like(want)
    assert judge_buffer(got, want, rule).bad.size == 0
    got[3] = np.float32(2.0 ** -20)
    assert judge_buffer(got, want, rule).bad.tolist() == [3]


def test_a_constant_clamped_element_keeps_the_sign_of_a_zero_clamp_value() -> None:
    """Decision "data-movement-bits": a Constant-clamped element is clampValue's bits, moved, not
    computed. In :func:`q8_0_case` under Constant clamping, elements 32..255 are out of bounds
    (-0, bit for bit): +0 there fails; a decoded -0 (element 31: a zero quant times a
    negative scale) still passes as +0. Failed before: the whole case was compared with
    signed_zero false, so +0 passed for the clamp value."""
    c = q8_0_case(ClampMode.Constant)
    d = c.data()
    want, rule = d.expected[1], c.compare_rule().to_json()
    assert want.view(np.uint32)[32:].tolist() == [0x80000000] * 224 and want.view(np.uint32)[31] == 0x80000000
    got = want.copy()
    got[31] = 0.0
    assert judge_buffer(got, want, rule, d.tolerance[1]).bad.tolist() == []
    got[32:] = 0.0
    assert judge_buffer(got, want, rule, d.tolerance[1]).bad.tolist() == list(range(32, 256))
