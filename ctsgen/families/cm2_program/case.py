"""The cm2-program family's case model: a straight-line program of cooperative-matrix operations.

A :class:`ProgramVariant` is the compile-time signature, the program's
*shape* (program.py): one shader serves every case of that shape. A
:class:`ProgramCase` adds the run-time parameters of each node: the state
of each tensor-layout object (a :class:`TensorLayoutCase`, in the
tensor-layout family's vocabulary and word format), the scalars ``s``,
``r0``, ``c0`` of constants, generated matrices, per-element functions and
scalar multiplies, and a data seed.

A view load's or view store's parameters are a tensor-view case
(:class:`TensorViewCase` of operation load / store: the layout, then the view's
dimensions, strides and clip, in the tensor-view family's word format; a view
store's is drawn race-free by that family's strategy); a decode load's a decode case
(:class:`DecodeCase`: the layout with blockSize = the block shape, and the seed of its
encoded blocks); a decode load through a view's both, over one layout
(:class:`DecodeViewCase`).

A KHR load's or store's (OpCooperativeMatrixLoadKHR / StoreKHR, no tensor
addressing) is a :class:`KhrAccess` (ops/khr_addressing.py): its MemoryLayout is the
node's (compile time); the Stride and the element offset within the node's region are
run-time words. A load's stride is any aligned value >= 0 (0 repeats a line, a short
stride overlaps lines); a store's keeps its lines disjoint (strategies/khr.py).

Bindings: one input buffer per component type that a load or view load reads,
one uint32 buffer of encoded blocks if the program decodes, and one output
buffer per component type that a store or view store writes (Program.buffers). Every load
or store owns a region of its buffer (its tensor's extent; a decode load's
in uint32 words); the node's first word is the region's element offset
within the case's data. A decode load's region holds blocks whose decoded
values are integers in [-2, 2] (ops.decode.encode_small_blocks).
Output regions start poisoned, so an element a store should not write
(out of bounds, discarded) is visible.

Data domains (``ProgramCase.domain``): ``exact`` (the shrink target) loads small
integers and is judged bit for bit (decision "cm2-program-exact-domain");
``float`` loads full-significand floats (:func:`input_values`) and is judged
within each stored element's propagated bound (bounds.py, decision
"cm2-program-float-domain"). Run-time scalars, clamp values and decode blocks
are the exact domain's in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.families.cm2_program.bounds import node_bounds, stored_bounds
from ctsgen.families.cm2_program.oracle import Run, evaluate
from ctsgen.families.cm2_program.program import (ARITH, KHR_OPS, MOVES, SIDE, SINKS, SMALL, W_C0, W_KHR_OFFSET,
                                                 W_KHR_STRIDE, W_R0, W_S, WORDS, Node, Op, Program, decode_variant,
                                                 view_variant)
from ctsgen.ops.cm2 import requirements_for
from ctsgen.ops.decode_case import DecodeCase
from ctsgen.ops.decode import FORMATS, encode_small_blocks
from ctsgen.ops import khr_addressing as khr
from ctsgen.ops.khr_addressing import KhrAccess
from ctsgen.ops import tensor_view as tv
from ctsgen.ops.tensor_view_case import TensorViewCase
from ctsgen.ops import tensor_layout as tl
from ctsgen.ops.tensor_layout_case import LayoutVariant, TensorLayoutCase
from ctsgen.ops.tensor_layout import Operation
from ctsgen.model.tensor import ClampMode, TensorLayout
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.oracle.values import from_bits, sentinel_bits, to_bits
from ctsgen.templates import render

FAMILY_NAME = "cm2-program"

_LOADS = ["cooperativeMatrixTensorAddressing", "cooperativeMatrixBlockLoads"]
FLEXIBLE = "cooperativeMatrixFlexibleDimensions"
_FEATURES = {Op.load: _LOADS, Op.loadview: _LOADS, Op.loaddecode: _LOADS, Op.loaddecodeview: _LOADS,
             Op.store: ["cooperativeMatrixTensorAddressing"], Op.storeview: ["cooperativeMatrixTensorAddressing"],
             Op.generate: ["cooperativeMatrixPerElementOperations"],
             Op.perelement: ["cooperativeMatrixPerElementOperations"], Op.reduce: ["cooperativeMatrixReductions"],
             Op.transpose: ["cooperativeMatrixConversions"], Op.convert: ["cooperativeMatrixConversions"]}


def op_features(op: Op) -> list[str]:
    """The cm2 feature bits a node of kind ``op`` needs (none for MulAdd, arithmetic, scale, const, and
    the KHR loads and stores)."""
    return _FEATURES.get(op, [])


#: The tensor-layout family's word format, which each load / store node's words follow.
_TL_WORDS = dict(FLAGS=tl.W_FLAGS, CLAMP_VALUE=tl.W_CLAMP_VALUE, BLOCK_SIZE=tl.W_BLOCK_SIZE,
                 DIMENSION=tl.W_DIMENSION, STRIDE=tl.W_STRIDE, OFFSET=tl.W_OFFSET, SPAN=tl.W_SPAN,
                 F_BLOCK=tl.FLAG_SET_BLOCK_SIZE, F_STRIDE=tl.FLAG_SET_STRIDE, F_SLICE=tl.FLAG_SLICE,
                 F_CLAMP=tl.FLAG_SET_CLAMP_VALUE)
#: The tensor-view family's view words, which follow the layout's in a view load's or view store's words.
_TV_WORDS = dict(FLAGS=tv.W_VIEW_FLAGS, DIMENSION=tv.W_VIEW_DIMENSION, STRIDE=tv.W_VIEW_STRIDE, CLIP=tv.W_CLIP,
                 F_DIMENSION=tv.VIEW_SET_DIMENSION, F_STRIDE=tv.VIEW_SET_STRIDE, F_CLIP=tv.VIEW_SET_CLIP)


#: Slang 2026.12 aborts converting an unsigned integer matrix to a signed one of another width
#: (docs/repros/slang-unsigned-to-signed): such a conversion goes through the result width's unsigned type.
SLANG_VIA_UNSIGNED = {ComponentType.sint8: ComponentType.uint8, ComponentType.sint32: ComponentType.uint32}


def slang_convert(s: MatrixType, r: MatrixType, value: str) -> str:
    """The Slang expression converting ``value`` of type ``s`` to ``r`` (as cm2-convert's source: ``convertUse``
    for a Use change alone, else the result type's constructor, through the unsigned type where needed)."""
    if s.component is r.component and s.use is not r.use:
        return f"{value}.convertUse<{r.use.slang}>()"
    if (not s.component.is_float and s.component.dtype.kind == "u" and r.component in SLANG_VIA_UNSIGNED
            and s.component.size != r.component.size):
        return f"{r.slang}({replace(r, component=SLANG_VIA_UNSIGNED[r.component]).slang}({value}))"
    return f"{r.slang}({value})"


@dataclass(frozen=True)
class ProgramVariant:
    """Compile-time signature: the program's shape. ``debug``: the same program re-emitted for a
    debug re-run (a failing program's REPORT.md, ctsgen.runner.debug_run): every value a node
    defines is also stored, row-major with OpCooperativeMatrixStoreKHR, to a debug buffer
    (Program.debug_slots), after the program's own buffers."""

    program: Program
    debug: bool = False

    @cached_property
    def id(self) -> str:
        p = self.program
        return f"cm2_program.ops{p.ops}.{p.digest}" + (".debug" if self.debug else "")

    @property
    def local_size_x(self) -> int:
        return self.program.nodes[0].type.workgroup_size

    def all_buffers(self) -> list[tuple[str, ComponentType]]:
        """The program's buffers, then (debug variant) its debug buffers."""
        p = self.program
        return p.buffers() + (p.debug_buffers() if self.debug else [])

    def buffers(self) -> tuple[BufferSpec, ...]:
        return tuple(BufferSpec(k + 1, name, c.dtype.name) for k, (name, c) in enumerate(self.all_buffers()))

    def requirements(self) -> Requirements:
        """The nodes' cm2 features, and cooperativeMatrixFlexibleDimensions for the 16 x 16 types at the
        device's subgroup size (the family's ``needs``: decision "khr-routes")."""
        feats = [FLEXIBLE] + [f for n in self.program.nodes for f in _FEATURES.get(n.op, [])]
        return requirements_for(feats, [n.type for n in self.program.nodes])

    def _template_context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        """What the GLSL and the Slang template both read: the nodes, their buffers, words and slots."""
        p = self.program
        buffers = self.all_buffers()
        H = len(buffers)
        return dict(v=self, nodes=list(enumerate(p.nodes)), bases=[H + b for b in p.word_bases], buffers=buffers,
                    H=H, slots=p.debug_slots() if self.debug else {}, SIDE=SIDE,
                    buffer_of={i: p.buffer_of(i) for i in p.memory_nodes()}, ARITH=ARITH,
                    comps=sorted({n.type.component for n in p.nodes}, key=lambda c: c.name), words=H + p.words,
                    W=dict(S=W_S, R0=W_R0, C0=W_C0), TL=_TL_WORDS, TV=_TV_WORDS,
                    KHR=dict(STRIDE=W_KHR_STRIDE, OFFSET=W_KHR_OFFSET), lines=p.lines(),
                    formats=sorted({n.decoder for n in p.nodes if n.decoder}), FORMATS=FORMATS,
                    baked=None if baked is None else [int(w) for w in baked])

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        return render(Path(__file__).parent, "shader.comp.j2", **self._template_context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route, docs/spec-decisions.md "Which families Slang
        expresses"): every load and store as the instruction itself (``spirv_asm``: no ``Aligned 16``, the
        zero matrix as a tensor load's Object, a decode load naming its function), the layouts and views
        as tensor-layout's and tensor-view's, the other nodes as cm2-elementwise's, cm2-reduce's and
        cm2-convert's Slang sources write them."""
        def sliced(n: Node) -> list[int]:  # Slice's operands, in order
            return [w for k in range(n.Dim) for w in (_TL_WORDS["OFFSET"] + k, _TL_WORDS["SPAN"] + k)]

        return render(Path(__file__).parent, "shader.slang.j2", sliced=sliced, convert=slang_convert,
                      **self._template_context(baked))

    def to_json(self) -> dict[str, Any]:
        return {"program": self.program.to_json(), **({"debug": True} if self.debug else {})}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ProgramVariant:
        return cls(Program.from_json(o["program"]), bool(o.get("debug", False)))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: evaluate each case's program on the host buffers (a debug
        variant also writes each node's value to its debug slot)."""
        slots = self.program.debug_slots() if self.debug else {}
        for words, offs in zip(params, offsets):
            values = evaluate(Run(self.program, words, buffers, offs))
            for i, (b, at) in slots.items():
                start = int(offs[b]) + at
                buffers[b][start:start + SIDE * SIDE] = values[i].ravel()


@dataclass(frozen=True)
class Scalars:
    """A node's run-time scalars: ``s`` (a constant's value, a select's or a scale's
    scalar; an integer of the node's component type), ``r0`` / ``c0`` (select)."""

    s: int = 1
    r0: int = 0
    c0: int = 0


@dataclass(frozen=True)
class DecodeViewCase:
    """A decode load through a view: the decode family's case (``decode``: the layout with
    blockSize = the block shape, the seed of the encoded blocks) and the tensor-view family's
    view state over that same layout (``view``). Its words are the view case's: the layout's,
    then the view's."""

    decode: DecodeCase
    view: TensorViewCase

    def __post_init__(self) -> None:
        if self.view.layout_case != self.decode.layout_case:
            raise ValueError("a decode load through a view has one layout: the view case's must be the decode case's")

    def layout(self) -> TensorLayout:
        return self.decode.layout()

    def params(self) -> np.ndarray:
        return self.view.params()

    def describe(self) -> dict[str, Any]:
        return {**self.decode.describe(), **self.view.describe()}


NodeParams = TensorLayoutCase | TensorViewCase | DecodeCase | DecodeViewCase | KhrAccess | Scalars | None
#: The run-time parameter type of each tensor node kind.
TENSOR_PARAMS = {Op.load: TensorLayoutCase, Op.store: TensorLayoutCase, Op.loadview: TensorViewCase,
                 Op.storeview: TensorViewCase, Op.loaddecode: DecodeCase, Op.loaddecodeview: DecodeViewCase}


def decode_case_of(q: NodeParams) -> DecodeCase | None:
    """The decode family's case of a node that reads encoded blocks (through a view or not)."""
    return q.decode if isinstance(q, DecodeViewCase) else q if isinstance(q, DecodeCase) else None


#: a case's data domains, the shrink target first
DOMAINS = ("exact", "float")
#: the float domain's smallest |input|: normal in float16, no subnormal operand a device may flush
FLOAT_LOW = 0.125


def input_values(component: ComponentType, n: int, seed: int, floats: bool = False) -> np.ndarray:
    """Small integers in [-SMALL, SMALL] (the exact domain); with ``floats``, full-significand
    values of the type with |v| in [FLOAT_LOW, SMALL] (rounded to nearest from a uniform draw),
    random sign: the same magnitudes, so the exact domain's bounds on every value hold too."""
    rng = np.random.Generator(np.random.PCG64(seed))
    if floats:
        v = rng.uniform(FLOAT_LOW, SMALL, n) * rng.choice([-1.0, 1.0], n)
        return v.astype(component.dtype)
    return rng.integers(-SMALL, SMALL + 1, size=n).astype(component.dtype)


@dataclass(frozen=True)
class ProgramCase:
    """One run of a program: each node's run-time parameters, a data seed and the data domain."""

    family: ClassVar[str] = FAMILY_NAME

    shader: ProgramVariant
    nodes: tuple[NodeParams, ...]
    seed: int = 0
    #: where the input data come from: "exact" (small integers, bit-exact verdict) or "float"
    #: (full-significand floats, judged within propagated bounds: bounds.py)
    domain: str = "exact"

    def __post_init__(self) -> None:
        p = self.shader.program
        if self.domain not in DOMAINS:
            raise ValueError(f"domain {self.domain!r}: use one of {', '.join(DOMAINS)}")
        if len(self.nodes) != len(p.nodes):
            raise ValueError(f"{len(self.nodes)} node parameters for a program of {len(p.nodes)} nodes")
        for i, (n, q) in enumerate(zip(p.nodes, self.nodes)):
            want = TENSOR_PARAMS.get(n.op)
            if n.op in KHR_OPS:
                ok = isinstance(q, KhrAccess) and q.layout is n.layout and q.pointee is None
                if ok:  # a valid access (aligned; a store's lines disjoint), or ValueError naming the rule
                    khr.check_access(q, SIDE, SIDE, n.type.component, is_store=n.op in SINKS)
            elif want is not None:
                ok = type(q) is want
            else:
                ok = isinstance(q, Scalars) if n.op in WORDS else q is None
            if not ok:
                raise ValueError(f"node {i} ({n.op.value}) has run-time parameters of the wrong kind: {q!r}")

    def variant(self) -> ProgramVariant:
        return self.shader

    def extents(self) -> dict[int, int]:
        """Elements of each memory node's region (a decode load's: uint32 words of blocks; a KHR
        load's or store's: up to the last element its access touches)."""
        out = {}
        p = self.shader.program
        for i in p.memory_nodes():
            q = self.nodes[i]
            d = decode_case_of(q)
            if isinstance(q, KhrAccess):
                out[i] = khr.extent_components(q, SIDE, SIDE, p.nodes[i].type.component)
            else:
                out[i] = d.shader.input_words(d.layout()) if d is not None else q.layout().extent()
        return out

    def layout_regions(self) -> tuple[dict[int, int], list[int]]:
        """(element offset of each memory node's region in its buffer, buffer sizes)."""
        start, sizes = self._regions
        return dict(start), list(sizes)

    @cached_property
    def _regions(self) -> tuple[dict[int, int], list[int]]:
        # replays every layout's instructions: once per case (params, data and blocks read it)
        p = self.shader.program
        sizes = [0] * len(p.buffers())
        start: dict[int, int] = {}
        for i, ext in self.extents().items():
            b = p.buffer_of(i)
            start[i], sizes[b] = sizes[b], sizes[b] + ext
        return start, sizes

    def params(self) -> np.ndarray:
        p = self.shader.program
        w = np.zeros(p.words, np.uint32)
        start, _ = self._regions
        for i, (n, q, base) in enumerate(zip(p.nodes, self.nodes, p.word_bases)):
            if n.op in TENSOR_PARAMS:
                w[base] = start[i]
                words = q.params()
                w[base + 1:base + 1 + len(words)] = words
            elif n.op in KHR_OPS:
                w[base], w[base + W_KHR_STRIDE], w[base + W_KHR_OFFSET] = start[i], q.stride, q.offset
            elif isinstance(q, Scalars):
                w[base + W_S] = int(to_bits(np.asarray([q.s], dtype=n.type.component.dtype), n.type.component)[0])
                if WORDS[n.op] > 1:
                    w[base + W_R0], w[base + W_C0] = q.r0, q.c0
        return w

    def data(self) -> CaseData:
        p = self.shader.program
        _, sizes = self._regions
        initial = []
        for k, ((name, comp), size) in enumerate(zip(p.buffers(), sizes)):
            if name == "in_blocks":
                initial.append(self.blocks(size))
            elif name.startswith("in_"):
                initial.append(input_values(comp, size, self.seed + 7919 * k, self.domain == "float"))
            else:
                initial.append(np.full(size, from_bits(sentinel_bits(comp), comp), dtype=comp.dtype))
        words = self.params()
        run = evaluated_on(self, words, initial)  # once: the expected values and the float bounds read it
        return CaseData(words, initial, _expected(run), _tolerance(run) if self.domain == "float" else None)

    def blocks(self, size: int) -> np.ndarray:
        """The encoded-blocks buffer: each decode load's region holds its format's blocks, drawn
        from its case's seed with decoded values in [-2, 2], padded to whole uint32 words."""
        p = self.shader.program
        start, _ = self._regions
        out = np.zeros(size, np.uint32)
        for i in p.memory_nodes():
            q = decode_case_of(self.nodes[i])
            if q is not None:
                raw = encode_small_blocks(q.shader.format, q.layout().extent(), q.seed).ravel()
                padded = np.zeros(4 * q.shader.input_words(q.layout()), np.uint8)
                padded[:raw.size] = raw
                out[start[i]:start[i] + padded.size // 4] = padded.view(np.uint32)
        return out

    def evaluated(self) -> Run:
        """The composed oracle run on the case's own data: ``values`` holds every node's value."""
        d = self.data()
        return evaluated_on(self, d.params, d.initial)

    def values(self) -> list[np.ndarray | None]:
        """Every node's expected value (a store's is None), for a report's first differing node."""
        return self.evaluated().values

    def compare_rule(self) -> CompareRule:
        """Bit for bit. A program that computes in a float type does so in a shader without
        SignedZeroInfNanPreserve, so the sign of a zero does not count (decision "signed-zero",
        as for the single-op families); a program that only moves data (loads, transposes,
        stores) keeps every bit (decision "data-movement-bits"). The float
        domain: within each stored element's propagated bound (bounds.py), values compared
        (+0 == -0)."""
        if self.domain == "float":
            return CompareRule("tolerance")
        computes = any(n.type.component.is_float and n.op not in MOVES for n in self.shader.program.nodes)
        return CompareRule("bitwise", signed_zero=False if computes else None)

    def to_json(self) -> dict[str, Any]:
        def node(q: NodeParams) -> Any:
            if isinstance(q, KhrAccess):  # its MemoryLayout is the node's
                return {"stride": q.stride, "offset": q.offset}
            if isinstance(q, DecodeViewCase):
                return {"decode": node(q.decode), "view": node(q.view)}
            if isinstance(q, (TensorLayoutCase, TensorViewCase, DecodeCase)):
                o = {k: v for k, v in q.to_json().items() if k not in ("family", "variant", "data")}
                if "layout" in o:  # a view's or a decode load's layout case: its variant is the node's
                    o["layout"] = node(q.layout_case)
                return o
            return None if q is None else {"s": q.s, "r0": q.r0, "c0": q.c0}

        out = {"family": FAMILY_NAME, "variant": self.shader.to_json(), "nodes": [node(q) for q in self.nodes],
               "seed": self.seed}
        if self.domain != "exact":  # an exact case's JSON (and name) is what it was before the float domain
            out["domain"] = self.domain
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ProgramCase:
        v = ProgramVariant.from_json(o["variant"])
        nodes: list[NodeParams] = []

        def layout(n: Node, q: dict[str, Any]) -> dict[str, Any]:
            return {**q, "variant": layout_variant(n).to_json(), "data": {"pattern": "iota", "seed": 0}}

        def view_case(n: Node, q: dict[str, Any]) -> TensorViewCase:
            return TensorViewCase.from_json({**q, "variant": view_variant(n).to_json(),
                                             "layout": layout(n, q["layout"])})

        def decode_case(n: Node, q: dict[str, Any]) -> DecodeCase:
            return DecodeCase.from_json({**q, "variant": decode_variant(n).to_json(),
                                         "layout": layout(n, q["layout"])})

        for n, q in zip(v.program.nodes, o["nodes"]):
            if n.op in (Op.load, Op.store):
                nodes.append(TensorLayoutCase.from_json(layout(n, q)))
            elif n.op in (Op.loadview, Op.storeview):
                nodes.append(view_case(n, q))
            elif n.op is Op.loaddecode:
                nodes.append(decode_case(n, q))
            elif n.op is Op.loaddecodeview:
                nodes.append(DecodeViewCase(decode_case(n, q["decode"]), view_case(n, q["view"])))
            elif n.op in KHR_OPS:
                nodes.append(KhrAccess(n.layout, int(q["stride"]), int(q["offset"])))
            else:
                nodes.append(None if q is None else Scalars(int(q["s"]), int(q["r0"]), int(q["c0"])))
        return cls(v, tuple(nodes), int(o["seed"]), str(o.get("domain", "exact")))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def describe(self) -> dict[str, Any]:
        """The program as readable lines, and each tensor-layout object's state (for REPORT.md)."""
        p = self.shader.program
        out: dict[str, Any] = {"program": p.lines(), "length": p.ops}
        if self.domain != "exact":
            out["domain"] = self.domain
        for i in p.memory_nodes():
            q = self.nodes[i]
            if isinstance(q, KhrAccess):
                out[f"pointer v{i}"] = {"layout": q.layout.value, "stride": q.stride, "offset": q.offset}
                continue
            t = q.layout()
            out[f"layout v{i}"] = {"clampMode": t.clampMode.name, "layoutDimension": list(t.layoutDimension),
                                   "offset": list(t.offset), "span": list(t.span), "clampValue": t.clampValue,
                                   "blockSize": list(t.blockSize)}
            if isinstance(q, (TensorViewCase, DecodeCase, DecodeViewCase)):
                out[f"layout v{i}"].update({k: v for k, v in q.describe().items() if k != "layout"})
        return out


def evaluated_on(case: ProgramCase, params: np.ndarray, initial: list[np.ndarray]) -> Run:
    """The composed oracle run on copies of ``initial``: every node evaluated in order by its
    single-operation family's oracle (oracle.py), the stores writing into the copies."""
    run = Run(case.shader.program, np.asarray(params), [np.array(b, copy=True) for b in initial],
              np.zeros(len(initial), np.int64))
    evaluate(run)
    return run


def expected_on(case: ProgramCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """The program's oracle on given inputs (FamilySpec.expectation): every node evaluated in
    order by its single-operation family's oracle (oracle.py), the stores writing into copies
    of the output buffers. The tensor regions are the ones ``params`` names, so under an
    expected deviation (ctsgen.mutants.deviations) a load replays its layout with the deviated
    OpTensorLayoutSetDimensionNV over the spec case's data (docs/spec-decisions.md,
    "expected-deviation"). Input buffers are not checked (None)."""
    return _expected(evaluated_on(case, params, initial))


def _expected(run: Run) -> list[np.ndarray | None]:
    return [None if name.startswith("in_") else o for (name, _), o in zip(run.program.buffers(), run.buffers)]


def layout_variant(n: Node) -> LayoutVariant:
    """The tensor-layout family's variant for a tensor node (its case type then holds
    and checks the node's layout parameters)."""
    return LayoutVariant(Operation.store if n.op in SINKS else Operation.load, n.Dim,
                         n.clampMode or ClampMode.Undefined, n.type)



def tolerance_on(case: ProgramCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """A float-domain case's tolerance: each stored element's propagated bound (bounds.py) where
    its store writes it, 0 elsewhere in the output buffers (the poison stays); None for inputs."""
    return _tolerance(evaluated_on(case, params, initial))


def _tolerance(run: Run) -> list[np.ndarray | None]:
    tol = stored_bounds(run, node_bounds(run))
    return [None if name.startswith("in_") else t for (name, _), t in zip(run.program.buffers(), tol)]
