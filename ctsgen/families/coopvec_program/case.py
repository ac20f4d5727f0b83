"""The coopvec-program family's case model: a chain of cooperative-vector layers (program.py).

A :class:`ProgramVariant` is the compile-time signature, the program's shape:
one shader serves every case of that shape. A :class:`ProgramCase` adds the
run-time parameters of each node: a MatMulAdd's MatrixOffset, MatrixStride
and BiasOffset (:class:`LayerParams`, the coopvec family's operands and
rules: VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10096 to -10098), an
activation's scalars (:class:`Scalars`), and a data seed.

Bindings (Program.buffers): the input vectors, one byte buffer holding every
layer's bias (each at its BiasOffset), the results, then per layer its
matrix (bytes, 64-byte aligned per case) and, for an optimal layout, the
buffer the backend converts it into (a MatrixConversion, as the coopvec
family does). Each of the program's ``local`` invocations of a workgroup
loads its own input vector and stores its own result, 16-aligned; the
results start poisoned, so a component past the stored vector must keep the
poison. The results hold LOCAL (a full subgroup's) vectors even for a
partial subgroup, so the lanes past the workgroup, which no invocation
stores, must keep the poison too. A program with control flow (program.Ctl)
has a last binding, ``control``: one uint32 word per invocation per
controlled node (an ``if``'s bit 0, a ``loop``'s trip count 0 .. MAX_TRIPS),
drawn with the data from its own stream of the seed, so a case without
control flow draws the data it drew before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import DEVICE_LAYOUT_KEY, BufferSpec, MatrixConversion
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops import coopvec as matmul_oracle
from ctsgen.ops import coopvec_elementwise as element_oracle
from ctsgen.ops import coopvec_elementwise_slang as coopvec_slang
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.families.coopvec_program.bounds import float_domain_rule, store_bound
from ctsgen.families.coopvec_program.data import input_vectors, layer_values, place_bias, place_matrix
from ctsgen.families.coopvec_program.oracle import (W_BOFF, W_MOFF, W_S, W_STRIDE, W_T, Run, eval_node,
                                                    evaluate)
from ctsgen.ops.coopvec_matrix import MatrixLayout
from ctsgen.families.coopvec_program.program import (GRAD_INIT, LOCAL, MAX_TRIPS, Ctl, Layer, Node, Op, Program,
                                                     act_glsl)
from ctsgen.model.types import coopvec_combination_feature, coopvec_component_type_feature
from ctsgen.oracle.values import from_bits, sentinel_bits, to_bits
from ctsgen.templates import render

FAMILY_NAME = "coopvec-program"
#: the device extension behind OpCompositeConstructReplicateEXT (an activation's broadcast scalars)
REPLICATED = "VK_EXT_shader_replicated_composites"


@dataclass(frozen=True)
class ProgramVariant:
    """Compile-time signature: the program's shape."""

    program: Program

    @cached_property
    def id(self) -> str:
        p = self.program
        return f"coopvec_program.layers{len(p.layers())}.ops{p.ops}.{p.digest}"

    @property
    def local_size_x(self) -> int:
        return self.program.local

    def buffers(self) -> tuple[BufferSpec, ...]:
        return tuple(BufferSpec(k + 1, name, dtype) for k, (name, dtype) in enumerate(self.program.buffers()))

    def requirements(self) -> Requirements:
        """cooperativeVector, each layer's advertised combination (VUID-RuntimeSpirv-
        OpCooperativeVectorMatrixMulNV-10089) and every vector's component type (VUID-RuntimeSpirv-
        OpTypeCooperativeVector-10095). An activation broadcasts its scalars with the
        ``coopvecNV<T, N>(s)`` constructor, which glslang emits as OpCompositeConstructReplicateEXT
        (SPV_EXT_replicated_composites): such a program needs VK_EXT_shader_replicated_composites
        (its feature shaderReplicatedComposites is enabled with it by the Vulkan backend; the
        read-out profiles list extensions, not that feature)."""
        p = self.program
        feats = ["cooperativeVector"]
        feats += [coopvec_combination_feature(L.inputType.vk, L.inputInterpretation.vk, L.matrixInterpretation.vk,
                                              L.biasInterpretation.vk, L.resultType.vk, L.transpose)
                  for L in p.layers()]
        feats += [coopvec_component_type_feature(c.vk) for c in dict.fromkeys(n.type.component for n in p.nodes)]
        feats += ["cooperativeVectorTraining"] * p.training
        replicated = any(n.op is Op.act or (n.ctl is Ctl.branch and not n.keeps) for n in p.nodes)  # V(0) too
        exts = ("VK_NV_cooperative_vector",) + (REPLICATED,) * replicated
        return Requirements(extensions=exts, features=tuple(dict.fromkeys(feats)))

    def device_layout(self) -> dict[str, Any]:
        """Matrices 64-byte aligned per case (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10097);
        each optimal layer's row-major source converted into its own buffer, the layer's
        MatrixOffset word added (ctsgen.backends.base.DEVICE_LAYOUT_KEY)."""
        p = self.program
        H = len(p.buffers())
        align: dict[str, int] = {}
        conversions = []
        for j, (i, L) in enumerate(zip(p.layer_nodes(), p.layers())):
            src = p.buffer_index(f"matrix{j}") + 1
            align[str(src)] = 64
            if L.layout.optimal:
                v = L.variant()
                rows, cols = v.stored_shape
                conversions.append(MatrixConversion(src, p.buffer_index(f"optimal{j}") + 1, rows, cols,
                                                    v.source_type.vk, L.matrixInterpretation.vk, int(L.layout),
                                                    H + p.word_bases[i] + W_MOFF).to_json())
        if p.training:
            L = p.layers()[-1]
            f16 = L.resultType.vk
            conversions.append(MatrixConversion(p.buffer_index("grad_matrix") + 1, p.buffer_index("grad_optimal") + 1,
                                                L.M, L.K, f16, f16, int(MatrixLayout.TrainingOptimal),
                                                write_back=True).to_json())
        out: dict[str, Any] = {"bufferAlign": align}
        if conversions:
            out["matrixConversions"] = conversions
        return out

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        p = self.program
        H = len(p.buffers())
        glsl_of = {"uint8": "uint8_t", "float16": "float16_t", "uint32": "uint32_t",
                   p.input.component.dtype.name: p.input.component.glsl}
        glsl_of[p.output.component.dtype.name] = p.output.component.glsl
        slots = {name: k for k, (name, _) in enumerate(p.buffers())}
        return render(Path(__file__).parent, "shader.comp.j2", v=self, nodes=list(enumerate(p.nodes)),
                      lines=p.lines(), bases=[H + b for b in p.word_bases], H=H, words=H + p.words,
                      buffers=[(name, glsl_of[dt]) for name, dt in p.buffers()], slot=slots,
                      layer_of={i: j for j, i in enumerate(p.layer_nodes())}, act_glsl=act_glsl,
                      grad=p.gradient_nodes() if p.training else None, ctl=list(p.ctl_nodes),
                      W=dict(MOFF=W_MOFF, STRIDE=W_STRIDE, BOFF=W_BOFF, S=W_S, T=W_T),
                      baked=None if baked is None else [int(w) for w in baked])

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route, docs/spec-decisions.md "Which families Slang
        expresses"): ``CoopVec`` loads, stores, conversions and activations (ops/coopvec_elementwise_slang.py),
        each MatMulAdd as the instruction itself in ``spirv_asm`` (its MatrixStride the run-time word, which
        Slang's ``coopVecMatMulAdd`` takes as a compile-time constant), the training step through
        ``coopVecOuterProductAccumulate`` / ``coopVecReduceSumAccumulate`` (byte-address buffers)."""
        p = self.program
        H = len(p.buffers())
        byte_address = ("grad_optimal", "grad_bias")
        slang_of = {"uint8": "uint8_t", "float16": "half", "uint32": "uint",
                    p.input.component.dtype.name: p.input.component.slang}
        slang_of[p.output.component.dtype.name] = p.output.component.slang

        def signedness(L: Layer) -> str:
            flags = [f for f, signed in (("MatrixBSignedComponentsKHR", L.inputType.is_signed),
                                          ("MatrixResultSignedComponentsKHR", L.resultType.is_signed)) if signed]
            return " " + "|".join(flags) if flags else ""

        def act(n: Node) -> str:
            return coopvec_slang.expression(n.fn, n.type.component, n.type.component, n.type.n)

        def alt(n: Node) -> str:
            return coopvec_slang.expression(n.alt, n.type.component, n.type.component, n.type.n)

        def convert(src: Node, n: Node) -> str:
            return coopvec_slang.expression(ElementOp.convert, src.type.component, n.type.component, n.type.n)

        return render(Path(__file__).parent, "shader.slang.j2", v=self, nodes=list(enumerate(p.nodes)),
                      lines=p.lines(), bases=[H + b for b in p.word_bases], H=H, words=H + p.words,
                      buffers=[(name, None if name in byte_address else slang_of[dt]) for name, dt in p.buffers()],
                      slot={name: k for k, (name, _) in enumerate(p.buffers())},
                      layer_of={i: j for j, i in enumerate(p.layer_nodes())}, signedness=signedness, act=act,
                      alt=alt, convert=convert, grad=p.gradient_nodes() if p.training else None,
                      ctl=list(p.ctl_nodes), W=dict(MOFF=W_MOFF, STRIDE=W_STRIDE, BOFF=W_BOFF, S=W_S, T=W_T),
                      baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        out = {"program": self.program.to_json(), DEVICE_LAYOUT_KEY: self.device_layout()}
        if self.program.partial:  # absent for a full subgroup: a pack before partial subgroups reads the same
            out["local"] = self.program.local
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ProgramVariant:
        p = Program.from_json(o["program"])
        return cls(Program(p.nodes, int(o.get("local", LOCAL))))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: evaluate each case's program on the host buffers.

        Each case sees its own region of every buffer only (from its offset to the next case's, or the
        end: its data and the batch's zero alignment padding), never a batch neighbour's data, so a
        case is judged the same batched or alone, and a mutant that reads past the case's data (an
        expected deviation's oracle, run on the case's inputs alone) reads the same memory in both."""
        ends = _region_ends(offsets, buffers)
        for words, offs, stops in zip(params, offsets, ends):
            own = [buf[int(off):int(stop)] for off, buf, stop in zip(offs, buffers, stops)]
            evaluate(Run(self.program, words, own, np.zeros_like(offs)))


def _region_ends(offsets: np.ndarray, buffers: Sequence[np.ndarray]) -> np.ndarray:
    """cases x buffers: where each case's region of each buffer ends (the next case's offset, or the end)."""
    ends = np.empty_like(offsets)
    for b, buf in enumerate(buffers):
        starts = np.unique(offsets[:, b])
        ends[:, b] = np.append(starts[1:], buf.size)[np.searchsorted(starts, offsets[:, b])]
    return ends


@dataclass(frozen=True)
class LayerParams:
    """A MatMulAdd's run-time operands: MatrixOffset (bytes, a multiple of 64), MatrixStride
    (bytes, a multiple of 16 at least a row / column; 0 for an optimal layout), BiasOffset
    (bytes into the shared bias buffer, a multiple of 16)."""

    matrixOffset: int = 0
    matrixStride: int = 0
    biasOffset: int = 0


@dataclass(frozen=True)
class Scalars:
    """An activation's run-time scalars, integers of the node's component type: ``s`` (max / min
    operand, clamp's minVal, scale, addend, fma's multiplier, shift) and ``t`` (clamp's maxVal,
    fma's addend)."""

    s: int = 0
    t: int = 0


NodeParams = LayerParams | Scalars | None


def _check_layer(p: Program, i: int, q: LayerParams) -> str | None:
    L = p.nodes[i].layer
    if q.matrixOffset < 0 or q.matrixOffset % 64:
        return f"MatrixOffset {q.matrixOffset}: a multiple of 64 (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10097)"
    if q.biasOffset < 0 or q.biasOffset % 16:
        return f"BiasOffset {q.biasOffset}: a multiple of 16 (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10098)"
    if not L.layout.optimal:
        rows, cols = L.variant().stored_shape
        line = (cols if L.layout.name == "RowMajor" else rows) * L.matrixInterpretation.dtype.itemsize
        if q.matrixStride % 16 or q.matrixStride < line:
            return (f"MatrixStride {q.matrixStride}: a multiple of 16 of at least {line} bytes "
                    "(VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10096)")
    return None


@dataclass(frozen=True)
class ProgramCase:
    """One run of a program: each node's run-time parameters and a data seed."""

    family: ClassVar[str] = FAMILY_NAME

    shader: ProgramVariant
    nodes: tuple[NodeParams, ...]
    seed: int = 0
    #: where the data come from: "exact" (integers, bit-exact verdict) or "float" (full-mantissa
    #: floats, judged within propagated bounds; float programs only, bounds.float_domain_rule)
    domain: str = "exact"

    def __post_init__(self) -> None:
        p = self.shader.program
        if len(self.nodes) != len(p.nodes):
            raise ValueError(f"{len(self.nodes)} node parameters for a program of {len(p.nodes)} nodes")
        kinds = {Op.matmuladd: LayerParams, Op.act: Scalars}
        for i, (n, q) in enumerate(zip(p.nodes, self.nodes)):
            want = kinds.get(n.op)
            if (q is None) != (want is None) or (want is not None and not isinstance(q, want)):
                raise ValueError(f"node {i} ({n.op.value}) has run-time parameters of the wrong kind: {q!r}")
            why = _check_layer(p, i, q) if isinstance(q, LayerParams) else None
            if why:
                raise ValueError(f"node {i}: {why}")
        regions = sorted((q.biasOffset, q.biasOffset + L.M * L.biasInterpretation.dtype.itemsize)
                         for q, L in zip(self.layer_params(), p.layers()))
        if any(a[1] > b[0] for a, b in zip(regions, regions[1:])):
            raise ValueError(f"bias regions {regions} overlap")
        p.limits(self.scalars())  # scalars inside the exact domain
        if self.domain not in DOMAINS:
            raise ValueError(f"domain {self.domain!r}: use one of {', '.join(DOMAINS)}")
        why = float_domain_rule(p) if self.domain == "float" else None
        if why:
            raise ValueError(f"this program cannot take float-domain data: {why}; use domain 'exact'")

    def variant(self) -> ProgramVariant:
        return self.shader

    def layer_params(self) -> list[LayerParams]:
        return [self.nodes[i] for i in self.shader.program.layer_nodes()]

    def scalars(self) -> list[tuple[int, int] | None]:
        return [(q.s, q.t) if isinstance(q, Scalars) else None for q in self.nodes]

    def params(self) -> np.ndarray:
        p = self.shader.program
        w = np.zeros(p.words, np.uint32)
        for n, q, base in zip(p.nodes, self.nodes, p.word_bases):
            if isinstance(q, LayerParams):
                w[base + W_MOFF], w[base + W_STRIDE], w[base + W_BOFF] = q.matrixOffset, q.matrixStride, q.biasOffset
            elif isinstance(q, Scalars):
                comp = element_oracle.component(n.type.component)
                w[base + W_S:base + W_T + 1] = to_bits(np.asarray([q.s, q.t], dtype=comp.dtype), comp)
        return w

    def _initial(self) -> list[np.ndarray]:
        """Every buffer before the matrices and biases are drawn: the input region, the bias
        bytes (zero), the poisoned results, empty matrices."""
        p = self.shader.program
        out = []
        for name, dtype in p.buffers():
            if name == "input":
                out.append(np.zeros(p.local * p.input.stride // p.input.component.dtype.itemsize, dtype))
            elif name == "control":
                out.append(np.zeros(p.local * len(p.ctl_nodes), np.uint32))
            elif name == "output":
                comp = element_oracle.component(p.output.component)
                out.append(np.full(LOCAL * p.output.stride // comp.dtype.itemsize,
                                   from_bits(sentinel_bits(comp), comp), dtype))
            elif name in ("grad_matrix", "grad_bias"):
                L = p.layers()[-1]
                out.append(np.zeros(L.M * (L.K if name == "grad_matrix" else 1), dtype))
            elif name == "bias":
                out.append(np.zeros(max(q.biasOffset + L.M * L.biasInterpretation.dtype.itemsize
                                        for q, L in zip(self.layer_params(), p.layers())), np.uint8))
            else:
                out.append(np.zeros(0, np.uint8))
        return out

    def data(self) -> CaseData:
        """The input and each layer's weights and biases, drawn layer by layer within the limits
        (data.py: integers in the exact domain, full-mantissa floats in the float domain) while the
        composed oracle evaluates the chain; then the expected results: what :func:`expected_on`
        gives the finished buffers, and in the float domain the propagated bounds
        (:func:`tolerance_on`), both from one run that takes the chain's values as drawing
        evaluated them (each layer's matrix and bias were placed before it ran, and nothing
        placed later overlaps them) and evaluates the rest (the store, the training step) on
        copies of the finished buffers."""
        p = self.shader.program
        rng = np.random.default_rng(self.seed)
        limits = p.limits(self.scalars())
        words = self.params()
        bufs = self._initial()
        first = p.layers()[0]
        floats = self.domain == "float"
        element_oracle.store(bufs[p.buffer_index("input")], np.arange(p.local) * p.input.stride,
                             input_vectors(rng, first, p.local, limits[0], floats))
        if p.ctl_nodes:  # its own stream: the data of a program without control flow stay as they were
            bufs[p.buffer_index("control")][:] = np.random.default_rng([self.seed, 1]).integers(
                0, MAX_TRIPS, p.local * len(p.ctl_nodes), endpoint=True)
        run = Run(p, words, bufs, np.zeros(len(bufs), np.int64))
        for i, n in enumerate(p.nodes[:p.store_index]):
            if n.op is Op.matmuladd:
                L, q = n.layer, self.nodes[i]
                j = p.layer_of(i)
                x = matmul_oracle.convert_input(run.values[i - 1], L.inputType, L.inputInterpretation)
                w, b = layer_values(rng, L, x, limits[i], floats, MAX_TRIPS if n.ctl is Ctl.loop else 1)
                bufs[p.buffer_index(f"matrix{j}")] = place_matrix(L, w, q.matrixOffset, q.matrixStride)
                place_bias(bufs[p.buffer_index("bias")], L, b, q.biasOffset)
            run.values.append(eval_node(run, i))
        for name in ("grad_matrix", "grad_bias")[:2 * p.training]:  # drawn last: the forward data stay as they are
            b = bufs[p.buffer_index(name)]
            b[:] = rng.integers(-GRAD_INIT, GRAD_INIT, b.size, endpoint=True)
        done = Run(p, words, [np.array(b, copy=True) for b in bufs], run.offsets, list(run.values))
        evaluate(done)  # the rest of the chain: the store and the training step
        return CaseData(words, bufs, _expected(done), _tolerance(done) if floats else None)

    def values(self) -> list[np.ndarray | None]:
        """Every node's expected value (the store's is None), for a report's first differing node."""
        d = self.data()
        return evaluated_on(self, d.params, d.initial).values

    def compare_rule(self) -> CompareRule:
        """Bit for bit (the exact domain); a float result without SignedZeroInfNanPreserve may
        carry either sign of zero (decision "signed-zero"). The float domain: within each stored
        component's propagated bound (bounds.py), values compared (+0 == -0)."""
        if self.domain == "float":
            return CompareRule("tolerance")
        return CompareRule("bitwise", signed_zero=False if self.shader.program.output.component.is_float else None)

    def to_json(self) -> dict[str, Any]:
        def node(q: NodeParams) -> Any:
            if isinstance(q, LayerParams):
                return {"matrixOffset": q.matrixOffset, "matrixStride": q.matrixStride, "biasOffset": q.biasOffset}
            return None if q is None else {"s": q.s, "t": q.t}

        out = {"family": FAMILY_NAME, "variant": self.shader.to_json(), "nodes": [node(q) for q in self.nodes],
               "seed": self.seed}
        if self.domain != "exact":  # an exact case's JSON (and name) is what it was before the float domain
            out["domain"] = self.domain
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ProgramCase:
        v = ProgramVariant.from_json(o["variant"])
        nodes: list[NodeParams] = []
        for n, q in zip(v.program.nodes, o["nodes"]):
            if n.op is Op.matmuladd:
                nodes.append(LayerParams(int(q["matrixOffset"]), int(q["matrixStride"]), int(q["biasOffset"])))
            else:
                nodes.append(None if q is None else Scalars(int(q["s"]), int(q["t"])))
        return cls(v, tuple(nodes), int(o["seed"]), str(o.get("domain", "exact")))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def describe(self) -> dict[str, Any]:
        """The program as readable lines, each layer's operands and each activation's scalars."""
        p = self.shader.program
        out: dict[str, Any] = {"program": p.lines(), "layers": len(p.layers()), "length": p.ops}
        if p.partial:
            out["invocations"] = p.local
        if p.ctl_nodes:
            d = len(p.ctl_nodes)
            out["control"] = {f"c{i}": f"control[invocation * {d} + {k}]" for k, i in enumerate(p.ctl_nodes)}
            out["control"]["meaning"] = f"an if runs where bit 0 is set; a loop runs that many trips (0 .. {MAX_TRIPS})"
        if self.domain != "exact":
            out["domain"] = self.domain
        for i, q in enumerate(self.nodes):
            if isinstance(q, LayerParams):
                out[f"v{i}"] = {"MatrixOffset": q.matrixOffset, "MatrixStride": q.matrixStride,
                                "BiasOffset": q.biasOffset}
            elif isinstance(q, Scalars):
                out[f"v{i}"] = {"s": q.s, "t": q.t}
        return out

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """Invocation and component of a result element (or the padding after a vector); row and
        column of a gradient element."""
        p = self.shader.program
        name = p.buffers()[buffer][0]
        if name == "grad_matrix":
            return dict(zip(("row", "col"), divmod(element, p.layers()[-1].K)))
        if name == "grad_bias":
            return {"component": element}
        if name != "output":
            return {}
        t = p.output
        lid, rest = divmod(element * t.component.dtype.itemsize, t.stride)
        comp = rest // t.component.dtype.itemsize
        out = {"invocation": lid, "component": comp} if comp < t.n else {"invocation": lid, "padding": comp}
        if lid >= p.local:  # a lane no invocation of a partial subgroup stores: it keeps the poison
            out["pastWorkgroup"] = True
        return out


#: the buffers a case checks: the results and, in a training program, dW and db
CHECKED = ("output", "grad_matrix", "grad_bias")
#: a case's data domains, the shrink target first
DOMAINS = ("exact", "float")


def evaluated_on(case: ProgramCase, params: np.ndarray, initial: list[np.ndarray]) -> Run:
    """The composed oracle run on copies of ``initial``: every node evaluated in order by its
    single-operation family's oracle (oracle.py), the store and the training step writing into
    the copies."""
    run = Run(case.shader.program, np.asarray(params), [np.array(b, copy=True) for b in initial],
              np.zeros(len(initial), np.int64))
    evaluate(run)
    return run


def expected_on(case: ProgramCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """The chain's oracle on given inputs (FamilySpec.expectation): every node evaluated in order
    by its single-operation family's oracle (oracle.py), the store and the training step writing
    into copies of their buffers. The data of a case are drawn through the same oracle (each
    layer's weights after its input is known), so under an expected deviation (ctsgen.mutants.deviations)
    recomputing ``case.data()`` would change the inputs; this keeps them (docs/spec-decisions.md,
    "expected-deviation"). Buffers other than CHECKED are not checked (None)."""
    return _expected(evaluated_on(case, params, initial))


def _expected(run: Run) -> list[np.ndarray | None]:
    return [o if name in CHECKED else None for (name, _), o in zip(run.program.buffers(), run.buffers)]


def tolerance_on(case: ProgramCase, params: np.ndarray, initial: list[np.ndarray]) -> list[np.ndarray | None]:
    """A float-domain case's tolerance: each stored component's propagated bound (bounds.py), at
    its place in the output buffer (0 for the padding, which keeps its poison); None elsewhere."""
    return _tolerance(evaluated_on(case, params, initial))


def _tolerance(run: Run) -> list[np.ndarray | None]:
    t = run.program.output
    tol = np.zeros(LOCAL * t.stride // t.component.dtype.itemsize)
    tol[np.arange(run.program.local)[:, None] * (t.stride // t.component.dtype.itemsize) + np.arange(t.n)] = store_bound(run)
    return [tol if name == "output" else None for name, _ in run.program.buffers()]
