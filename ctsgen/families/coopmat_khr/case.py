"""The coopmat-khr family's case model: one SPV_KHR_cooperative_matrix operation between KHR loads and a KHR store.

A :class:`KhrVariant` is the compile-time signature: the operation, its operand and result matrix types,
each load's and the store's MemoryLayout (a constant in SPIR-V), each buffer's pointee type and, for
OpCooperativeMatrixMulAddKHR, SaturatingAccumulation. A :class:`KhrCase` adds the run-time operands:
each access's stride and element offset (ctsgen.ops.khr_addressing), OpMatrixTimesScalar's scalar,
a data seed and whether the operands start with the instruction's edge values.

Bindings: 1..n the loaded operands (memory the load reads: the matrix and whatever a stride skips),
n+1 the result (sentinel first: an element the store does not write keeps it, compared bit for bit).
Each binding's host array holds components of its matrix's type; the shader declares the pointee
type over the same bytes. Words (after one buffer offset per binding): stride and offset of each
load and of the store, then the scalar's bits.

Operations (../shared/specs/SPV_KHR_cooperative_matrix.txt "Arithmetic Instructions", "Conversion
Instructions", OpCooperativeMatrixMulAddKHR): ``copy`` (load then store), ``negate`` (OpFNegate /
OpSNegate), ``add``/``sub``/``mul``/``div`` (OpFAdd ... OpFDiv, OpIAdd ... OpSDiv / OpUDiv), ``scale``
(OpMatrixTimesScalar), ``convert`` (OpFConvert, OpConvertFToS/U, OpConvertSToF/UToF, OpSConvert /
OpUConvert, same-width OpBitcast; "The result type and value type must have the same Scope, number of
Rows, number of Columns, and Use"), ``muladd`` (one VkCooperativeMatrixPropertiesKHR entry).
Decisions: docs/spec-decisions.md "khr-addressing", "khr-arithmetic", "khr-muladd".
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.ops.cm2_convert import Kind
from ctsgen.ops import cm2_convert as cm2_convert_ops
from ctsgen.ops.coopvec_elementwise import apply, tolerance
from ctsgen.ops.khr_addressing import (
    KhrAccess,
    Layout,
    Pointee,
    check_access,
    component_indices,
    extent_components,
)
from ctsgen.families.coopmat_khr.data import memories
from ctsgen.families.coopmat_khr.operation import FLOAT_OP, GLSL, INT_OP, Op, check_signature, element_type
from ctsgen.ops.khr_muladd import expected_muladd
from ctsgen.oracle.values import from_bits, sentinel_bits, to_bits
from ctsgen.templates import render
from ctsgen.families.coopmat_khr import slang

FAMILY_NAME = "coopmat-khr"
#: What every case needs: VK_KHR_cooperative_matrix and its cooperativeMatrix feature, nothing of cm2.
EXTENSION = "VK_KHR_cooperative_matrix"
FEATURE = "cooperativeMatrix"


@dataclass(frozen=True)
class KhrVariant:
    op: Op
    operands: tuple[MatrixType, ...]
    result: MatrixType
    layouts: tuple[Layout, ...]            # each load's MemoryLayout, then the store's
    pointees: tuple[Pointee | None, ...]   # each binding's pointee (None: the component type)
    saturating: bool = False

    def __post_init__(self) -> None:
        why = check_signature(self.op, self.operands, self.result, self.saturating)
        if why is None and not (len(self.layouts) == len(self.pointees) == self.op.loads + 1):
            why = "one layout and one pointee per load and for the store"
        if why:
            raise ValueError(f"coopmat-khr {self.op.value} {[m.glsl for m in self.operands]} -> {self.result.glsl}: {why}")

    @property
    def matrices(self) -> tuple[MatrixType, ...]:
        """Each binding's matrix type: the operands, then the result."""
        return (*self.operands, self.result)

    @property
    def id(self) -> str:
        """``coopmat_khr.OP.[operand types.]result type.ACCESS...``: each access (loads, then the store)
        ``row`` or ``col``, with ``_POINTEE`` where the buffer's type is wider than the component."""
        mats = [m.label for m in self.operands] if self.op is Op.convert else \
            [m.label for m in self.operands[:2]] if self.op is Op.muladd else []
        access = [("row" if lay is Layout.RowMajor else "col") + ("" if p is None else f"_{p.glsl}")
                  for lay, p in zip(self.layouts, self.pointees)]
        return ".".join(["coopmat_khr", self.op.value, *mats, self.result.label, *access]
                        + (["saturating"] if self.saturating else []))

    @property
    def local_size_x(self) -> int:
        return self.result.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        names = [f"operand{k}" for k in range(self.op.loads)] + ["result"]
        return tuple(BufferSpec(k + 1, name, m.component.dtype.name)
                     for k, (name, m) in enumerate(zip(names, self.matrices)))

    def requirements(self) -> Requirements:
        bf16 = any(m.component is ComponentType.bfloat16 for m in self.matrices)
        return Requirements(extensions=(EXTENSION, *(["VK_KHR_shader_bfloat16"] if bf16 else [])),
                            features=(FEATURE,), matrices=tuple(dict.fromkeys(self.matrices)))

    def access(self, k: int, stride: int, offset: int) -> KhrAccess:
        """Binding k+1's access (a load's, the store's for the last)."""
        return KhrAccess(self.layouts[k], stride, offset, self.pointees[k])

    @property
    def words(self) -> int:
        return 2 * len(self.layouts) + 1

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        res = self.result
        glsl_types = [m.component.glsl if p is None else p.glsl for p, m in zip(self.pointees, self.matrices)]
        expr = (f"coopMatMulAdd(a, b, c{', gl_MatrixOperandsSaturatingAccumulation' if self.saturating else ''})"
                if self.op is Op.muladd else f"{res.glsl}(a)" if self.op is Op.convert else GLSL[self.op])
        return render(Path(__file__).parent, "shader.comp.j2", types=glsl_types, expr=expr,
                      extensions=["GL_EXT_bfloat16"] if any(m.component is ComponentType.bfloat16
                                                            for m in self.matrices) else [],
                      **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): the same bindings, words and operation; each
        load and the store as the instruction itself, since Slang's ``CoopMat.Load``/``Store`` claim
        ``Aligned 16`` and a drawn offset need not meet it (docs/spec-decisions.md "compiler-routes")."""
        res = self.result
        types = [slang.pointee(p or Pointee.of(m.component)) for p, m in zip(self.pointees, self.matrices)]
        return render(Path(__file__).parent, "shader.slang.j2", types=types,
                      expr=slang.expression(self.op, self.operands[0], res, self.saturating),
                      element=slang.element, **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        n = len(self.layouts)
        per = [1 if p is None else p.size // m.component.size for p, m in zip(self.pointees, self.matrices)]
        return dict(v=self, n=n, per=per, names="abc", words=n + self.words, H=n, W_S=2 * n,
                    baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op.value, "operands": [m.to_json() for m in self.operands],
                               "result": self.result.to_json(), "layouts": [x.value for x in self.layouts],
                               "pointees": [None if p is None else p.to_json() for p in self.pointees]}
        if self.saturating:
            out["saturating"] = True
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> KhrVariant:
        return cls(Op(o["op"]), tuple(MatrixType.from_json(m) for m in o["operands"]),
                   MatrixType.from_json(o["result"]), tuple(Layout(x) for x in o["layouts"]),
                   tuple(None if p is None else Pointee.from_json(p) for p in o["pointees"]),
                   bool(o.get("saturating", False)))

    def scalar(self, bits: int) -> Any:
        """OpMatrixTimesScalar's scalar from its parameter word."""
        return from_bits(bits, self.result.component)[()]

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: each case's loads, operation and store on the host buffers.

        Each access sees only its case's own region of a buffer (from the case's offset, as long as the
        access reaches: the memory ``data()`` draws), never a batch neighbour's data: a case is judged
        the same batched or alone, and a mutant's load (an expected deviation's oracle) reads the same
        memory here as on the case's inputs alone."""
        n = len(self.layouts)
        for words, base in zip(params, offsets):
            accesses = [self.access(k, int(words[2 * k]), int(words[2 * k + 1])) for k in range(n)]
            regions = [buffers[k][int(base[k]):int(base[k]) + extent_components(a, m.rows, m.cols, m.component)]
                       for k, (a, m) in enumerate(zip(accesses, self.matrices))]
            mats = [load_operand(accesses[k], m, regions[k]) for k, m in enumerate(self.operands)]
            result, _ = compute(self, mats, self.scalar(int(words[2 * n])), strict=False)
            regions[-1][:] = store_result(accesses[-1], result, regions[-1], self.result.component)


