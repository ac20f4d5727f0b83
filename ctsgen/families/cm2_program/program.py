"""The typed straight-line program of a cm2-program case: nodes over cooperative matrices.

A :class:`Program` is a tuple of :class:`Node`; node ``i`` defines value
``v<i>`` (a store defines none) and names its operands by index. The
program is the compile-time signature: node kinds, matrix types, clamp
modes, Dim, reduce mode / CombineFunc, per-element function. Everything
else (layout state, scalars, data) is a run-time parameter word.

Every matrix is 16 x 16 at subgroup scope (float16 A / B / Accumulator,
float32 Accumulator), so MulAdd (K = 16), transpose and the Row / Column /
Row-and-Column reductions keep shapes compatible.

Exact domain (docs/spec-decisions.md "cm2-program-exact-domain"): every
value is an integer; :meth:`Program.bounds` bounds each value's magnitude
over every run-time draw, and a program is valid only if every bound stays
within the integers its component type holds exactly (2^11 float16, 2^24
float32). Then each node's result is exact in any evaluation order, so the
verdict is bitwise. A float-domain case (case.py ``domain``) runs the same
programs on full-significand data of the same magnitudes, so these bounds
still bound every value; it is judged within bounds propagated node by node
(bounds.py, decision "cm2-program-float-domain").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ctsgen.ops.straight_line import StraightLine
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, domain_size
from ctsgen.ops.decode_case import DecodeVariant
from ctsgen.ops.khr_addressing import Layout
from ctsgen.ops.tensor_layout import Operation
from ctsgen.ops.tensor_view_case import ViewVariant
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope

F16, F32 = ComponentType.float16, ComponentType.float32
SIDE = 16
SUBGROUP = 32


def mat(component: ComponentType, use: MatrixUse) -> MatrixType:
    return MatrixType(component, Scope.Subgroup, SIDE, SIDE, use, SUBGROUP)


A16, B16, ACC16, ACC32 = mat(F16, MatrixUse.A), mat(F16, MatrixUse.B), mat(F16, MatrixUse.Accumulator), \
    mat(F32, MatrixUse.Accumulator)
TYPES = (A16, B16, ACC16, ACC32)

#: Largest magnitude of an integer every intermediate of the type holds exactly.
EXACT = {F16: 2**11, F32: 2**24}
#: Input data, constants, clamp values and generated values lie in [-SMALL, SMALL];
#: scalars s are +-1 or +-2.
SMALL = 2
SCALARS = (1, 2, -1, -2)


class Op(str, enum.Enum):
    load = "load"            # OpCooperativeMatrixLoadTensorNV through a tensor layout
    const = "const"          # a constant matrix (OpCompositeConstruct of a run-time scalar)
    generate = "generate"    # per-element generated: select(zero, r0, c0, s)
    muladd = "muladd"        # OpCooperativeMatrixMulAddKHR
    convert = "convert"      # component and/or Use conversion
    transpose = "transpose"  # OpCooperativeMatrixTransposeNV
    perelement = "perelement"  # OpCooperativeMatrixPerElementOpNV (affine / select)
    reduce = "reduce"        # OpCooperativeMatrixReduceNV
    add = "add"
    sub = "sub"
    mul = "mul"
    scale = "scale"          # OpMatrixTimesScalar
    store = "store"          # OpCooperativeMatrixStoreTensorNV through a tensor layout
    loadview = "loadview"    # OpCooperativeMatrixLoadTensorNV through a tensor layout and a tensor view
    loaddecode = "loaddecode"  # OpCooperativeMatrixLoadTensorNV through a tensor layout with a DecodeFunc
    storeview = "storeview"  # OpCooperativeMatrixStoreTensorNV through a tensor layout and a tensor view
    loaddecodeview = "loaddecodeview"  # OpCooperativeMatrixLoadTensorNV through a layout and a view with a DecodeFunc
    loadkhr = "loadkhr"      # OpCooperativeMatrixLoadKHR: a pointer, a MemoryLayout and a stride (no tensor addressing)
    storekhr = "storekhr"    # OpCooperativeMatrixStoreKHR: a pointer, a MemoryLayout and a stride


SOURCES = (Op.load, Op.const, Op.generate, Op.loadview, Op.loaddecode, Op.loadkhr)
#: Every kind without operands: the sources a step draws, and a decode load through a view
#: (drawn as a decode load's attribute).
NO_OPERANDS = (*SOURCES, Op.loaddecodeview)
#: Sinks: nodes that store a value into an output buffer and define none.
SINKS = (Op.store, Op.storeview, Op.storekhr)
#: Nodes that own a tensor-layout object (and a region of a buffer).
TENSOR_OPS = (Op.load, Op.loadview, Op.loaddecode, Op.store, Op.storeview, Op.loaddecodeview)
#: Nodes that address memory through a pointer, a MemoryLayout and a stride (SPV_KHR_cooperative_matrix).
KHR_OPS = (Op.loadkhr, Op.storekhr)
#: Nodes that own a region of a buffer: the tensor nodes and the KHR loads and stores.
MEMORY_OPS = TENSOR_OPS + KHR_OPS
#: Nodes that own a tensor-layout object and a tensor-view object.
VIEW_OPS = (Op.loadview, Op.storeview, Op.loaddecodeview)
#: Loads with a DecodeFunc (they read the buffer of encoded blocks).
DECODE_OPS = (Op.loaddecode, Op.loaddecodeview)
#: Loads whose matrix elements are copied from a tensor of the matrix's component type.
PLAIN_LOADS = (Op.load, Op.loadview, Op.loadkhr)
ARITH = {Op.add: "+", Op.sub: "-", Op.mul: "*"}
#: Nodes that move values without arithmetic: they keep every bit, the sign of zero too.
MOVES = frozenset({Op.load, Op.loadview, Op.loadkhr, Op.transpose, *SINKS})
#: Run-time words per node kind (after the node's layout words, for load / store).
LAYOUT_WORDS = 28  # ctsgen.ops.tensor_layout_case.FAMILY_WORDS (checked in tests)
VIEW_WORDS = 44  # ctsgen.ops.tensor_view_case.FAMILY_WORDS: the layout's words, then the view's
WORDS = {Op.load: 1 + LAYOUT_WORDS, Op.store: 1 + LAYOUT_WORDS, Op.const: 1, Op.generate: 3,
         Op.perelement: 3, Op.scale: 1, Op.loadview: 1 + VIEW_WORDS, Op.loaddecode: 1 + LAYOUT_WORDS,
         Op.storeview: 1 + VIEW_WORDS, Op.loaddecodeview: 1 + VIEW_WORDS, Op.loadkhr: 3, Op.storekhr: 3}
W_S, W_R0, W_C0 = 0, 1, 2
#: A KHR load's or store's words after its region's offset: the Stride and the element offset in the region.
W_KHR_STRIDE, W_KHR_OFFSET = 1, 2


@dataclass(frozen=True)
class Node:
    """One instruction. ``args`` index earlier values; ``type`` is the result's type
    (for a store: the stored value's). Attributes by kind: load / store ``clampMode``
    and ``Dim``; perelement ``fn`` (affine / select); reduce ``mode`` and ``combine``;
    loadview / storeview also the view type's ``hasDimensions`` and ``permutation`` (VDim is
    its length); loaddecode also the block format ``decoder`` and its ``blockShape``;
    loaddecodeview both a view type's and a block format's attributes; loadkhr / storekhr
    the MemoryLayout ``layout`` (a constant; the stride and offset are run-time words)."""

    op: Op
    type: MatrixType
    args: tuple[int, ...] = ()
    clampMode: ClampMode | None = None
    Dim: int = 0
    fn: str = ""
    mode: ReduceMode | None = None
    combine: Combine | None = None
    hasDimensions: bool = False
    permutation: tuple[int, ...] = ()
    decoder: str = ""
    blockShape: tuple[int, ...] = ()
    layout: Layout | None = None

    def to_json(self) -> dict[str, Any]:
        o: dict[str, Any] = {"op": self.op.value, "type": self.type.to_json(), "args": list(self.args)}
        if self.clampMode is not None:
            o.update(clampMode=self.clampMode.name, Dim=self.Dim)
        if self.fn:
            o["fn"] = self.fn
        if self.mode is not None:
            o.update(mode=self.mode.name, combine=self.combine.value)
        if self.permutation:
            o.update(hasDimensions=self.hasDimensions, permutation=list(self.permutation))
        if self.decoder:
            o.update(decoder=self.decoder, blockShape=list(self.blockShape))
        if self.layout is not None:
            o["layout"] = self.layout.value
        return o

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> Node:
        return cls(Op(o["op"]), MatrixType.from_json(o["type"]), tuple(int(a) for a in o["args"]),
                   ClampMode[o["clampMode"]] if "clampMode" in o else None, int(o.get("Dim", 0)),
                   o.get("fn", ""), ReduceMode[o["mode"]] if "mode" in o else None,
                   Combine(o["combine"]) if "combine" in o else None, bool(o.get("hasDimensions", False)),
                   tuple(int(p) for p in o.get("permutation", ())), o.get("decoder", ""),
                   tuple(int(b) for b in o.get("blockShape", ())), Layout(o["layout"]) if "layout" in o else None)

    def tensor_type(self) -> str:
        """The node's tensor objects as GLSL types (a load's or a store's); a KHR load's or store's
        MemoryLayout."""
        if self.op in KHR_OPS:
            return f"a pointer, {self.layout.value}"
        t = f"tensorLayoutNV<{self.Dim}, {self.clampMode.name}>"
        if self.op in VIEW_OPS:
            has = "true" if self.hasDimensions else "false"
            t += f", tensorViewNV<{len(self.permutation)}, {has}, {', '.join(map(str, self.permutation))}>"
        if self.op in DECODE_OPS:
            t += f", {self.decoder} block {'x'.join(map(str, self.blockShape))}"
        return t

    def line(self, i: int) -> str:
        """One readable line: ``v3 = muladd(v0, v1, v2)  : float32 Accumulator``."""
        args = ", ".join(f"v{a}" for a in self.args)
        t = f"{self.type.component.name} {self.type.use.name}"
        if self.op in SINKS:
            return f"{self.op.value}(v{self.args[0]}) through {self.tensor_type()}"
        extra = ""
        if self.op in MEMORY_OPS:
            extra = self.tensor_type()
        elif self.op is Op.perelement:
            extra = self.fn
        elif self.op is Op.reduce:
            extra = f"{self.mode.name}, {self.combine.value}"
        inner = ", ".join(x for x in (args, extra) if x)
        return f"v{i} = {self.op.value}({inner})  : {t}"


def result_bound(node: Node, bounds: list[int]) -> int:
    """Largest |value| of the node's result over every run-time draw (exact domain)."""
    b = [bounds[a] for a in node.args]
    if node.op in NO_OPERANDS:  # decode loads: encode_small_blocks' values, decision cm2-program-decode-small
        return SMALL
    if node.op is Op.muladd:
        return SIDE * b[0] * b[1] + b[2]
    if node.op in (Op.convert, Op.transpose):
        return b[0]
    if node.op is Op.perelement:
        if node.fn == "select":
            return max(b[0], max(SCALARS))
        return max(SCALARS) * b[0] + b[1] + SIDE * SIDE - 1  # x * s + m + (row * COLS + col)
    if node.op is Op.reduce:
        n = domain_size(node.mode, SIDE, SIDE)
        return n * b[0] if node.combine is Combine.sum else b[0]
    if node.op is Op.add or node.op is Op.sub:
        return b[0] + b[1]
    if node.op is Op.mul:
        return b[0] * b[1]
    if node.op is Op.scale:
        return max(SCALARS) * b[0]
    return b[0]  # store, storeview


