"""The decode case model: OpCooperativeMatrixLoadTensorNV with a DecodeFunc.

It lives below the families because decode-vector subclasses it and cm2-program's decode nodes
are decode cases; its JSON (tagged ``"family": "decode"``) is the pack format and its name hashes it.

A :class:`DecodeVariant` is the compile-time signature: the tensor layout
type (Dim, clampMode), the matrix type, the decode function (an addressing
probe whose pointee is ``probe_words`` uint words, or a block format of
:mod:`.formats`) and, for a format, the block shape the decode function
linearises coordInBlock over. A :class:`DecodeCase` holds a tensor-layout
case (the run-time layout, reused from that family; a format's case sets
blockSize to the block shape) and the seed of the tensor's data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops.decode import FORMATS, Format, encode_blocks
from ctsgen.ops.decode_load import BC_MUL, CIB_MUL, decoded_at
from ctsgen.ops import decode_load as decode_load_ops
from ctsgen.ops.tensor_layout_case import LayoutVariant, TensorLayoutCase
from ctsgen.ops.tensor_layout import (
    FAMILY_WORDS, FLAG_SET_BLOCK_SIZE, FLAG_SET_CLAMP_VALUE, FLAG_SET_STRIDE, FLAG_SLICE, W_BLOCK_SIZE,
    W_CLAMP_VALUE, W_DIMENSION, W_FILL, W_FLAGS, W_OFFSET, W_SPAN, W_STRIDE, Operation, decode_layout,
)
from ctsgen.model.tensor import ClampMode, TensorLayout
from ctsgen.model.types import MatrixType
from ctsgen.oracle.addressing import TensorAddresses
from ctsgen.oracle import addressing
from ctsgen.oracle.values import from_bits, sentinel_bits
from ctsgen.templates import SHARED_DIR, render

FAMILY_NAME = "decode"
N_BUFFERS = 2  # binding 1: the encoded tensor (uint words), binding 2: the matrix
PROBES = ("probe1", "probe3")


@dataclass(frozen=True)
class DecodeVariant:
    """Compile-time signature: layout type, matrix type, decode function (and its block shape)."""

    Dim: int
    clampMode: ClampMode
    matrix: MatrixType
    decoder: str                             # "probe1", "probe3" or a format name
    blockShape: tuple[int, ...] | None = None  # formats only

    def __post_init__(self) -> None:
        if self.decoder not in PROBES and self.decoder not in FORMATS:
            raise ValueError(f"unknown decoder {self.decoder!r}; use one of {PROBES + tuple(FORMATS)}")
        if self.format is not None and (self.blockShape is None or len(self.blockShape) != self.Dim
                                        or math.prod(self.blockShape) != self.format.K):
            raise ValueError(f"{self.decoder} needs a block shape of {self.Dim} sides whose product is "
                             f"{self.format.K}, got {self.blockShape}")

    @property
    def format(self) -> Format | None:
        return FORMATS.get(self.decoder)

    @property
    def moves_clamp_values(self) -> bool:
        """Whether a load may return a float clampValue, moved bit for bit among computed
        (decoded) elements: Constant clamping of a float matrix."""
        return self.clampMode is ClampMode.Constant and self.matrix.component.is_float

    @property
    def probe_words(self) -> int:
        return int(self.decoder[5:]) if self.decoder in PROBES else 0

    def layout_variant(self) -> LayoutVariant:
        return LayoutVariant(Operation.load, self.Dim, self.clampMode, self.matrix)

    @property
    def id(self) -> str:
        m = self.matrix
        block = "" if self.blockShape is None else ".block" + "x".join(map(str, self.blockShape))
        return (f"decode.{self.decoder}.dim{self.Dim}{block}.clamp_{self.clampMode.snake}."
                f"{m.label}")

    @property
    def local_size_x(self) -> int:
        return self.matrix.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        return (BufferSpec(1, "input", "uint32"), BufferSpec(2, "output", self.matrix.component.dtype.name))

    def requirements(self) -> Requirements:
        r = self.layout_variant().requirements()
        feats = tuple(sorted(set(r.features) | {"cooperativeMatrixBlockLoads"}))
        return Requirements(r.extensions, feats, r.matrices)

    def _template_context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        """What the GLSL and the Slang template both read: the variant, its words and flags."""
        return dict(v=self, m=self.matrix, fmt=self.format, baked=None if baked is None else [int(w) for w in baked],
                    component=self.matrix.component.name, words=N_BUFFERS + FAMILY_WORDS, H=N_BUFFERS,
                    BC_MUL=BC_MUL, CIB_MUL=CIB_MUL,
                    W=dict(FLAGS=W_FLAGS, CLAMP_VALUE=W_CLAMP_VALUE, FILL=W_FILL, BLOCK_SIZE=W_BLOCK_SIZE,
                           DIMENSION=W_DIMENSION, STRIDE=W_STRIDE, OFFSET=W_OFFSET, SPAN=W_SPAN),
                    F=dict(SET_BLOCK_SIZE=FLAG_SET_BLOCK_SIZE, SET_STRIDE=FLAG_SET_STRIDE,
                           SLICE=FLAG_SLICE, SET_CLAMP_VALUE=FLAG_SET_CLAMP_VALUE))

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        return render(SHARED_DIR, "decode.comp.j2", T=self.matrix.component.glsl, **self._template_context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route, docs/spec-decisions.md "Which families Slang
        expresses"): the layout as tensor-layout's, ``CoopMat.Load`` of a tensor layout and a decode
        function (OpCooperativeMatrixLoadTensorNV, DecodeFunc), the format's body as
        :meth:`Format.slang_for` writes it."""
        sliced = [w for i in range(self.Dim) for w in (W_OFFSET + i, W_SPAN + i)]  # Slice's operands, in order
        return render(SHARED_DIR, "decode.slang.j2", T=self.matrix.component.slang, sliced=sliced,
                      **self._template_context(baked))

    def to_json(self) -> dict[str, Any]:
        return {"Dim": self.Dim, "clampMode": self.clampMode.name, "matrix": self.matrix.to_json(),
                "decoder": self.decoder, "blockShape": None if self.blockShape is None else list(self.blockShape)}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> DecodeVariant:
        return cls(int(o["Dim"]), ClampMode[o["clampMode"]], MatrixType.from_json(o["matrix"]), o["decoder"],
                   None if o.get("blockShape") is None else tuple(int(x) for x in o["blockShape"]))

    def input_words(self, t: TensorLayout) -> int:
        """uint32 words of encoded tensor the layout can address."""
        if self.format is None:
            return t.extent() * self.probe_words
        return -(-t.extent() * self.format.block_bytes // 4)

    def expected(self, t: TensorLayout, words: np.ndarray) -> np.ndarray:
        m = self.matrix
        return decode_load_ops.expected_decode_load(t, m.rows, m.cols, words, m.component, self.format,
                                                    self.probe_words, self.blockShape)

    def decoded_at(self, a: TensorAddresses, t: TensorLayout, words: np.ndarray) -> np.ndarray:
        """This decode function's values at the addresses ``a`` (``oracle.decoded_at``)."""
        return decoded_at(a, t, words, self.matrix.component, self.format, self.probe_words, self.blockShape)

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: replay each case's layout from its words and decode on host buffers."""
        src, dst = buffers
        m = self.matrix
        for words, (in_off, out_off) in zip(params, offsets):
            t = decode_layout(words, self.Dim, self.clampMode)
            data = src[in_off:in_off + self.input_words(t)]
            dst[out_off:out_off + m.elements] = self.expected(t, data).ravel()


@dataclass(frozen=True)
class DecodeCase:
    """One decode load: the layout (a tensor-layout case of this variant's layout part)
    and the seed of the encoded tensor's random bytes."""

    family: ClassVar[str] = FAMILY_NAME

    shader: DecodeVariant
    layout_case: TensorLayoutCase
    seed: int = 0

    def __post_init__(self) -> None:
        if self.layout_case.shader != self.shader.layout_variant():
            raise ValueError("the layout case's variant must be the decode variant's layout part")
        if self.shader.format is not None and self.layout_case.blockSize != self.shader.blockShape:
            raise ValueError(f"a {self.shader.decoder} load sets blockSize to the block shape "
                             f"{self.shader.blockShape}, got {self.layout_case.blockSize}")

    def variant(self) -> DecodeVariant:
        return self.shader

    def layout(self) -> TensorLayout:
        return self.layout_case.layout()

    def params(self) -> np.ndarray:
        return self.layout_case.params()

    def input(self) -> np.ndarray:
        """The encoded tensor as uint32 words: random words for a probe, random blocks
        with exact-by-construction scales for a format."""
        t, v = self.layout(), self.shader
        if v.format is None:
            rng = np.random.Generator(np.random.PCG64(self.seed))
            return rng.integers(0, 2**32, size=v.input_words(t), dtype=np.uint32)
        raw = encode_blocks(v.format, t.extent(), self.seed, v.matrix.component).ravel()
        padded = np.zeros(4 * v.input_words(t), dtype=np.uint8)
        padded[:raw.size] = raw
        return padded.view(np.uint32)

    def data(self) -> CaseData:
        m = self.shader.matrix
        comp = m.component
        initial = [self.input(), np.full(m.elements, from_bits(sentinel_bits(comp), comp), dtype=comp.dtype)]
        params = self.params()
        return CaseData(params, initial, expected_on(self, params, initial),
                        tolerance_on(self, params, initial) if self.shader.moves_clamp_values else None)

    def compare_rule(self) -> CompareRule:
        """A decoded element bit for bit, except the sign of a zero and a flushed subnormal
        (decisions "signed-zero", "flush-to-zero"): the decode function multiplies (a negative
        Q8_0 / Q4_0 scale times a zero quant is -0 in IEEE 754, MXFP4 code 0b1000 is -0 in OCP
        MX but +0 in llama.cpp's table), and the shader does not declare
        SignedZeroInfNanPreserve, so Vulkan lets the device drop the sign. A Constant-clamped
        element is moved, not computed: every bit, the sign of a zero clampValue included
        (decision "data-movement-bits"); a float matrix under Constant clamping is therefore
        judged by the tolerance rule, its decoded elements with tolerance 0 (by value) and its
        clamped ones with a NaN tolerance (bit for bit), as :func:`tolerance_on` writes them."""
        if self.shader.moves_clamp_values:
            return CompareRule("tolerance")
        return CompareRule("bitwise", signed_zero=False)

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(), "layout": self.layout_case.to_json(),
                "seed": self.seed}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> DecodeCase:
        return cls(DecodeVariant.from_json(o["variant"]), TensorLayoutCase.from_json(o["layout"]), int(o["seed"]))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """Output element -> matrix (row, col), block index, blockCoord and coordInBlock."""
        m = self.shader.matrix
        if buffer != 1 or element >= m.elements:
            return {}
        row, col = divmod(element, m.cols)
        a = addressing.tensor_addresses(self.layout(), m.rows, m.cols, is_store=False)
        return {"row": row, "col": col, "clamped": not bool(a.valid[row, col]),
                "blockIndex": int(a.index[row, col]),
                "blockCoord": [int(c) for c in a.blockCoord[:, row, col]],
                "coordInBlock": [int(c) for c in a.coordInBlock[:, row, col]]}

    def describe(self) -> dict[str, Any]:
        return {"layout": self.layout_case.describe(), "decoder": self.shader.decoder,
                "blockShape": None if self.shader.blockShape is None else list(self.shader.blockShape)}


def expected_on(case: DecodeCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """The decode load's oracle on given inputs (FamilySpec.expectation; decode-vector cases too):
    the layout replayed from the words as the shader runs its instructions, then
    ``expected_decode_load`` over the encoded words the replayed layout can address
    (SPV_NV_cooperative_matrix2, DecodeFunc), as the reference semantics read them."""
    v = case.shader
    t = decode_layout(params, v.Dim, v.clampMode)
    return [None, v.expected(t, initial[0][:v.input_words(t)]).ravel()]


def tolerance_on(case: DecodeCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """Per-element tolerance of a Constant-clamped float decode load on given inputs
    (FamilySpec.tolerance): 0 where the element is decoded (compared by value), NaN where
    it is clampValue (out of bounds: compared bit for bit, execute.judge.judge_buffer)."""
    v = case.shader
    t = decode_layout(params, v.Dim, v.clampMode)
    a = addressing.tensor_addresses(t, v.matrix.rows, v.matrix.cols, is_store=False)
    return [None, np.where(a.valid, 0.0, np.nan).ravel()]