def load_operand(access: KhrAccess, m: MatrixType, memory: np.ndarray) -> np.ndarray:
    """OpCooperativeMatrixLoadKHR of a matrix of type ``m`` from ``memory`` (components), as a device
    runs it: each element at its address (ctsgen.ops.khr_addressing), 0 past the end of ``memory``
    (robust buffer access). For a drawn case, whose accesses are valid and in bounds
    (KhrCase checks them), this is ``expected_load``."""
    idx = component_indices(access, m.rows, m.cols, m.component)
    if _inside(access, m.rows, m.cols, m.component, memory):
        return memory[idx].astype(m.component.dtype, copy=False)
    inside = idx < memory.size
    return np.where(inside, memory[np.where(inside, idx, 0)], m.component.dtype.type(0)).astype(m.component.dtype)


def store_result(access: KhrAccess, matrix: np.ndarray, memory: np.ndarray, component: ComponentType) -> np.ndarray:
    """``memory`` after OpCooperativeMatrixStoreKHR of ``matrix``, as a device runs it: writes past the
    end are dropped, and of two elements stored to one address the later (row-major) one lands. For a
    drawn case (disjoint lines, in bounds) this is ``expected_store``."""
    idx = component_indices(access, *matrix.shape, component)
    out = np.array(memory, copy=True)
    if _inside(access, *matrix.shape, component, memory):
        out[idx.ravel()] = matrix.ravel()  # 1-D, row-major: of repeated indices numpy lands the last
    else:
        inside = idx < memory.size
        out[idx[inside]] = matrix[inside]
    return out


