"""The coopvec-elementwise family's case model: element-wise instructions on cooperative vectors.

An :class:`ElementwiseVariant` is the compile-time signature: the operation
(ops.py), the vectors' component type and result type (they differ only for
a conversion), the component count N, and ``ieee``: the shader declares the
SignedZeroInfNanPreserve and RoundingModeRTE execution modes for its float
width, so NaN, infinities and overflow have defined results (see
docs/spec-decisions.md "coopvec-elementwise-rules").

An :class:`ElementwiseCase` adds the run-time operands (parameter words):
``loadOffset`` and ``storeOffset`` (bytes, multiples of 16, VUID-RuntimeSpirv-
OpCooperativeVectorLoadNV-10099) added to every load and store, the bits of
OpVectorTimesScalar's scalar, and a data seed.

Every workgroup of LOCAL invocations (one full subgroup) runs one case;
invocation i loads operand j at ``loadOffset + (j * LOCAL + i) * in_stride``
bytes of binding 1 and stores its result at ``storeOffset + i * out_stride``
of binding 2, strides being N components rounded up to 16 bytes. Binding 2
starts poisoned: components past N must keep the poison (a store writes N
components only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops import coopvec_elementwise as oracle
from ctsgen.ops.elementwise_operands import operands
from ctsgen.ops.coopvec_elementwise_ops import (
    ELEMENT_TYPES,
    EXT_INST,
    FLOAT_TYPES,
    OPS,
    Op,
    instruction,
)
from ctsgen.model.types import CoopVecType, coopvec_component_type_feature
from ctsgen.oracle.values import from_bits, sentinel_bits
from ctsgen.ops import coopvec_elementwise_slang as slang
from ctsgen.templates import render

FAMILY_NAME = "coopvec-elementwise"
LOCAL = 32  # invocations per workgroup: one full subgroup (see docs/validation.md, coopvec run 1)
N_BUFFERS = 2
W_LOAD, W_STORE, W_SCALAR = 0, 1, 2
FAMILY_WORDS = 3
OPERAND_NAMES = ("a", "b", "c")
#: SPIR-V Capability / ExecutionMode numbers of SignedZeroInfNanPreserve and RoundingModeRTE
SIGNED_ZERO_INF_NAN_PRESERVE = (4466, 4461)
ROUNDING_MODE_RTE = (4467, 4462)


def ceil16(n: int) -> int:
    return -(-n // oracle.ALIGN) * oracle.ALIGN


def float_controls(t: CoopVecType) -> tuple[str, ...]:
    """The VkPhysicalDeviceFloatControlsProperties members an ieee variant of ``t`` needs."""
    width = t.bits
    return (f"shaderSignedZeroInfNanPreserveFloat{width}", f"shaderRoundingModeRTEFloat{width}")


@dataclass(frozen=True)
class ElementwiseVariant:
    """Compile-time signature (see the module docstring)."""

    op: Op
    componentType: CoopVecType
    resultType: CoopVecType
    N: int
    ieee: bool = False

    def __post_init__(self) -> None:
        info = OPS[self.op]
        t, r = self.componentType, self.resultType
        if t not in info.types or r not in ELEMENT_TYPES:
            raise ValueError(f"{self.op.value} takes vectors of {', '.join(x.name for x in info.types)}, "
                             f"not {t.name} -> {r.name}")
        if (self.op is Op.convert) == (t is r):
            raise ValueError(f"{self.op.value}: the result type must {'differ from' if t is r else 'equal'} the "
                             f"component type ({t.name} -> {r.name})")
        if self.N < 1:
            raise ValueError(f"N {self.N}: a cooperative vector has at least one component")
        if self.ieee and not (info.ieee and t in FLOAT_TYPES):
            raise ValueError(f"ieee {self.op.value} on {t.name}: only float vectors of ops whose NaN/infinity "
                             "results are defined have an ieee variant (ops.OPS[...].ieee)")

    @property
    def arity(self) -> int:
        return OPS[self.op].arity

    @property
    def in_stride(self) -> int:
        """Bytes between consecutive operand vectors (N components rounded up to 16 bytes)."""
        return ceil16(self.N * self.componentType.dtype.itemsize)

    @property
    def out_stride(self) -> int:
        return ceil16(self.N * self.resultType.dtype.itemsize)

    @property
    def id(self) -> str:
        types = self.componentType.name + (f"_to_{self.resultType.name}" if self.op is Op.convert else "")
        return f"coopvec_elementwise.{self.op.value}.{types}.n{self.N}{'.ieee' if self.ieee else ''}"

    @property
    def local_size_x(self) -> int:
        return LOCAL

    def buffers(self) -> tuple[BufferSpec, ...]:
        return (BufferSpec(1, "operands", self.componentType.dtype.name),
                BufferSpec(2, "result", self.resultType.dtype.name))

    def requirements(self) -> Requirements:
        """cooperativeVector; both component types reported by the device (VUID-RuntimeSpirv-
        OpTypeCooperativeVector-10095); for ieee, the float-controls properties of the width."""
        feats = ["cooperativeVector"] + [coopvec_component_type_feature(t.vk)
                                         for t in dict.fromkeys((self.componentType, self.resultType))]
        if self.ieee:
            feats += float_controls(self.componentType)
        return Requirements(extensions=("VK_NV_cooperative_vector",), features=tuple(feats))

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        t, r = self.componentType, self.resultType
        ext = EXT_INST.get(self.op)
        return render(Path(__file__).parent, "shader.comp.j2", T=t.glsl, R=r.glsl, ext_inst=ext,
                      intrinsics=self.ieee or ext is not None,
                      expression=OPS[self.op].glsl.format(R=r.glsl, N=self.N),
                      FZ=SIGNED_ZERO_INF_NAN_PRESERVE, RTE=ROUNDING_MODE_RTE, **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): the same bindings, words and instruction
        (slang.py), the execution modes of an ieee variant in a ``spirv_asm`` block."""
        t, r = self.componentType, self.resultType
        return render(Path(__file__).parent, "shader.slang.j2", T=t.slang, R=r.slang,
                      expression=slang.expression(self.op, t, r, self.N), **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        t, r = self.componentType, self.resultType
        return dict(v=self, component=t.name, instruction=instruction(self.op, t, r),
                    operands=OPERAND_NAMES[:self.arity], LOCAL=LOCAL, in_es=t.dtype.itemsize,
                    out_es=r.dtype.itemsize, H=N_BUFFERS, W=dict(LOAD=W_LOAD, STORE=W_STORE, SCALAR=W_SCALAR),
                    words=N_BUFFERS + FAMILY_WORDS, baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op.value, "componentType": self.componentType.name,
                "resultType": self.resultType.name, "N": self.N, "ieee": self.ieee}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ElementwiseVariant:
        return cls(Op(o["op"]), CoopVecType[o["componentType"]], CoopVecType[o["resultType"]], int(o["N"]),
                   bool(o["ieee"]))

    # -- reference semantics ----------------------------------------------
    def operand_offsets(self, base: int, load_offset: int) -> list[np.ndarray]:
        """Byte offsets of every invocation's operand vectors (one array per operand)."""
        lid = np.arange(LOCAL)
        return [base + load_offset + (j * LOCAL + lid) * self.in_stride for j in range(self.arity)]

    def result_offsets(self, base: int, store_offset: int) -> np.ndarray:
        return base + store_offset + np.arange(LOCAL) * self.out_stride

    def scalar(self, bits: int) -> float:
        """OpVectorTimesScalar's scalar from its parameter word."""
        return float(from_bits(bits, oracle.component(self.componentType))[()])

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: each case's loads, instruction and store on host buffers."""
        src, dst = buffers
        t, r = self.componentType, self.resultType
        for words, (a, b) in zip(params.astype(np.int64), offsets):
            ops = [oracle.load(src, o, self.N)
                   for o in self.operand_offsets(int(a) * t.dtype.itemsize, int(words[W_LOAD]))]
            res = oracle.apply(self.op, ops, self.scalar(int(words[W_SCALAR])), t, r)
            oracle.store(dst, self.result_offsets(int(b) * r.dtype.itemsize, int(words[W_STORE])), res)


@dataclass(frozen=True)
class ElementwiseCase:
    """One case: run-time operands and the data seed; ``edges`` puts the op's edge values
    into the first components (data.py)."""

    family: ClassVar[str] = FAMILY_NAME

    shader: ElementwiseVariant
    loadOffset: int = 0
    storeOffset: int = 0
    scalarBits: int = 0
    seed: int = 0
    edges: bool = False

    def __post_init__(self) -> None:
        for name in ("loadOffset", "storeOffset"):
            off = getattr(self, name)
            if off < 0 or off % oracle.ALIGN:
                raise ValueError(f"{name} {off}: a cooperative-vector load/store offset is a non-negative "
                                 f"multiple of {oracle.ALIGN} bytes (VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099)")

    def variant(self) -> ElementwiseVariant:
        return self.shader

    def params(self) -> np.ndarray:
        w = np.zeros(FAMILY_WORDS, dtype=np.uint32)
        w[W_LOAD], w[W_STORE], w[W_SCALAR] = self.loadOffset, self.storeOffset, self.scalarBits
        return w

    def data(self) -> CaseData:
        v = self.shader
        t, r = v.componentType, v.resultType
        rng = np.random.default_rng(self.seed)
        ops = operands(v.op, t, r, (LOCAL, v.N), rng, self.edges, v.ieee)
        s = v.scalar(self.scalarBits)
        oracle.check_domain(v.op, ops, s, t, r, v.ieee)
        size_in = (self.loadOffset + v.arity * LOCAL * v.in_stride) // t.dtype.itemsize
        src = rng.integers(0, 256, size_in * t.dtype.itemsize, dtype=np.uint8).view(t.dtype)  # junk between vectors
        for o, vals in zip(v.operand_offsets(0, self.loadOffset), ops):
            # the inputs as laid out (not the shader's store: a deviation of OpCooperativeVectorStoreNV must
            # not move them, decision "expected-deviation")
            src[o[:, None] // t.dtype.itemsize + np.arange(v.N)] = vals
        rc = oracle.component(r)
        poison = np.full((self.storeOffset + LOCAL * v.out_stride) // r.dtype.itemsize,
                         from_bits(sentinel_bits(rc), rc), dtype=r.dtype)
        expected, tol = outputs_on(self, self.params(), [src, poison])
        return CaseData(self.params(), [src, poison], [None, expected], None if tol is None else [None, tol])

    def compare_rule(self) -> CompareRule:
        """Integers and float loads/stores without NaN bit for bit; other float results by value
        (a NaN matches any NaN, zero either sign) within the tolerance, 0 for exact ops."""
        v = self.shader
        if not v.resultType.is_float or (v.op is Op.load_store and not v.ieee):
            return CompareRule("bitwise")
        # ieee variants declare SignedZeroInfNanPreserve: an exact zero must keep its sign
        return CompareRule("tolerance", signed_zero=True if v.ieee else None)

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(), "loadOffset": self.loadOffset,
                "storeOffset": self.storeOffset, "scalarBits": self.scalarBits, "seed": self.seed,
                "edges": self.edges}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ElementwiseCase:
        return cls(ElementwiseVariant.from_json(o["variant"]), int(o["loadOffset"]), int(o["storeOffset"]),
                   int(o["scalarBits"]), int(o["seed"]), bool(o["edges"]))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def describe(self) -> dict[str, Any]:
        v = self.shader
        out: dict[str, Any] = {"instruction": instruction(v.op, v.componentType, v.resultType), "N": v.N,
                               "toleranceModel": "docs/spec-decisions.md#coopvec-elementwise-rules"}
        if v.op is Op.vts:
            out["scalar"] = repr(v.scalar(self.scalarBits))
        return out

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """Invocation and component of a result element (or the padding after a vector)."""
        if buffer != 1:
            return {}
        v = self.shader
        byte = element * v.resultType.dtype.itemsize - self.storeOffset
        if byte < 0:
            return {"before": "storeOffset"}
        lid, rest = divmod(byte, v.out_stride)
        comp = rest // v.resultType.dtype.itemsize
        return {"invocation": lid, "component": comp} if comp < v.N else {"invocation": lid, "padding": comp}


def outputs_on(case: ElementwiseCase, params: np.ndarray, initial: list[np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray | None]:
    """(the result buffer, its tolerance or None for an integer result) that ``case``'s loads,
    instruction and store give on the given inputs, as the shader runs them (the reference
    semantics' ``oracle.load`` / ``apply`` / ``store``): a deviation of a load or a store (a mutant,
    ``--expect-deviation``) moves the expectation on the spec case's own inputs. The tolerance is
    NaN (bit for bit) wherever the store does not write."""
    v = case.shader
    t, r = v.componentType, v.resultType
    words = np.asarray(params, dtype=np.int64)
    ops = [oracle.load(initial[0], o, v.N) for o in v.operand_offsets(0, int(words[W_LOAD]))]
    s = v.scalar(int(words[W_SCALAR]))
    res = oracle.apply(v.op, ops, s, t, r)
    expected = np.array(initial[1], copy=True)
    where = v.result_offsets(0, int(words[W_STORE]))
    oracle.store(expected, where, res)
    if not r.is_float:
        return expected, None
    # which result component the store put where (0: none), through the same store
    marker = np.zeros(expected.size, dtype=f"uint{8 * r.dtype.itemsize}")
    oracle.store(marker, where, np.arange(1, res.size + 1).reshape(res.shape).astype(marker.dtype))
    bound = np.broadcast_to(oracle.tolerance(v.op, ops, s, t, r, res, v.ieee), (2,) + res.shape).reshape(2, -1)
    tol = np.full((2,) + expected.shape, np.nan)  # below / above; NaN: the poison, bit for bit
    hit = marker > 0
    tol[:, hit] = bound[:, marker[hit].astype(np.int64) - 1]
    return expected, tol