def view_variant(n: Node) -> ViewVariant:
    """The tensor-view family's variant for a view load or view store node."""
    operation = Operation.store if n.op is Op.storeview else Operation.load
    return ViewVariant(operation, n.Dim, n.clampMode or ClampMode.Undefined, n.type, n.hasDimensions, n.permutation)


def decode_variant(n: Node) -> DecodeVariant:
    """The decode family's variant for a decode load node (with or without a view)."""
    return DecodeVariant(n.Dim, n.clampMode or ClampMode.Undefined, n.type, n.decoder, n.blockShape)


def _as_drawn(m: MatrixType) -> MatrixType:
    """``m`` at the workgroup size :data:`TYPES` are written with (a program runs in one subgroup of
    the device's size, :func:`in_subgroup`; the operand rules do not depend on it). ``m`` itself where it
    already is: the operand rules compare types by value."""
    return m if m.workgroup_size == SUBGROUP else replace(m, workgroup_size=SUBGROUP)


def in_subgroup(program: Program, size: int) -> Program:
    """``program`` with every matrix in a subgroup of ``size`` invocations (the device's subgroupSize:
    a Subgroup-scope matrix's workgroup is one whole subgroup)."""
    return Program(tuple(replace(n, type=replace(n.type, workgroup_size=size)) for n in program.nodes))


