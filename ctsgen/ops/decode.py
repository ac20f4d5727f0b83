"""Block-quantized weight formats, as the ggml / llama.cpp family of engines lays them out,
and the addressing probes; each with its GLSL decode function and a numpy oracle.

Every format here is a *block* of K elements stored in ``block_bytes`` bytes
(little-endian). A DecodeFunc receives a pointer to the block (the pointee is
the block struct, so the pointer is base + blockIndex * block_bytes), the
blockCoord and the coordInBlock; the element inside the block is the
row-major linearisation of coordInBlock over the block shape, so a block
may span several tensor dimensions (e.g. 2 x 16 for a 32-element block).
Formats (docs/formats.md works one block of each by hand):

* Q8_0 (34 bytes / 32): f16 d; int8 qs[32];             x[j] = d * qs[j]
* Q4_0 (18 bytes / 32): f16 d; uint8 qs[16];            x[j] = d * ((qs[j] & 15) - 8), x[j+16] = d * ((qs[j] >> 4) - 8)
* Q4_K (144 bytes / 256): f16 d, dmin; uint8 scales[12]; uint8 qs[128];
  chunk c = j / 64, l = j % 32, high = (j % 64) >= 32, sub-block s = 2c + high:
  x[j] = d * sc[s] * ((qs[32c + l] >> 4*high) & 15) - dmin * m[s], with the 6-bit
  (sc, m) of get_scale_min_k4: s < 4: (scales[s] & 63, scales[s+4] & 63);
  else ((scales[s+4] & 15) | (scales[s-4] >> 6) << 4, (scales[s+4] >> 4) | (scales[s] >> 6) << 4)
* MXFP4 (17 bytes / 32, OCP MX): uint8 e (E8M0); uint8 qs[16];
  x[j] = fp4_e2m1(qs[j] & 15) * 2^(e-127), x[j+16] = fp4_e2m1(qs[j] >> 4) * 2^(e-127)
* Q5_K (176 bytes / 256): f16 d, dmin; uint8 scales[12]; uint8 qh[32]; uint8 qs[128]:
  Q4_K's element with a fifth bit: q = ((qs[32c + l] >> 4*high) & 15) | ((qh[l] >> s) & 1) << 4
  (llama.cpp dequantize_row_q5_K: the high-bit masks u1, u2 shift by 2 per 64-element chunk)
* Q6_K (210 bytes / 256): uint8 ql[128]; uint8 qh[64]; int8 scales[16]; f16 d:
  half h = j / 128, r = j % 128, group g = r / 32, l = r % 32:
  q = ((ql[64h + l + 32(g & 1)] >> 4(g >> 1)) & 15) | ((qh[32h + l] >> 2g) & 3) << 4,
  x[j] = d * scales[8h + l/16 + 2g] * (q - 32)  (llama.cpp dequantize_row_q6_K)

Exactness: the scales are drawn so every decoded value is exact in the
output type whichever order the shader multiplies in (decision
"decode-exact-scales" in docs/spec-decisions.md), so results compare bit for bit.

:func:`block_shapes` lists the block shapes of a format over Dim tensor dimensions.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ctsgen.model.types import ComponentType

#: Quants whose decoded value (scale 1) lies in [-2, 2], per format (see :func:`encode_small_blocks`).
SMALL = 2


def _f16_bits(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float16).view(np.uint16)


def _f16_bytes(values: np.ndarray) -> np.ndarray:
    """float16 ``values`` (one per block) as the (n, 2) little-endian bytes of a block's f16 field."""
    return _f16_bits(values).view(np.uint8).reshape(len(values), 2)