def _inside(access: KhrAccess, rows: int, cols: int, component: ComponentType, memory: np.ndarray) -> bool:
    """Whether every element of the access lies in ``memory`` (components): a drawn case's accesses do,
    so its loads and stores skip the robust-access masks."""
    return access.stride >= 0 and access.offset >= 0 and extent_components(access, rows, cols, component) <= memory.size


def compute(v: KhrVariant, mats: list[np.ndarray], s: Any, *, strict: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(the operation's result matrix, its two-sided tolerance 2 x rows x cols) on the loaded matrices.
    ``strict``: refuse operands whose result is undefined (an oracle); the reference backend's
    execution computes something for them (a mutant may feed it such data)."""
    res = v.result.component
    if v.op is Op.copy:
        return mats[0].copy(), np.zeros((2, *mats[0].shape))
    if v.op is Op.muladd:
        return expected_muladd(*mats, res, saturating=v.saturating, strict=strict)
    if v.op is Op.convert:
        src = v.operands[0].component
        if not strict and src.is_float and not res.is_float:
            info = np.iinfo(res.dtype)
            t = np.trunc(mats[0].astype(np.float64))
            mats = [np.where(np.isfinite(t) & (t >= info.min) & (t <= info.max), mats[0], 0).astype(src.dtype)]
        return cm2_convert_ops.expected_result(Kind.convert, mats[0], src, res)
    t = element_type(res)
    if v.op is Op.scale and not res.is_float:  # an integer OpMatrixTimesScalar multiplies each element
        operands, scalar = [mats[0], np.full(mats[0].shape, s, res.dtype)], 0.0
    else:
        operands, scalar = list(mats), float(s) if res.is_float else 0.0
    op = (FLOAT_OP if res.is_float else INT_OP)[v.op]
    out = apply(op, operands, scalar, t, t)
    return out, tolerance(op, operands, scalar, t, t, out, ieee=False)


@dataclass(frozen=True)
class KhrCase:
    """One operation: each access's ``strides`` and ``offsets`` (loads, then the store; elements of
    the pointee), the scalar ``s`` (scale), a data ``seed``, and ``edges`` (operands start with the
    instruction's edge values)."""

    family: ClassVar[str] = FAMILY_NAME

    shader: KhrVariant
    strides: tuple[int, ...]
    offsets: tuple[int, ...]
    s: float | int = 1
    seed: int = 0
    edges: bool = False

    def __post_init__(self) -> None:
        n = len(self.shader.layouts)
        if len(self.strides) != n or len(self.offsets) != n:
            raise ValueError(f"a {self.shader.op.value} case has {n} strides and offsets (its loads and store)")
        for k, (a, m) in enumerate(zip(self._accesses, self.shader.matrices)):
            check_access(a, m.rows, m.cols, m.component, is_store=k == n - 1)

    def variant(self) -> KhrVariant:
        return self.shader

    def accesses(self) -> list[KhrAccess]:
        return list(self._accesses)

    @functools.cached_property
    def _accesses(self) -> tuple[KhrAccess, ...]:
        """Each binding's access, built once: the checks, the data and the locator all read them."""
        return tuple(self.shader.access(k, st, off) for k, (st, off) in enumerate(zip(self.strides, self.offsets)))

    def params(self) -> np.ndarray:
        w = np.zeros(self.shader.words, np.uint32)
        for k, (st, off) in enumerate(zip(self.strides, self.offsets)):
            w[2 * k], w[2 * k + 1] = st, off
        res = self.shader.result.component
        w[-1] = int(to_bits(np.asarray([self.s], dtype=res.dtype), res)[0])
        return w

    def data(self) -> CaseData:
        v = self.shader
        acc = self.accesses()
        mems = memories(v.op, v.operands, v.result, v.saturating, acc, self.seed, self.edges)
        mats = [load_operand(a, m, mem) for a, m, mem in zip(acc, v.operands, mems)]
        result, tol = compute(v, mats, self.s)
        res = v.result.component
        n = extent_components(acc[-1], v.result.rows, v.result.cols, res)
        poison = np.full(n, from_bits(sentinel_bits(res), res), dtype=res.dtype)
        expected = store_result(acc[-1], result, poison, res)
        tolerances = None
        if self._tolerance_rule():  # unwritten elements: NaN, compared bit for bit
            sides = [store_result(acc[-1], tol[k], np.full(n, np.nan), res) for k in range(2)]
            tolerances = [None] * len(mems) + [np.stack(sides)]
        return CaseData(self.params(), [*mems, poison], [None] * len(mems) + [expected], tolerances)

    def _tolerance_rule(self) -> bool:
        return self.shader.result.component.is_float and self.shader.op is not Op.copy

    def compare_rule(self) -> CompareRule:
        """Float results of arithmetic and conversions within the instruction's bound; moved data and
        integer results bit for bit."""
        return CompareRule("tolerance") if self._tolerance_rule() else CompareRule("bitwise")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"family": FAMILY_NAME, "variant": self.shader.to_json(),
                               "strides": list(self.strides), "offsets": list(self.offsets), "seed": self.seed}
        if self.shader.op is Op.scale:
            out["s"] = self.s
        if self.edges:
            out["edges"] = True
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> KhrCase:
        v = KhrVariant.from_json(o["variant"])
        s = o.get("s", 1)
        return cls(v, tuple(int(x) for x in o["strides"]), tuple(int(x) for x in o["offsets"]),
                   float(s) if v.result.component.is_float else int(s), int(o["seed"]), bool(o.get("edges", False)))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """For the result buffer: which matrix element the store writes there (None: none, so it must
        keep the sentinel)."""
        v = self.shader
        if buffer != len(v.operands):
            return {}
        idx = component_indices(self.accesses()[-1], v.result.rows, v.result.cols, v.result.component)
        hits = np.argwhere(idx == element)
        if not hits.size:
            return {"storedBy": None}
        return {"storedBy": {"row": int(hits[0][0]), "col": int(hits[0][1])}}
