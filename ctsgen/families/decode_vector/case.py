"""The decode-vector family's case model: a decode load with a DecodeFunc and a DecodeVectorFunc.

A :class:`DecodeVectorVariant` is a decode-family variant (layout type, matrix
type, decode function, block shape) plus V, the component count of the vector
decode function's result (SPV_NV_cooperative_matrix_decode_vector: 2, 4 or 8).
Its shader defines both functions; the compiled module is rewritten by
:func:`ctsgen.toolchain.spirv_patch.add_decode_vector` and validated by the
glslang library's SPIRV-Tools (the family's validator, :mod:`.validator`).

A :class:`DecodeVectorCase` is a decode-family case (layout, data seed) whose
layout has blockSize[LDim-1] % V == 0 (the extension's requirement whenever
DecodeVectorFunc may be invoked) plus the reference backend's call pattern,
carried in the last parameter word (the shader does not read it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.device.profile import Requirements
from ctsgen.ops.decode_case import N_BUFFERS, DecodeCase, DecodeVariant
from ctsgen.ops.decode_load import BC_MUL, CIB_MUL
from ctsgen.families.decode_vector.oracle import CALL_PATTERNS, Decoder, reference_load
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.ops.tensor_layout import (
    FAMILY_WORDS, FLAG_SET_BLOCK_SIZE, FLAG_SET_CLAMP_VALUE, FLAG_SET_STRIDE, FLAG_SLICE, W_BLOCK_SIZE,
    W_CLAMP_VALUE, W_DIMENSION, W_FILL, W_FLAGS, W_OFFSET, W_SPAN, W_STRIDE, decode_layout,
)
from ctsgen.templates import render
from ctsgen.toolchain.spirv_patch import add_decode_vector

FAMILY_NAME = "decode-vector"
VS = (2, 4, 8)
EXTENSION = "VK_NV_cooperative_matrix_decode_vector"
#: V = 8 needs a vector longer than 4: GL_EXT_long_vector -> SPV_EXT_long_vector, VK_EXT_shader_long_vector.
LONG_VECTOR = ("VK_EXT_shader_long_vector", "longVector")
VECTOR_FUNCTION = "decodeVectorFunc"
W_CALL_PATTERN = FAMILY_WORDS  # after the tensor-layout words; the shader ignores it
WORDS = FAMILY_WORDS + 1
VECTOR_TYPES = {"float16": "f16vec", "float32": "vec", "uint32": "uvec", "sint32": "ivec"}


@dataclass(frozen=True)
class DecodeVectorVariant(DecodeVariant):
    """A decode variant whose load also names a DecodeVectorFunc returning V components."""

    V: int = 2
    #: no Slang source: the module is glslang's rewritten (docs/spec-decisions.md "Which families Slang
    #: expresses"), so the slang route refuses the family rather than compile decode's source without the
    #: vector function
    slang: ClassVar[None] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.V not in VS:
            raise ValueError(f"V must be one of {VS} (SPV_NV_cooperative_matrix_decode_vector), got {self.V}")
        if self.blockShape is not None and self.blockShape[-1] % self.V:
            raise ValueError(f"blockSize[LDim-1] = {self.blockShape[-1]} must be a multiple of V = {self.V}")
        if self.matrix.component.name not in VECTOR_TYPES:
            raise ValueError(f"no GLSL vector type for {self.matrix.component.name}")

    @property
    def id(self) -> str:
        return "decode_vector." + super().id.removeprefix("decode.").replace(".dim", f".v{self.V}.dim", 1)

    def decoder_model(self) -> Decoder:
        return Decoder(self.matrix.component, self.format, self.probe_words, self.blockShape)

    def requirements(self) -> Requirements:
        r = super().requirements()
        extensions, features = {EXTENSION}, set()
        if self.V > 4:
            extensions.add(LONG_VECTOR[0])
            features.add(LONG_VECTOR[1])
        return Requirements(tuple(sorted(set(r.extensions) | extensions)), tuple(sorted(set(r.features) | features)),
                            r.matrices)

    @property
    def vector_type(self) -> str:
        """The GLSL type of the vector decode function's result: V components of the element type."""
        if self.V > 4:
            return f"vector<{self.matrix.component.glsl}, {self.V}>"
        return f"{VECTOR_TYPES[self.matrix.component.name]}{self.V}"

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        m = self.matrix
        return render(Path(__file__).parent, "shader.comp.j2", v=self, m=m, fmt=self.format,
                      baked=None if baked is None else [int(w) for w in baked],
                      T=m.component.glsl, VT=self.vector_type,
                      component=m.component.name, words=N_BUFFERS + WORDS, H=N_BUFFERS,
                      CALL_PATTERN_WORD=W_CALL_PATTERN, BC_MUL=BC_MUL, CIB_MUL=CIB_MUL,
                      W=dict(FLAGS=W_FLAGS, CLAMP_VALUE=W_CLAMP_VALUE, FILL=W_FILL, BLOCK_SIZE=W_BLOCK_SIZE,
                             DIMENSION=W_DIMENSION, STRIDE=W_STRIDE, OFFSET=W_OFFSET, SPAN=W_SPAN),
                      F=dict(SET_BLOCK_SIZE=FLAG_SET_BLOCK_SIZE, SET_STRIDE=FLAG_SET_STRIDE,
                             SLICE=FLAG_SLICE, SET_CLAMP_VALUE=FLAG_SET_CLAMP_VALUE))

    def spirv(self, compile_fn: Callable[[str, str], bytes], baked: Sequence[int] | None = None) -> bytes:
        """The glslang-compiled shader (``baked``: a repro's constants) with DecodeVectorFunc
        added to its load."""
        return add_decode_vector(compile_fn(self.glsl(baked), f"{self.id}.comp"), VECTOR_FUNCTION)

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "V": self.V}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> DecodeVectorVariant:
        base = DecodeVariant.from_json(o)
        return cls(base.Dim, base.clampMode, base.matrix, base.decoder, base.blockShape, int(o["V"]))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: each case's layout from its words, decoded in the call
        pattern its last word names (0 scalar, 1 vector, 2 mixed)."""
        src, dst = buffers
        m = self.matrix
        d = self.decoder_model()
        for words, (in_off, out_off) in zip(params, offsets):
            t = decode_layout(words, self.Dim, self.clampMode)
            pattern = CALL_PATTERNS[int(words[W_CALL_PATTERN])]
            data = src[in_off:in_off + self.input_words(t)]
            dst[out_off:out_off + m.elements] = reference_load(t, m.rows, m.cols, data, d, self.V, pattern).ravel()


@dataclass(frozen=True)
class DecodeVectorCase(DecodeCase):
    """A decode case of a :class:`DecodeVectorVariant` and the call pattern the reference
    backend uses for it (the expected output is the same for every pattern)."""

    family: ClassVar[str] = FAMILY_NAME

    shader: DecodeVectorVariant
    call_pattern: str = "vector"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.call_pattern not in CALL_PATTERNS:
            raise ValueError(f"call_pattern must be one of {CALL_PATTERNS}, got {self.call_pattern!r}")
        bs = self.layout_case.blockSize
        if bs is None or bs[-1] % self.shader.V:
            raise ValueError(f"blockSize[LDim-1] must be a multiple of V = {self.shader.V} "
                             f"(SPV_NV_cooperative_matrix_decode_vector), got blockSize {bs}")

    def params(self) -> np.ndarray:
        return np.append(super().params(), np.uint32(CALL_PATTERNS.index(self.call_pattern)))

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "family": FAMILY_NAME, "call_pattern": self.call_pattern}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> DecodeVectorCase:
        return cls(DecodeVectorVariant.from_json(o["variant"]), TensorLayoutCase.from_json(o["layout"]),
                   int(o["seed"]), o["call_pattern"])

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "V": self.shader.V, "call_pattern": self.call_pattern}