@dataclass(frozen=True)
class ExactScales:
    """What :func:`encode_blocks` gives a format's ``exact`` encoder: the draws, and whether the
    output is float32 (``wide``: scales may carry a mantissa) or narrower (powers of two)."""

    rng: np.random.Generator
    n: int
    wide: bool

    def scales(self) -> np.ndarray:
        """One signed f16 scale per block in [2^-8, 2^8) (wide) or a power of two in [2^-8, 2^5]."""
        exp = self.rng.integers(-8, 8 if self.wide else 6, size=self.n)
        mant = self.rng.integers(0, 1024, size=self.n) if self.wide else np.zeros(self.n, dtype=np.int64)
        sign = self.rng.integers(0, 2, size=self.n)
        return (np.where(sign == 1, -1.0, 1.0) * (1 + mant / 1024.0) * np.exp2(exp)).astype(np.float16)


@dataclass(frozen=True)
class SmallBlocks:
    """What :func:`encode_small_blocks` gives a format's ``small`` encoder: the draws and one
    f16 sign (+-1.0) per block, as bytes."""

    rng: np.random.Generator
    n: int
    sign: np.ndarray

    def nibbles(self, lo: int, hi: int, count: int) -> np.ndarray:
        """``count`` bytes per block, each two 4-bit quants drawn in [lo, hi]."""
        q = self.rng.integers(lo, hi + 1, size=(self.n, count, 2))
        return (q[..., 0] | q[..., 1] << 4).astype(np.uint8)


def _exact_leading_d(blocks: np.ndarray, s: ExactScales) -> None:
    """Q8_0, Q4_0: the f16 d in front."""
    blocks[:, 0:2] = _f16_bytes(s.scales())


def _exact_k_quant(blocks: np.ndarray, s: ExactScales) -> None:
    """Q4_K, Q5_K: d and dmin in one binade (wide, independent mantissas), else equal powers of two."""
    d = s.scales()
    if s.wide:
        mant = s.rng.integers(0, 1024, size=s.n)
        dmin = (np.sign(s.rng.integers(0, 2, size=s.n) - 0.5) * (1 + mant / 1024.0)
                * np.exp2(np.floor(np.log2(np.abs(d.astype(np.float64)))))).astype(np.float16)
    else:
        dmin = np.abs(d)
        d = np.abs(d)
    blocks[:, 0:2] = _f16_bytes(d)
    blocks[:, 2:4] = _f16_bytes(dmin)


def _exact_mxfp4(blocks: np.ndarray, s: ExactScales) -> None:
    """MXFP4: the E8M0 exponent near 127."""
    blocks[:, 0] = 127 + s.rng.integers(-60 if s.wide else -12, (60 if s.wide else 12) + 1, size=s.n)


def _exact_q6_k(blocks: np.ndarray, s: ExactScales) -> None:
    """Q6_K: d at the end; narrow outputs also keep the int8 sub-scales in [-63, 63]."""
    blocks[:, 208:210] = _f16_bytes(s.scales())
    if not s.wide:
        blocks[:, 192:208] = s.rng.integers(-63, 64, size=(s.n, 16)).astype(np.int8).view(np.uint8)


def _small_q8_0(blocks: np.ndarray, s: SmallBlocks) -> None:
    """d = +-1, qs in [-2, 2]."""
    blocks[:, 0:2] = s.sign
    blocks[:, 2:34] = s.rng.integers(-SMALL, SMALL + 1, size=(s.n, 32)).astype(np.int8).view(np.uint8)


def _small_q4_0(blocks: np.ndarray, s: SmallBlocks) -> None:
    """d = +-1, nibbles in [6, 10] (q - 8 in [-2, 2])."""
    blocks[:, 0:2] = s.sign
    blocks[:, 2:18] = s.nibbles(8 - SMALL, 8 + SMALL, 16)


def _small_mxfp4(blocks: np.ndarray, s: SmallBlocks) -> None:
    """e = 127 (2^0), E2M1 codes of 0, +-1, +-2 only ({0, 2, 4, 10, 12}; +-0.5 is no integer)."""
    codes = np.array([0, 2, 4, 10, 12], dtype=np.uint8)  # E2M1 0, 1, 2, -1, -2
    q = codes[s.rng.integers(0, codes.size, size=(s.n, 16, 2))]
    blocks[:, 0] = 127
    blocks[:, 1:17] = q[..., 0] | q[..., 1] << 4