def operand_rule(node: Node, operand_types: list[MatrixType]) -> str | None:
    """None if the operands' types fit the node, else why not (every matrix of a program has one
    workgroup size: that of its subgroup)."""
    if any(x.workgroup_size != node.type.workgroup_size for x in operand_types):
        return f"{node.op.value} mixes workgroup sizes"
    if operands_fit(node, operand_types):
        return None
    return (f"{node.op.value} cannot take {[_as_drawn(x).label for x in operand_types]} "
            f"to {_as_drawn(node.type).label}")


def operands_fit(node: Node, operand_types: list[MatrixType]) -> bool:
    """Whether :func:`operand_rule` finds no fault, without its reason (a drawn program tries many
    candidates)."""
    if any(x.workgroup_size != node.type.workgroup_size for x in operand_types):
        return False
    t, ts = _as_drawn(node.type), [_as_drawn(x) for x in operand_types]
    if node.op is Op.muladd:
        return ts[0] == A16 and ts[1] == B16 and ts[2] == t and t.use is MatrixUse.Accumulator
    if node.op is Op.convert:
        s = ts[0]
        return s.use is MatrixUse.Accumulator and s != t and (t.use is MatrixUse.Accumulator or t.component is F16)
    if node.op is Op.transpose:
        return ts[0] == ACC16 and t == B16
    if node.op is Op.reduce:
        return ts[0] == t and t.use is MatrixUse.Accumulator
    if node.op is Op.perelement:
        return all(x == t for x in ts) and len(ts) == (2 if node.fn == "affine" else 1)
    if node.op in ARITH:
        return ts == [t, t]
    if node.op is Op.scale or node.op in SINKS:
        return ts == [t]
    return not ts


