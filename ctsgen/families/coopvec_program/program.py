"""The chain of a coopvec-program case: a small neural network over cooperative vectors.

A :class:`Program` is a tuple of :class:`Node`, a straight chain: node 0
loads the invocation's input vector (OpCooperativeVectorLoadNV), every
later node reads the value of the node before it, and a store ends the
chain (OpCooperativeVectorStoreNV). In between, 1-4 *layers*: a MatMulAdd
(OpCooperativeVectorMatrixMulAddNV, its :class:`Layer`: the type combination,
MemoryLayout, Transpose, M, K), then its activation (0-3 element-wise
instructions of SPV_NV_cooperative_vector 3.42.13 / 3.42.14 with run-time
scalars broadcast to vectors: max / min / clamp / x * s / x + s / fma /
x >> s), then the conversions (3.42.11) that take the layer's Result Type
to the next layer's Input type. A *training* program then takes one step of
the last layer's gradients for the loss 1/2 |y|^2 (whose gradient in the
stored y is y itself): OpCooperativeVectorOuterProductAccumulateNV of y and
the last layer's input into a TrainingOptimal float16 matrix (dW += y h^T),
and OpCooperativeVectorReduceSumAccumulateNV of y (db += y), each summed over
the workgroup's invocations as relaxed atomic adds; it needs a float16 last
layer with a float16 input and no conversion after it. The program is the
compile-time signature;
matrix offsets, strides, bias offsets, scalars and data are run-time.

Types are consistent by construction (the Program checks them): a layer's
input vector has its Input type and K components (K / 4 words for a packed
interpretation), its result the Result Type and M components, so the next
layer's K is this layer's M. A packed interpretation only reads the loaded
input (no conversion produces packed words).

Exact domain (docs/spec-decisions.md "coopvec-program-exact-domain"): every
value is an integer, and each node's value has a *limit* (:func:`limits`),
derived backwards from what its consumers need: a float value at most the
integers its type holds exactly (2^11 float16, 2^24 float32), an input that
a MatMulAdd converts to E4M3 / E5M2 at most 16 / 8 (their exact integers),
a float -> signed integer conversion inside the destination's range, an
integer -> float16 conversion at most 2^11; an activation's scalars shrink
the limit of its operand (x * s: L / |s|, x + s: L - |s|, clamp resets it).
A MatMulAdd's data are drawn so that sum_k |w_mk x_k| + |b_m| stays within
its limit (data.py), so every partial sum is an exact integer in any order,
and the verdict is bit for bit. In a training program y stays within
GRAD_LIMIT and the last layer's input within GRAD_INPUT_LIMIT, so every
partial sum of the LOCAL invocations' fp16 atomic adds (onto initial values
within GRAD_INIT) is an integer within 2^11 as well, in any order.

Divergent control flow (docs/spec-decisions.md "coopvec-program-divergence"):
SPV_NV_cooperative_vector says cooperative vectors "don't require a fully
occupied subgroup or uniform control flow like cooperative matrices", so a
MatMulAdd or an activation node may carry a :class:`Ctl`, decided per
invocation by its own word of the ``control`` buffer (one word per invocation
per controlled node, drawn with the data):

* ``if``: the invocations whose word has bit 0 set run the node; the others
  keep the operand (an activation, or a MatMulAdd whose input and result
  types are one), take ``alt`` (an activation's else side: max / min against
  0), or take the zero vector (a MatMulAdd that changes the type);
* ``loop``: the node is repeated ``word`` times (0 to MAX_TRIPS) on its own
  result; an activation, or a square MatMulAdd (its input and result one
  type). The exact domain bounds the growth by the most trips: the operand's
  limit is the smallest of the limits t = 0 .. MAX_TRIPS applications leave
  (an activation), or the result's (a MatMulAdd, whose data are drawn so
  that MAX_TRIPS repetitions stay within it: data.py).

A program may also run in a *partial subgroup*: ``local`` invocations (fewer
than the H100's subgroup of 32) when every layer's layout is optimal (a
RowMajor / ColumnMajor MatMul in a partial subgroup is the coopvec family's
opt-in hazard "partial-subgroup-row-column-major"). A program of 32
invocations and no Ctl writes the JSON, and so has the digest, it had before.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ctsgen.ops.straight_line import StraightLine
from ctsgen.ops.coopvec_matrix import CoopVecOp, CoopVecSignature, MatrixLayout
from ctsgen.ops.coopvec_elementwise_ops import OPS
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.model.types import CoopVecType

T = CoopVecType
F16, F32, S8, S32, U8, U32 = T.float16, T.float32, T.sint8, T.sint32, T.uint8, T.uint32
#: invocations per workgroup by default: one full H100 subgroup (a program of PARTIAL invocations has
#: optimal layouts only: a RowMajor / ColumnMajor MatMul in a partial subgroup is the coopvec family's
#: opt-in hazard "partial-subgroup-row-column-major")
LOCAL = 32
MIN_LAYERS, MAX_LAYERS, MAX_ACTS = 1, 4, 3
#: a training step's bounds: |y| (the gradient), |h| (the last layer's input), the initial |dW|, |db|;
#: GRAD_INIT + LOCAL * GRAD_LIMIT * GRAD_INPUT_LIMIT = 1796 <= 2^11 (exact fp16 atomic sums)
GRAD_LIMIT, GRAD_INPUT_LIMIT, GRAD_INIT = 8, 7, 4
#: a limit no 32-bit integer value exceeds (integer paths wrap: exact in any order, no limit needed)
UNBOUNDED = 2**31
#: largest |integer| that every value of the type holds exactly
TYPE_LIMIT = {F16: 2**11, F32: 2**24, S8: UNBOUNDED, U8: UNBOUNDED, S32: UNBOUNDED, U32: UNBOUNDED}
#: float interpretations: the largest integer up to which every integer is exact (a float -> float
#: input conversion of SPV_NV_cooperative_vector must not round); integer interpretations saturate
INTERP_LIMIT = {F16: 2**11, T.floate4m3: 16, T.floate5m2: 8}
#: the most times a per-invocation loop runs its node (its control word is 0 .. MAX_TRIPS)
MAX_TRIPS = 3
#: workgroup sizes of a partial subgroup (fewer invocations than one H100 subgroup)
PARTIAL = (20, 8, 1)
#: the types a value between layers can have (GLSL scalar types of cooperative vectors)
VALUE_TYPES = (F16, F32, S8, S32, U8)


class Op(str, enum.Enum):
    load = "load"            # OpCooperativeVectorLoadNV of the invocation's input vector
    matmuladd = "matmuladd"  # OpCooperativeVectorMatrixMulAddNV (a layer)
    act = "act"              # one element-wise instruction of the activation (coopvec-elementwise's Op)
    convert = "convert"      # OpFConvert / OpConvertFToS / OpConvertSToF / OpUConvert ... (3.42.11)
    store = "store"          # OpCooperativeVectorStoreNV of the result
    outer = "outer"          # OpCooperativeVectorOuterProductAccumulateNV of y and the last layer's input
    reducesum = "reducesum"  # OpCooperativeVectorReduceSumAccumulateNV of y


class Ctl(str, enum.Enum):
    """Per-invocation control flow around a node (the module docstring)."""

    branch = "if"   # run by the invocations whose control word has bit 0 set
    loop = "loop"   # repeated control-word times (0 .. MAX_TRIPS)


#: Activation instructions per kind of Result Type, in shrink order. Each takes the value and
#: run-time scalars s (and t) broadcast to vectors (clamp(x, s, t), fma(x, s, t), x * s, ...).
FLOAT_ACTS = (ElementOp.fmax, ElementOp.fclamp, ElementOp.vts, ElementOp.fadd, ElementOp.fma, ElementOp.fmin)
INT_ACTS = (ElementOp.imax, ElementOp.iclamp, ElementOp.shr, ElementOp.imul, ElementOp.iadd, ElementOp.imin)
#: a short name per activation instruction (program lines, coverage)
ACT_NAME = {ElementOp.fmax: "max", ElementOp.imax: "max", ElementOp.fmin: "min", ElementOp.imin: "min",
            ElementOp.fclamp: "clamp", ElementOp.iclamp: "clamp", ElementOp.vts: "scale", ElementOp.imul: "scale",
            ElementOp.fadd: "add", ElementOp.iadd: "add", ElementOp.fma: "fma", ElementOp.shr: "shr"}
#: run-time scalars an activation instruction takes (s; s and t)
ACT_SCALARS = {op: (2 if op in (ElementOp.fclamp, ElementOp.iclamp, ElementOp.fma) else 1) for op in ACT_NAME}


def acts_for(t: CoopVecType) -> tuple[ElementOp, ...]:
    return FLOAT_ACTS if t.is_float else INT_ACTS


@dataclass(frozen=True)
class VecType:
    """A cooperative vector type: component type and component count."""

    component: CoopVecType
    n: int

    @property
    def label(self) -> str:
        return f"coopvecNV<{self.component.glsl}, {self.n}>"

    @property
    def stride(self) -> int:
        """Bytes between invocations' vectors in a buffer (16-aligned, VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099)."""
        return -(-self.n * self.component.dtype.itemsize // 16) * 16

    def to_json(self) -> dict[str, Any]:
        return {"component": self.component.name, "n": self.n}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> VecType:
        return cls(CoopVecType[o["component"]], int(o["n"]))


SHORT = {F16: "f16", F32: "f32", S8: "s8", S32: "s32", U8: "u8", U32: "u32", T.sint8packed: "s8p",
         T.uint8packed: "u8p", T.floate4m3: "e4m3", T.floate5m2: "e5m2"}


def interpretation_label(inputInterpretation: CoopVecType, matrixInterpretation: CoopVecType,
                         resultType: CoopVecType) -> str:
    """``s8/s8->s32``: a layer's InputInterpretation / MatrixInterpretation -> Result Type."""
    return f"{SHORT[inputInterpretation]}/{SHORT[matrixInterpretation]}->{SHORT[resultType]}"


@dataclass(frozen=True)
class Layer:
    """A MatMulAdd's compile-time operands: the advertised type combination, MemoryLayout,
    Transpose, M (result components) and K (input components)."""

    inputType: CoopVecType
    inputInterpretation: CoopVecType
    matrixInterpretation: CoopVecType
    biasInterpretation: CoopVecType
    resultType: CoopVecType
    layout: MatrixLayout
    transpose: bool
    M: int
    K: int

    def variant(self) -> CoopVecSignature:
        """The operands of this MatMulAdd alone (the coopvec family's variant's): its checks (Transpose only with
        an optimal layout, E4M3 / E5M2 only optimal, packed K a multiple of 4), its matrix and
        bias readers and its geometry are the program's (built once per layer)."""
        return self._variant

    @cached_property
    def _variant(self) -> CoopVecSignature:
        return CoopVecSignature(CoopVecOp.matmuladd, self.inputType, self.inputInterpretation,
                                self.matrixInterpretation, self.biasInterpretation, self.resultType,
                                self.layout, self.transpose, self.M, self.K, LOCAL)

    @property
    def input(self) -> VecType:
        return VecType(self.inputType, self.K // 4 if self.inputInterpretation.is_packed else self.K)

    @property
    def result(self) -> VecType:
        return VecType(self.resultType, self.M)

    @property
    def label(self) -> str:
        """``float16 as floate4m3 x floate4m3 + float16 -> float16``: the combination."""
        return (f"{self.inputType.name} as {self.inputInterpretation.name} x {self.matrixInterpretation.name}"
                f" + {self.biasInterpretation.name} -> {self.resultType.name}")

    @property
    def interpretation(self) -> str:
        """Input / Matrix interpretation and Result Type, short: ``s8/s8->s32``, ``e4m3/e4m3->f16``."""
        return interpretation_label(self.inputInterpretation, self.matrixInterpretation, self.resultType)

    def to_json(self) -> dict[str, Any]:
        return {"inputType": self.inputType.name, "inputInterpretation": self.inputInterpretation.name,
                "matrixInterpretation": self.matrixInterpretation.name,
                "biasInterpretation": self.biasInterpretation.name, "resultType": self.resultType.name,
                "layout": int(self.layout), "transpose": self.transpose, "M": self.M, "K": self.K}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> Layer:
        return cls(T[o["inputType"]], T[o["inputInterpretation"]], T[o["matrixInterpretation"]],
                   T[o["biasInterpretation"]], T[o["resultType"]], MatrixLayout(int(o["layout"])),
                   bool(o["transpose"]), int(o["M"]), int(o["K"]))


@dataclass(frozen=True)
class Node:
    """One instruction; it reads the previous node's value. ``type`` is its result's type (a
    store's: the stored value's); ``layer`` for a MatMulAdd, ``fn`` for an activation."""

    op: Op
    type: VecType
    layer: Layer | None = None
    fn: ElementOp | None = None
    #: per-invocation control flow around the node (None: every invocation runs it once)
    ctl: Ctl | None = None
    #: an ``if`` activation's else side (max / min against 0; None: the operand kept)
    alt: ElementOp | None = None

    def to_json(self) -> dict[str, Any]:
        o: dict[str, Any] = {"op": self.op.value, "type": self.type.to_json()}
        if self.layer is not None:
            o["layer"] = self.layer.to_json()
        if self.fn is not None:
            o["fn"] = self.fn.value
        if self.ctl is not None:  # absent before divergence: an old node's JSON (and digest) unchanged
            o["ctl"] = self.ctl.value
        if self.alt is not None:
            o["alt"] = self.alt.value
        return o

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> Node:
        return cls(Op(o["op"]), VecType.from_json(o["type"]),
                   Layer.from_json(o["layer"]) if "layer" in o else None,
                   ElementOp(o["fn"]) if "fn" in o else None,
                   Ctl(o["ctl"]) if "ctl" in o else None,
                   ElementOp(o["alt"]) if "alt" in o else None)

    @property
    def keeps(self) -> bool:
        """Whether the node's operand has the node's type (an ``if`` may keep it, a ``loop`` repeat the node)."""
        return self.op is Op.act or (self.op is Op.matmuladd and self.layer.input == self.layer.result
                                     and not self.layer.inputInterpretation.is_packed)

    @property
    def kind(self) -> str:
        """The node's kind for coverage: load, matmuladd, max, clamp, ..., convert, store."""
        return ACT_NAME[self.fn] if self.op is Op.act else self.op.value

    def line(self, i: int) -> str:
        """One readable line: ``v2 = max(v1, s)  : coopvecNV<float16_t, 8>``; a controlled node's
        ``v2 = if (c & 1) max(v1, s) else v1 ...``, ``v2 = repeat c times: matmuladd(v2, ...) ...``."""
        text = self._line(i)
        if self.ctl is Ctl.branch:
            head, _, tail = text.partition(" = ")
            expr, _, typ = tail.partition("  : ")
            other = (f"{ACT_NAME[self.alt]}(v{i - 1}, 0)" if self.alt is not None
                     else f"v{i - 1}" if self.keeps else "0")
            return f"{head} = if (c{i} & 1) {expr} else {other}  : {typ}"
        if self.ctl is Ctl.loop:
            head, _, tail = text.partition(" = ")
            expr, _, typ = tail.partition("  : ")
            return f"{head} = v{i - 1}; repeat c{i} times: {head} = {expr.replace(f'v{i - 1}', head, 1)}  : {typ}"
        return text

    def _line(self, i: int) -> str:
        if self.op is Op.load:
            return f"v{i} = load(input)  : {self.type.label}"
        if self.op is Op.store:
            return f"store(v{i - 1})"
        if self.op is Op.outer:
            return "dW += outer(y, h) over the invocations  : TrainingOptimal float16"
        if self.op is Op.reducesum:
            return "db += reducesum(y) over the invocations  : float16"
        if self.op is Op.matmuladd:
            L = self.layer
            extra = f"{L.layout.name}{', transposed' if L.transpose else ''}, {L.label}"
            return f"v{i} = matmuladd(v{i - 1}, W, b; {extra})  : {self.type.label}"
        if self.op is Op.act:
            args = {1: "s", 2: "s, t"}[ACT_SCALARS[self.fn]]
            return f"v{i} = {ACT_NAME[self.fn]}(v{i - 1}, {args})  : {self.type.label}"
        return f"v{i} = convert(v{i - 1})  : {self.type.label}"


# -- conversions -----------------------------------------------------------------
def conversion_rule(src: CoopVecType, dst: CoopVecType) -> str | None:
    """None if one conversion instruction takes every in-limit value of ``src`` to ``dst`` with a
    defined result, else why not. Float -> unsigned is left out: OpConvertFToU of a negative value
    is undefined, and activations may leave negative values (go through sint32 instead).
    An unsigned value (uint8) is only ever an Input type: nothing converts it further."""
    if src is dst or src not in VALUE_TYPES or dst not in VALUE_TYPES:
        return f"no conversion {src.name} -> {dst.name} between layer values"
    if src.is_float and not dst.is_float and not dst.is_signed:
        return f"{src.name} -> {dst.name}: OpConvertFToU of a negative value is undefined"
    if not src.is_float and not src.is_signed:
        return (f"{src.name} -> {dst.name}: an unsigned value only feeds a MatMulAdd (a negative value converted "
                "to it wraps to a large one, which no symmetric limit bounds)")
    return None


@functools.lru_cache(maxsize=256)
def conversion_paths(src: CoopVecType, dst: CoopVecType) -> tuple[tuple[CoopVecType, ...], ...]:
    """Conversion paths from a Result Type to an Input type: the shortest first (the shrink
    target), then the ones through another type, each step allowed by :func:`conversion_rule`.
    Worked out once per pair of types (a drawn program asks for every combination's)."""
    direct = [()] if src is dst else [(dst,)] if conversion_rule(src, dst) is None else []
    via = [(m, dst) for m in VALUE_TYPES if m not in (src, dst)
           and conversion_rule(src, m) is None and conversion_rule(m, dst) is None]
    return tuple(direct + via)


def convert_prelimit(src: CoopVecType, dst: CoopVecType, limit: int) -> int:
    """The limit of a conversion's operand, given the limit of its result: value-preserving (so
    the destination's limit carries over), inside a float -> integer destination's range (else
    undefined), within the source's exact integers; an integer narrowing wraps (defined), so when
    the result's limit covers the destination's whole range the operand needs none."""
    lim = min(limit, TYPE_LIMIT[src], TYPE_LIMIT[dst])
    if src.is_float and not dst.is_float:
        lim = min(lim, 2 ** (dst.bits - 1) - 1)
    if not src.is_float and not dst.is_float and dst.bits < src.bits and limit >= 2 ** dst.bits:
        lim = TYPE_LIMIT[src]
    return lim


# -- activations -------------------------------------------------------------------
def act_prelimit(fn: ElementOp, s: int, t: int, limit: int, type_limit: int) -> int | None:
    """The limit of an activation's operand given its result's and the scalars (None if the
    scalars themselves break the result's limit)."""
    name = ACT_NAME[fn]
    if name in ("max", "min"):
        pre = limit if abs(s) <= limit else None
    elif name == "clamp":
        pre = type_limit if s <= t and max(abs(s), abs(t)) <= limit else None
    elif name == "scale":
        pre = limit // abs(s) if 1 <= abs(s) <= limit else None
    elif name == "add":
        pre = limit - abs(s) if 2 * abs(s) <= limit else None
    elif name == "fma":
        pre = (limit - abs(t)) // abs(s) if abs(s) >= 1 and 2 * abs(t) <= limit and limit - abs(t) >= abs(s) else None
    else:  # shr: x >> s with 0 <= s < 4 (floor division by 2^s)
        pre = limit << s if 0 <= s < 4 else None
    return None if pre is None or pre < 1 else min(pre, type_limit)


def act_operand_limit(node: Node, s: int, t: int, limit: int) -> int | None:
    """The limit of a (controlled) activation's operand: an ``if``'s the smaller of its sides' (the
    else side, the operand or max / min against 0, keeps the limit); a ``loop``'s the smallest
    of the limits 0 .. MAX_TRIPS applications leave (None if a trip's scalars break one)."""
    type_limit = TYPE_LIMIT[node.type.component]
    pre = act_prelimit(node.fn, s, t, limit, type_limit)
    if pre is None or node.ctl is None:
        return pre
    if node.ctl is Ctl.branch:
        return min(pre, limit)
    out, cur = min(pre, limit), pre
    for _ in range(MAX_TRIPS - 1):
        cur = act_prelimit(node.fn, s, t, cur, type_limit)
        if cur is None:
            return None
        out = min(out, cur)
    return out


def input_limit(layer: Layer) -> int:
    """The limit of a MatMulAdd's input vector: a float -> float InputInterpretation must be exact."""
    if layer.inputType.is_float and layer.inputInterpretation.is_float:
        return min(TYPE_LIMIT[layer.inputType], INTERP_LIMIT[layer.inputInterpretation])
    return TYPE_LIMIT[layer.inputType] if layer.inputType in TYPE_LIMIT else UNBOUNDED


def ctl_rule(node: Node) -> str | None:
    """None if the node's control flow is one the program models (the module docstring), else why not."""
    if node.ctl is None:
        return None if node.alt is None else "an else-side activation belongs to an if"
    if node.op not in (Op.matmuladd, Op.act):
        return f"a {node.op.value} runs in every invocation (only a MatMulAdd or an activation is controlled)"
    if node.alt is not None and (node.ctl is not Ctl.branch or node.op is not Op.act
                                 or ACT_NAME.get(node.alt) not in ("max", "min")
                                 or node.alt not in acts_for(node.type.component)):
        return f"else side {node.alt.value}: an if activation's is max / min against 0 of its type"
    if node.ctl is Ctl.loop and not node.keeps:
        return "a loop repeats a node whose operand has its type (an activation, a square MatMulAdd)"
    return None


def operand_rule(node: Node, prev: Node | None) -> str | None:
    """None if ``node`` may follow ``prev`` (types consistent), else why not."""
    if node.op is Op.load:
        return None if prev is None else "a load starts the program"
    if prev is None or prev.op is Op.store:
        return f"{node.op.value} needs a value before it"
    t = prev.type
    if node.op is Op.matmuladd:
        L = node.layer
        if L is None:
            return "a matmuladd has a layer"
        if L.inputInterpretation.is_packed and prev.op is not Op.load:
            return "a packed interpretation reads the loaded input only"
        if t != L.input or node.type != L.result:
            return f"matmuladd {L.label} (K {L.K}, M {L.M}) cannot take {t.label} to {node.type.label}"
        return None
    if node.op is Op.act:
        if node.fn not in acts_for(t.component) or node.type != t:
            return f"activation {node.fn} does not apply to {t.label}"
        return None
    if node.op is Op.convert:
        if node.type.n != t.n:
            return "a conversion keeps the component count"
        return conversion_rule(t.component, node.type.component)
    return None if node.type == t else f"store of {node.type.label} after {t.label}"


@dataclass(frozen=True)
class Program(StraightLine):
    """A chain: load, 1-4 layers (MatMulAdd, activation, conversions), store, and for a training
    program the outer product and the reduce sum; valid by check."""

    nodes: tuple[Node, ...]
    #: invocations per workgroup: LOCAL (one full subgroup) or a partial subgroup (PARTIAL)
    local: int = LOCAL
    NODE = Node  # StraightLine.from_json reads nodes back with it

    def __post_init__(self) -> None:
        n = self.nodes
        if not 1 <= self.local <= LOCAL:
            raise ValueError(f"local size {self.local}: a program runs 1..{LOCAL} invocations (one subgroup or part)")
        kinds = [x.op for x in n]
        tail = kinds[kinds.index(Op.store) + 1:] if Op.store in kinds else None
        if len(n) < 3 or kinds[0] is not Op.load or tail not in ([], [Op.outer, Op.reducesum]) or \
                any(k in (Op.load, Op.store, Op.outer, Op.reducesum) for k in kinds[1:self.store_index]):
            raise ValueError("a program is a load, then its layers, then one store (then, training, the outer "
                             "product and the reduce sum)")
        if self.training:
            L, y = self.layers()[-1], n[self.store_index].type
            if L.resultType is not F16 or L.inputType is not F16 or y != L.result:
                raise ValueError("a training step needs a float16 last layer with a float16 input and its float16 "
                                 f"result stored (OuterProductAccumulate / ReduceSumAccumulate of fp16), not {L.label}")
            if any(x.type != y for x in n[self.store_index + 1:]):
                raise ValueError("the training nodes take the stored value's type")
        for i, node in enumerate(n[:self.store_index + 1]):
            why = operand_rule(node, n[i - 1] if i else None) or ctl_rule(node)
            if why:
                raise ValueError(f"node {i}: {why}")
            if node.op is Op.matmuladd:
                node.layer.variant()  # the coopvec family's validity rules for a MatMulAdd
        if not MIN_LAYERS <= len(self.layers()) <= MAX_LAYERS:
            raise ValueError(f"{len(self.layers())} layers: a program has {MIN_LAYERS}-{MAX_LAYERS}")
        if self.partial and not all(L.layout.optimal for L in self.layers()):
            raise ValueError(f"a RowMajor / ColumnMajor MatMul in a partial subgroup ({self.local} invocations) is the "
                             "coopvec family's opt-in hazard partial-subgroup-row-column-major; use optimal layouts")

    @cached_property
    def digest(self) -> str:
        """The nodes' digest (StraightLine's); a partial subgroup's local size is hashed with them."""
        text = json.dumps(self.to_json(), sort_keys=True)
        if self.partial:
            text = json.dumps({"nodes": self.to_json(), "local": self.local}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    @property
    def partial(self) -> bool:
        return self.local < LOCAL

    @cached_property
    def ctl_nodes(self) -> tuple[int, ...]:
        """The controlled nodes, in program order: node ``ctl_nodes[d]`` reads control word d of each invocation."""
        return tuple(i for i, n in enumerate(self.nodes) if n.ctl is not None)

    # -- structure (derived from the nodes once: the oracle asks for it per node per case) --------
    @cached_property
    def _layer_nodes(self) -> tuple[int, ...]:
        return tuple(i for i, n in enumerate(self.nodes) if n.op is Op.matmuladd)

    def layer_nodes(self) -> list[int]:
        return list(self._layer_nodes)

    def layers(self) -> list[Layer]:
        return [self.nodes[i].layer for i in self._layer_nodes]

    def layer_of(self, i: int) -> int:
        """Which layer MatMulAdd node i is (0 for the first)."""
        return self._layer_nodes.index(i)

    @cached_property
    def store_index(self) -> int:
        return next(i for i, n in enumerate(self.nodes) if n.op is Op.store)

    @cached_property
    def training(self) -> bool:
        return self.store_index < len(self.nodes) - 1

    @property
    def ops(self) -> int:
        """Program length: the nodes that are neither the load nor the store."""
        return len(self.nodes) - 2

    def gradient_nodes(self) -> tuple[int, int]:
        """(the node whose value is y, the node whose value is the last layer's input h)."""
        return self.store_index - 1, self._layer_nodes[-1] - 1

    @property
    def input(self) -> VecType:
        return self.nodes[0].type

    @property
    def output(self) -> VecType:
        return self.nodes[self.store_index].type

    # -- run-time words ------------------------------------------------------
    def words_of(self, node: Node) -> int:
        """Run-time words of a node: MatrixOffset, MatrixStride, BiasOffset; the scalars s, t."""
        return 3 if node.op is Op.matmuladd else 2 if node.op is Op.act else 0

    # -- bindings ------------------------------------------------------------
    @cached_property
    def _buffers(self) -> tuple[tuple[str, str], ...]:
        out = [("input", self.input.component.dtype.name), ("bias", "uint8"),
               ("output", self.output.component.dtype.name)]
        for j, L in enumerate(self.layers()):
            out.append((f"matrix{j}", "uint8"))
            if L.layout.optimal:
                out.append((f"optimal{j}", "uint8"))
        if self.training:  # dW (row-major source, converted to TrainingOptimal and back), db
            out += [("grad_matrix", "float16"), ("grad_optimal", "uint8"), ("grad_bias", "float16")]
        if self.ctl_nodes:  # last: a program without control flow keeps its bindings
            out.append(("control", "uint32"))
        return tuple(out)

    def buffers(self) -> list[tuple[str, str]]:
        """(name, numpy dtype) of each storage buffer: the input vectors, the biases of every
        layer (bytes), the results, then each layer's matrix (bytes) and, for an optimal layout,
        the buffer the backend converts it into."""
        return list(self._buffers)

    @cached_property
    def _buffer_slots(self) -> dict[str, int]:
        return {name: k for k, (name, _) in enumerate(self._buffers)}

    def buffer_index(self, name: str) -> int:
        return self._buffer_slots[name]

    # -- the exact domain ------------------------------------------------------
    def limits(self, scalars: Sequence[tuple[int, int] | None]) -> list[int]:
        """Each node's limit (see the module docstring), given each activation's (s, t); a
        MatMulAdd's is the bound its drawn data keep sum |w x| + |b| within."""
        return self.walk_limits(lambda i, limit: scalars[i])[0]

    def walk_limits(self, choose: Callable[[int, int], tuple[int, int]]
                    ) -> tuple[list[int], list[tuple[int, int] | None]]:
        """The limits from the store backwards; ``choose(i, limit)`` gives activation i's scalars
        (s, t) once the limit of its result is known. Returns the limits and the scalars."""
        out = [0] * len(self.nodes)
        chosen: list[tuple[int, int] | None] = [None] * len(self.nodes)
        limit = TYPE_LIMIT[self.output.component]
        if self.training:
            limit = GRAD_LIMIT
            out[self.store_index + 1:] = [GRAD_INIT + LOCAL * GRAD_LIMIT * GRAD_INPUT_LIMIT] * 2
        last = self._layer_nodes[-1]
        for i in range(self.store_index, -1, -1):
            n = self.nodes[i]
            limit = min(limit, TYPE_LIMIT[n.type.component])
            out[i] = limit
            if n.op is Op.act:
                s, t = chosen[i] = choose(i, limit)
                pre = act_operand_limit(n, s, t, limit)
                if pre is None:
                    raise ValueError(f"node {i}: scalars ({s}, {t}) of {n.fn.value} break its limit {limit}"
                                     + (f" within {MAX_TRIPS} trips" if n.ctl is Ctl.loop else ""))
                limit = pre
            elif n.op is Op.convert:
                limit = convert_prelimit(self.nodes[i - 1].type.component, n.type.component, limit)
            elif n.op is Op.matmuladd:
                if n.ctl is Ctl.loop:  # each trip's result is the next one's operand: one limit for both
                    out[i] = limit = min(limit, input_limit(n.layer))
                elif n.ctl is Ctl.branch and n.keeps:  # the else side keeps the operand as the result
                    limit = min(limit, input_limit(n.layer))
                else:
                    limit = input_limit(n.layer)
                if self.training and i == last:
                    limit = min(limit, GRAD_INPUT_LIMIT)
        return out, chosen

    # -- text --------------------------------------------------------------------


def act_glsl(fn: ElementOp) -> str:
    """The activation's GLSL expression over a (the value), b = s and c = t broadcast, s scalar
    (coopvec-elementwise's own expression of the instruction)."""
    return OPS[fn].glsl