def _small_k_quant(blocks: np.ndarray, s: SmallBlocks, qs: int) -> None:
    """Q4_K (quants at byte ``qs`` = 16) / Q5_K (48): d = dmin = 1, every sub-block's 6-bit
    (sc, m) = (1, 2), nibbles in [0, 4] (x = q - 2), Q5_K's fifth bits 0."""
    blocks[:, 0:2] = blocks[:, 2:4] = _f16_bytes(np.ones(s.n))
    blocks[:, 4:8], blocks[:, 8:12], blocks[:, 12:16] = 1, SMALL, 1 | SMALL << 4  # (sc, m) = (1, 2)
    blocks[:, qs:qs + 128] = s.nibbles(0, 2 * SMALL, 128)


def _small_q6_k(blocks: np.ndarray, s: SmallBlocks) -> None:
    """d = +-1, int8 sub-scales 1, every 2-bit high part 2 (qh = 0xAA), low nibbles in [0, 2]
    (q - 32 in [0, 2], times d)."""
    blocks[:, 0:128] = s.nibbles(0, SMALL, 128)
    blocks[:, 128:192] = 0xAA
    blocks[:, 192:208] = 1
    blocks[:, 208:210] = s.sign


@dataclass(frozen=True)
class Format:
    name: str
    K: int            # elements per block
    block_bytes: int  # size of the pointee (std430 struct) in bytes
    struct: str       # GLSL members of the buffer_reference block
    align: int        # buffer_reference_align
    body: str         # GLSL: computes `float r` from `b` (the block) and `e` (element in block)
    helpers: str = ""  # GLSL functions the body calls (taking `BlockRef b`)
    #: writes the scale fields of random blocks so every decoded value is exact (encode_blocks)
    exact: Callable[[np.ndarray, ExactScales], None] | None = None
    #: writes whole blocks whose decoded values are small integers (encode_small_blocks)
    small: Callable[[np.ndarray, SmallBlocks], None] | None = None

    def glsl_for(self, ref: str) -> tuple[str, str]:
        """(helpers, body) for a pointee type named ``ref``: ``BlockRef`` renamed, and each helper
        function suffixed with ``_<ref>`` (GLSL does not overload on buffer_reference types, so
        two formats' helpers of one name could not share a shader otherwise)."""
        helpers, body = self.helpers, self.body
        for name in re.findall(r"\b(\w+)\(const in BlockRef\b", self.helpers):
            helpers, body = (re.sub(rf"\b{name}\(", f"{name}_{ref}(", x) for x in (helpers, body))
        return helpers.replace("BlockRef", ref), body.replace("BlockRef", ref)

    @property
    def slang_struct(self) -> str:
        """The block's members in Slang (``half`` for ``float16_t``; the same offsets: every member's
        alignment is its size, so std430 and Slang's pointer layout agree)."""
        return _to_slang(self.struct)

    def slang_for(self, ref: str) -> tuple[str, str]:
        """:meth:`glsl_for` in Slang (the ``slang`` route): the block passed as a pointer (``ref* b``,
        ``b->``), ``asfloat`` for ``uintBitsToFloat``, ``half`` for ``float16_t``; the rest is the
        same C-like text in both languages."""
        helpers, body = self.glsl_for(ref)
        return tuple(_to_slang(re.sub(rf"\bconst in {ref} b\b", f"{ref}* b", x)) for x in (helpers, body))


def _to_slang(glsl: str) -> str:
    return re.sub(r"\bb\.", "b->", glsl).replace("uintBitsToFloat(", "asfloat(").replace("float16_t", "half")


Q8_0 = Format("q8_0", 32, 34, "float16_t d; uint16_t qs[16];", 2, """
    uint byte = (uint(b.qs[e >> 1]) >> (8u * (e & 1u))) & 0xFFu;
    float r = float(b.d) * float(int(byte << 24) >> 24);""",
    exact=_exact_leading_d, small=_small_q8_0)