@dataclass(frozen=True)
class Program(StraightLine):
    """A straight-line program; valid (types, operand order, exact-domain bounds) by check."""

    nodes: tuple[Node, ...]
    NODE = Node  # StraightLine.from_json reads nodes back with it

    def __post_init__(self) -> None:
        bounds: list[int] = []
        for i, n in enumerate(self.nodes):
            if any(a >= i or a < 0 or self.nodes[a].op in SINKS for a in n.args):
                raise ValueError(f"node {i} ({n.op.value}) reads a value not defined before it")
            why = operand_rule(n, [self.nodes[a].type for a in n.args])
            if why:
                raise ValueError(f"node {i}: {why}")
            bounds.append(result_bound(n, bounds))
            if bounds[-1] > EXACT[n.type.component]:
                raise ValueError(f"node {i} ({n.op.value}) may reach {bounds[-1]}, beyond the exact integers of "
                                 f"{n.type.component.name}; the exact domain needs a shorter chain")
        if not any(n.op in SINKS for n in self.nodes):
            raise ValueError("a program stores at least one value")

    def bounds(self) -> list[int]:
        out: list[int] = []
        for n in self.nodes:
            out.append(result_bound(n, out))
        return out

    @property
    def ops(self) -> int:
        """Program length: the nodes that are not sinks."""
        return sum(n.op not in SINKS for n in self.nodes)

    def words_of(self, node: Node) -> int:
        return WORDS.get(node.op, 0)

    # -- structure (derived from the nodes once: a case asks for it per node) ---------------
    @cached_property
    def _layout_nodes(self) -> tuple[int, ...]:
        return tuple(i for i, n in enumerate(self.nodes) if n.op in TENSOR_OPS)

    def layout_nodes(self) -> list[int]:
        """The nodes that own a tensor-layout object."""
        return list(self._layout_nodes)

    @cached_property
    def _memory_nodes(self) -> tuple[int, ...]:
        return tuple(i for i, n in enumerate(self.nodes) if n.op in MEMORY_OPS)

    def memory_nodes(self) -> list[int]:
        """The nodes that own a region of a buffer: the tensor nodes and the KHR loads and stores."""
        return list(self._memory_nodes)

    @cached_property
    def _buffers(self) -> tuple[tuple[str, ComponentType], ...]:
        out = []
        for kind, ops in (("in", PLAIN_LOADS), ("out", SINKS)):
            for c in (F16, F32):
                if any(n.op in ops and n.type.component is c for n in self.nodes):
                    out.append((f"{kind}_{c.name}", c))
            if kind == "in" and any(n.op in DECODE_OPS for n in self.nodes):
                out.append(("in_blocks", ComponentType.uint32))
        return tuple(out)

    def buffers(self) -> list[tuple[str, ComponentType]]:
        """(name, component) of each storage buffer: inputs of loads and view loads (by
        component), the encoded blocks of decode loads (uint32 words), outputs of stores and
        view stores (by component; their regions share it)."""
        return list(self._buffers)

    def debug_buffers(self) -> list[tuple[str, ComponentType]]:
        """(name, component) of the buffers a debug re-run adds after :meth:`buffers`: one per
        component type of the program's values, each holding every value of that type."""
        return [(f"debug_{c.name}", c) for c in (F16, F32)
                if any(n.op not in SINKS and n.type.component is c for n in self.nodes)]

    def debug_slots(self) -> dict[int, tuple[int, int]]:
        """Node i (each node that defines a value) -> (its debug buffer's index among
        ``buffers() + debug_buffers()``, element offset there): its SIDE x SIDE elements,
        row-major, the values of one component type in program order."""
        names = [b for b, _ in self.buffers() + self.debug_buffers()]
        count = {F16: 0, F32: 0}
        out: dict[int, tuple[int, int]] = {}
        for i, n in enumerate(self.nodes):
            if n.op in SINKS:
                continue
            c = n.type.component
            out[i] = (names.index(f"debug_{c.name}"), count[c] * SIDE * SIDE)
            count[c] += 1
        return out

    @cached_property
    def _buffer_of(self) -> dict[int, int]:
        names = [b for b, _ in self._buffers]
        out = {}
        for i in self._memory_nodes:
            n = self.nodes[i]
            name = "in_blocks" if n.op in DECODE_OPS else \
                f"{'in' if n.op in PLAIN_LOADS else 'out'}_{n.type.component.name}"
            out[i] = names.index(name)
        return out

    def buffer_of(self, i: int) -> int:
        """The buffer (index into :meth:`buffers`) whose region memory node i loads or stores."""
        return self._buffer_of[i]

