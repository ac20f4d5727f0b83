"""The block-format oracle against llama.cpp's own Python implementation (`gguf.quants`, a
test-only dependency: pip install -e '.[test]'). Independent of ctsgen's code: gguf decodes
from its own reading of ggml's block layouts."""

from __future__ import annotations

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q

from ctsgen.ops.decode import FORMATS, SMALL, dequantize, encode_blocks, encode_small_blocks
from ctsgen.model.types import ComponentType

GGUF_TYPE = {"q8_0": Q.Q8_0, "q4_0": Q.Q4_0, "q4_k": Q.Q4_K, "mxfp4": Q.MXFP4, "q5_k": Q.Q5_K, "q6_k": Q.Q6_K}


def test_every_format_has_a_gguf_reference() -> None:
    assert set(GGUF_TYPE) == set(FORMATS)
    for name, q in GGUF_TYPE.items():
        assert gguf.GGML_QUANT_SIZES[q] == (FORMATS[name].K, FORMATS[name].block_bytes)


@pytest.mark.parametrize("name", sorted(GGUF_TYPE))
@pytest.mark.parametrize("comp", [ComponentType.float16, ComponentType.float32])
def test_encoded_blocks_decode_as_gguf_decodes_them(name: str, comp: ComponentType) -> None:
    """The strategy's blocks (exact scales) decode to gguf's values, element for element."""
    fmt = FORMATS[name]
    blocks = encode_blocks(fmt, 64, 11, comp)
    ours = dequantize(fmt, blocks)
    ref = gguf.quants.dequantize(blocks.ravel(), GGUF_TYPE[name]).astype(np.float64).reshape(ours.shape)
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize("name", sorted(GGUF_TYPE))
def test_small_blocks_decode_to_small_integers_in_gguf(name: str) -> None:
    """cm2-program's blocks (decision cm2-program-decode-small): gguf decodes them to the integers
    in [-2, 2], each reached, and to our values element for element."""
    fmt = FORMATS[name]
    blocks = encode_small_blocks(fmt, 64, 13)
    ref = gguf.quants.dequantize(blocks.ravel(), GGUF_TYPE[name]).astype(np.float64)
    assert set(np.unique(ref)) == set(range(-SMALL, SMALL + 1))
    np.testing.assert_array_equal(dequantize(fmt, blocks).ravel(), ref.ravel())


@pytest.mark.parametrize("name", sorted(GGUF_TYPE))
def test_random_bytes_decode_as_gguf_decodes_them(name: str) -> None:
    """Arbitrary bytes (any scale, any quant; finite scales only): gguf rounds each step to float32,
    so the values agree to float32 rounding, and exactly where gguf's steps are exact."""
    fmt = FORMATS[name]
    rng = np.random.default_rng(5)
    blocks = rng.integers(0, 256, size=(64, fmt.block_bytes), dtype=np.uint8)
    scale_at = {"q6_k": [208], "mxfp4": []}.get(name, [0, 2] if name in ("q4_k", "q5_k") else [0])
    for o in scale_at:  # keep f16 scales finite: exponent field below 31
        blocks[:, o + 1] &= 0x7B
    if name == "mxfp4":
        blocks[:, 0] = rng.integers(100, 150, size=64)
    ours = dequantize(fmt, blocks)
    ref = gguf.quants.dequantize(blocks.ravel(), GGUF_TYPE[name]).astype(np.float64).reshape(ours.shape)
    np.testing.assert_allclose(ours, ref, rtol=2**-22, atol=2**-40)


def test_mxfp4_code_0b1000_is_minus_zero_here_and_plus_zero_in_llama_cpp() -> None:
    """The sign-of-zero disagreement that decision "signed-zero" settles: OCP MX E2M1 (and
    ml_dtypes, our oracle) decode 0b1000 as -0, llama.cpp's kvalues table as +0."""
    block = np.array([[127] + [0x88] * 16], dtype=np.uint8)
    ours = dequantize(FORMATS["mxfp4"], block)[0]
    ref = gguf.quants.dequantize(block.ravel(), Q.MXFP4).astype(np.float64)
    assert (ours == 0).all() and (ref == 0).all()
    assert np.signbit(ours).all() and not np.signbit(ref).any()