Q4_0 = Format("q4_0", 32, 18, "float16_t d; uint16_t qs[8];", 2, """
    uint j = e & 15u;
    uint byte = (uint(b.qs[j >> 1]) >> (8u * (j & 1u))) & 0xFFu;
    uint q = (byte >> (4u * (e >> 4))) & 15u;
    float r = float(b.d) * float(int(q) - 8);""",
    exact=_exact_leading_d, small=_small_q4_0)

#: GLSL shared by Q4_K and Q5_K: get_scale_min_k4 for sub-block s, then d*sc*q - dmin*m
_K4_SCALE_MIN = """
    uint sc, m;
    if (s < 4u) {
        sc = scaleByte(b, s) & 63u;
        m = scaleByte(b, s + 4u) & 63u;
    } else {
        sc = (scaleByte(b, s + 4u) & 15u) | ((scaleByte(b, s - 4u) >> 6) << 4);
        m = (scaleByte(b, s + 4u) >> 4) | ((scaleByte(b, s) >> 6) << 4);
    }
    float r = float(b.d) * float(sc) * float(q) - float(b.dmin) * float(m);"""
_SCALE_BYTE = "uint scaleByte(const in BlockRef b, uint i) { return (uint(b.scales[i >> 1]) >> (8u * (i & 1u))) & 0xFFu; }"

Q4_K = Format("q4_k", 256, 144, "float16_t d; float16_t dmin; uint16_t scales[6]; uint16_t qs[64];", 2, """
    uint c = e >> 6, l = e & 31u, high = (e >> 5) & 1u, s = 2u * c + high;
    uint qi = 32u * c + l;
    uint byte = (uint(b.qs[qi >> 1]) >> (8u * (qi & 1u))) & 0xFFu;
    uint q = (byte >> (4u * high)) & 15u;
""" + _K4_SCALE_MIN,
               helpers=_SCALE_BYTE, exact=_exact_k_quant, small=functools.partial(_small_k_quant, qs=16))
MXFP4 = Format("mxfp4", 32, 17, "uint8_t e; uint8_t qs[16];", 1, """
    uint q = (uint(b.qs[e & 15u]) >> (4u * (e >> 4))) & 15u;
    // E2M1: sign bit 3, exponent bits 2..1, mantissa bit 0 (subnormal at exponent 0)
    uint ex = (q >> 1) & 3u;
    float mag = ex == 0u ? 0.5 * float(q & 1u) : (1.0 + 0.5 * float(q & 1u)) * float(1u << (ex - 1u));
    float r = ((q & 8u) != 0u ? -mag : mag) * uintBitsToFloat(uint(b.e) << 23);  // 2^(e-127), e in [1, 254]""",
    exact=_exact_mxfp4, small=_small_mxfp4)

Q5_K = Format("q5_k", 256, 176,
               "float16_t d; float16_t dmin; uint16_t scales[6]; uint16_t qh[16]; uint16_t qs[64];", 2, """
    uint c = e >> 6, l = e & 31u, high = (e >> 5) & 1u, s = 2u * c + high;
    uint qi = 32u * c + l;
    uint byte = (uint(b.qs[qi >> 1]) >> (8u * (qi & 1u))) & 0xFFu;
    uint hbyte = (uint(b.qh[l >> 1]) >> (8u * (l & 1u))) & 0xFFu;
    uint q = ((byte >> (4u * high)) & 15u) | (((hbyte >> s) & 1u) << 4);
""" + _K4_SCALE_MIN,
               helpers=_SCALE_BYTE, exact=_exact_k_quant, small=functools.partial(_small_k_quant, qs=48))
Q6_K = Format("q6_k", 256, 210, "uint16_t ql[64]; uint16_t qh[32]; uint16_t scales[8]; float16_t d;", 2, """
    uint h = e >> 7, g = (e >> 5) & 3u, l = e & 31u;
    uint li = 64u * h + l + 32u * (g & 1u), hi = 32u * h + l, si = 8u * h + (l >> 4) + 2u * g;
    uint lbyte = (uint(b.ql[li >> 1]) >> (8u * (li & 1u))) & 0xFFu;
    uint hbyte = (uint(b.qh[hi >> 1]) >> (8u * (hi & 1u))) & 0xFFu;
    uint sbyte = (uint(b.scales[si >> 1]) >> (8u * (si & 1u))) & 0xFFu;
    uint q = ((lbyte >> (4u * (g >> 1))) & 15u) | (((hbyte >> (2u * g)) & 3u) << 4);
    float r = float(b.d) * float(int(sbyte << 24) >> 24) * float(int(q) - 32);""",
    exact=_exact_q6_k, small=_small_q6_k)

FORMATS = {f.name: f for f in (Q8_0, Q4_0, Q4_K, MXFP4, Q5_K, Q6_K)}


def encode_blocks(fmt: Format, n: int, seed: int, component: ComponentType) -> np.ndarray:
    """``n`` random blocks of ``fmt`` (uint8, n x block_bytes) whose decoded values are
    exact in ``component`` (decision "decode-exact-scales").

    float32 output: Q8_0/Q4_0/Q6_K scales are any f16 in [2^-8, 2^8) (Q6_K: |d * sc * (q-32)|
    needs at most 11 + 7 + 5 bits); Q4_K's and Q5_K's d and dmin share a binade, so
    d*sc*q - dmin*m is an integer < 2^22 times one power of two.
    float16 output: scales are powers of two (Q4_K, Q5_K: d == dmin; sc*q - m <= 63*31), so
    results have at most 11 significant bits; Q6_K's int8 sub-scales are drawn in [-63, 63]
    so |sc * (q - 32)| <= 2016. MXFP4 scales are powers of two by definition.
    """
    if fmt.exact is None:
        raise ValueError(f"format {fmt.name!r} has no exact-scale encoder")
    rng = np.random.Generator(np.random.PCG64(seed))
    blocks = rng.integers(0, 256, size=(n, fmt.block_bytes), dtype=np.uint8)
    fmt.exact(blocks, ExactScales(rng, n, component is ComponentType.float32))
    return blocks


def encode_small_blocks(fmt: Format, n: int, seed: int) -> np.ndarray:
    """``n`` random blocks of ``fmt`` (uint8, n x block_bytes) whose every decoded value is an
    integer in [-SMALL, SMALL] (decision "cm2-program-decode-small"): the scales are +-1 (the
    quants carry the sign where the format has none), the quants small; each format's ``small``
    encoder says how."""
    if fmt.small is None:
        raise ValueError(f"format {fmt.name!r} has no small-block encoder")
    rng = np.random.Generator(np.random.PCG64(seed))
    blocks = np.zeros((n, fmt.block_bytes), dtype=np.uint8)
    sign = _f16_bytes(np.where(rng.integers(0, 2, size=n) == 1, -1.0, 1.0))  # drawn first for every format
    fmt.small(blocks, SmallBlocks(rng, n, sign))
    return blocks


def _scale_min_k4(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """get_scale_min_k4 for all 8 sub-blocks: (sc, m), each n x 8."""
    q = scales.astype(np.int64)
    sc = np.empty((q.shape[0], 8), dtype=np.int64)
    m = np.empty_like(sc)
    sc[:, :4] = q[:, 0:4] & 63
    m[:, :4] = q[:, 4:8] & 63
    sc[:, 4:] = (q[:, 8:12] & 0xF) | ((q[:, 0:4] >> 6) << 4)
    m[:, 4:] = (q[:, 8:12] >> 4) | ((q[:, 4:8] >> 6) << 4)
    return sc, m


#: Q4_K / Q5_K: the sub-block of each of the 256 elements (j // 32)
_SUB_BLOCK_OF_ELEMENT = np.arange(256) // 32
#: Q6_K: the shift of qh for each group g of 32 elements within a half (2g), shaped to broadcast over (h, g, l)
_Q6_K_HIGH_SHIFT = (2 * np.arange(4)).reshape(1, 1, 4, 1)


def dequantize(fmt: Format, blocks: np.ndarray) -> np.ndarray:
    """Every element of every block (n x K, float64), from the format definition above."""
    n = blocks.shape[0]
    if fmt is MXFP4:
        qs = blocks[:, 1:17]
        codes = np.concatenate([qs & 0xF, qs >> 4], axis=1)
        fp4 = codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
        return fp4 * np.exp2(blocks[:, :1].astype(np.float64) - 127)
    d = blocks[:, 0:2].copy().view(np.float16).astype(np.float64)  # n x 1
    if fmt is Q8_0:
        return d * blocks[:, 2:34].view(np.int8).astype(np.float64)
    if fmt is Q4_0:
        qs = blocks[:, 2:18].astype(np.int64)
        return d * (np.concatenate([qs & 0xF, qs >> 4], axis=1) - 8)
    if fmt in (Q4_K, Q5_K):
        dmin = blocks[:, 2:4].copy().view(np.float16).astype(np.float64)
        sc, m = _scale_min_k4(blocks[:, 4:16])
        qs = blocks[:, 16:144].astype(np.int64).reshape(n, 4, 32) if fmt is Q4_K \
            else blocks[:, 48:176].astype(np.int64).reshape(n, 4, 32)
        q = np.stack([qs & 0xF, qs >> 4], axis=2).reshape(n, 256)  # chunk, (low, high), l
        if fmt is Q5_K:  # sub-block s = j // 32 takes bit s of qh[j % 32]
            qh = np.tile(blocks[:, 16:48].astype(np.int64), (1, 8))
            q = q | ((qh >> _SUB_BLOCK_OF_ELEMENT) & 1) << 4
        return np.repeat(d * sc, 32, axis=1) * q - np.repeat(dmin * m, 32, axis=1)  # per sub-block, then per element
    if fmt is Q6_K:
        # element j = 128 h + 32 g + l: ql[64h + 32(g & 1) + l] >> 4(g >> 1), qh[32h + l] >> 2g,
        # scales[8h + 2g + l // 16] = scales[j // 16]
        ql = blocks[:, 0:128].astype(np.int64).reshape(n, 2, 1, 2, 32)  # h, (g >> 1), (g & 1), l
        low = np.concatenate([ql & 15, ql >> 4], axis=2).reshape(n, 2, 4, 32)
        qh = blocks[:, 128:192].astype(np.int64).reshape(n, 2, 1, 32)
        q = (low | ((qh >> _Q6_K_HIGH_SHIFT) & 3) << 4).reshape(n, 256)
        d6 = blocks[:, 208:210].copy().view(np.float16).astype(np.float64)
        return np.repeat(d6 * blocks[:, 192:208].view(np.int8), 16, axis=1) * (q - 32)  # per 16 elements, then each
    raise ValueError(f"unknown format {fmt.name!r}")


def block_shapes(dim: int, K: int) -> list[tuple[int, ...]]:
    """Block shapes of ``dim`` sides with product K, outer sides in {1, 2, 4}, flattest first."""
    return list(_block_shapes(dim, K))


@functools.cache
def _block_shapes(dim: int, K: int) -> tuple[tuple[int, ...], ...]:
    """:func:`block_shapes`, computed once per (dim, K): a decode case's draw asks for them every time."""
    shapes = [()]
    for _ in range(dim - 1):
        shapes = [s + (o,) for s in shapes for o in (1, 2, 4)]
    out = [s + (K // math.prod(s),) for s in shapes if K % math.prod(s) == 0]
    return tuple(sorted(out, key=lambda s: (math.prod(s[:-1]), s)))
