"""The cm2-gemm family's case model: a GEMM tile, with alpha/beta, loaded and stored by one of two routes.

A :class:`GemmVariant` is the compile-time signature: the A/B/C component
types of one property entry (a flexible-dimensions entry,
VkCooperativeMatrixFlexibleDimensionsPropertiesNV, or on the KHR route without
flexible dimensions a VkCooperativeMatrixPropertiesKHR entry), its scope and
workgroup size, TILE_M / TILE_N / TILE_K (multiples of the entry's granularities,
or its MSize / NSize / KSize), and the :class:`Route`:

* ``tensor``: 2-D tensor layouts and slices (OpCooperativeMatrixLoadTensorNV /
  StoreTensorNV), A, B, C and D row-major and dense;
* ``khr``: OpCooperativeMatrixLoadKHR / StoreKHR (ops/khr_addressing.py), each of
  A, B, C and D in memory in its own MemoryLayout (RowMajor or ColumnMajor: a
  compile-time constant) with a run-time leading dimension (the Stride: a whole
  number of alignment units, at least the matrix's line length, so its lines are
  disjoint), each tile at the run-time element offset of its first element.

A :class:`GemmCase` adds run-time words: M, N, K (multiples of the tile sizes),
the tile (ty, tx) to compute, the bits of alpha and beta, and (khr route) the four
strides. Bindings: 1 A (M x K), 2 B (K x N), 3 C (M x N), 4 D (M x N, poisoned
first; on the khr route also each padding element between lines, which a load
must not read and a store must not write).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops import cm2_gemm as cm2_gemm_ops
from ctsgen.ops.cm2 import requirements_for
from ctsgen.ops import khr_addressing as khr
from ctsgen.ops.khr_addressing import KhrAccess, Layout
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.oracle.values import from_bits, random_values, sentinel_bits, to_bits
from ctsgen.templates import render
from ctsgen.oracle.models import h100

FAMILY_NAME = "cm2-gemm"
N_BUFFERS = 4
W_M, W_N, W_K, W_TY, W_TX, W_ALPHA, W_BETA = range(7)
FAMILY_WORDS = 7
#: The khr route's four strides (A, B, C, D) follow the tensor route's words.
W_STRIDES = FAMILY_WORDS
KHR_WORDS = FAMILY_WORDS + 4
TENSOR_ADDRESSING = "cooperativeMatrixTensorAddressing"


class Route(str, enum.Enum):
    """How the tile's matrices reach memory (the tensor route first: the shrink target where both are drawn)."""

    tensor = "tensor"  # OpCooperativeMatrixLoadTensorNV / StoreTensorNV through 2-D tensor layouts
    khr = "khr"        # OpCooperativeMatrixLoadKHR / StoreKHR: a pointer, a MemoryLayout and a stride


def tile_access(layout: Layout, stride: int, row: int, col: int) -> KhrAccess:
    """The access of the tile whose first element is (row, col) of a matrix in memory with
    ``layout`` and leading dimension ``stride`` (SPV_KHR_cooperative_matrix, "Cooperative Matrix
    Layout": line i starts at Pointer[i * Stride])."""
    return KhrAccess(layout, stride, row * stride + col if layout is Layout.RowMajor else col * stride + row)


@dataclass(frozen=True)
class GemmVariant:
    a_type: ComponentType
    c_type: ComponentType
    scope: Scope
    workgroup_size: int
    tile_m: int
    tile_n: int
    tile_k: int
    route: Route = Route.tensor
    #: khr route: the MemoryLayout of A, B, C and D in memory
    layouts: tuple[Layout, ...] = ()

    def __post_init__(self) -> None:
        if len(self.layouts) != (4 if self.route is Route.khr else 0):
            raise ValueError(f"a {self.route.value}-route GEMM names {'4' if self.route is Route.khr else 'no'} "
                             f"MemoryLayouts (A, B, C, D), not {len(self.layouts)}")

    def matrices(self) -> tuple[MatrixType, MatrixType, MatrixType]:
        s, w = self.scope, self.workgroup_size
        return (MatrixType(self.a_type, s, self.tile_m, self.tile_k, MatrixUse.A, w),
                MatrixType(self.a_type, s, self.tile_k, self.tile_n, MatrixUse.B, w),
                MatrixType(self.c_type, s, self.tile_m, self.tile_n, MatrixUse.Accumulator, w))

    @property
    def id(self) -> str:
        scope = "subgroup" if self.scope is Scope.Subgroup else f"workgroup{self.workgroup_size}"
        khr_route = "" if self.route is Route.tensor else ".khr_" + "".join(x.value[0] for x in self.layouts)
        return (f"cm2_gemm.{self.a_type.name}_to_{self.c_type.name}.{scope}"
                f".tile_{self.tile_m}x{self.tile_n}x{self.tile_k}{khr_route}")

    @property
    def local_size_x(self) -> int:
        return self.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        a, c = self.a_type.dtype.name, self.c_type.dtype.name
        return (BufferSpec(1, "A", a), BufferSpec(2, "B", a), BufferSpec(3, "C", c), BufferSpec(4, "D", c))

    def requirements(self) -> Requirements:
        """The tensor route needs tensor addressing and flexible dimensions; the khr route needs
        neither feature (a size the device does not list needs flexible dimensions: the profile's
        supports_matrix checks that per matrix)."""
        feats = [TENSOR_ADDRESSING, "cooperativeMatrixFlexibleDimensions"] if self.route is Route.tensor else []
        return requirements_for(feats, list(self.matrices()))

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        return render(Path(__file__).parent, "shader.comp.j2", TA=self.a_type.glsl, TC=self.c_type.glsl,
                      bfloat16=self.a_type is ComponentType.bfloat16, **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): ``TensorLayout`` slices and ``CoopMat.Load``/
        ``Store`` on the tensor route; on the khr route each load and store as the instruction itself
        (``spirv_asm``: Slang's would be Aligned 16, which a drawn offset or stride need not meet),
        docs/spec-decisions.md "compiler-routes"."""
        return render(Path(__file__).parent, "shader.slang.j2", TA=self.a_type.slang, TC=self.c_type.slang,
                      **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        ma, mb, mc = self.matrices()
        khr_route = self.route is Route.khr
        return dict(v=self, ma=ma, mb=mb, mc=mc, c_component=self.c_type.name, H=N_BUFFERS, khr_route=khr_route,
                    W=dict(M=W_M, N=W_N, K=W_K, TY=W_TY, TX=W_TX, ALPHA=W_ALPHA, BETA=W_BETA, LD=W_STRIDES),
                    words=N_BUFFERS + (KHR_WORDS if khr_route else FAMILY_WORDS),
                    baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"aType": self.a_type.name, "cType": self.c_type.name, "scope": self.scope.name,
                               "workgroupSize": self.workgroup_size, "tile": [self.tile_m, self.tile_n, self.tile_k]}
        if self.route is not Route.tensor:  # a tensor-route variant's JSON (and its cases' names) as before routes
            out.update(route=self.route.value, layouts=[x.value for x in self.layouts])
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> GemmVariant:
        return cls(ComponentType[o["aType"]], ComponentType[o["cType"]], Scope[o["scope"]],
                   int(o["workgroupSize"]), *(int(t) for t in o["tile"]), Route(o.get("route", "tensor")),
                   tuple(Layout(x) for x in o.get("layouts", ())))

    def shapes(self, M: int, N: int, K: int) -> tuple[tuple[int, int], ...]:
        """(rows, cols) of A, B, C and D in memory."""
        return (M, K), (K, N), (M, N), (M, N)

    def tile_shapes(self) -> tuple[tuple[int, int], ...]:
        """(rows, cols) of the tile each load or store moves: A's, B's, C's and D's."""
        return (self.tile_m, self.tile_k), (self.tile_k, self.tile_n), (self.tile_m, self.tile_n), \
            (self.tile_m, self.tile_n)

    def components(self) -> tuple[ComponentType, ...]:
        return self.a_type, self.a_type, self.c_type, self.c_type

    def whole(self, M: int, N: int, K: int, strides: Sequence[int]) -> list[tuple[KhrAccess, int, int]]:
        """khr route: (the access of the whole matrix from its first element, rows, cols) of A, B,
        C and D in memory: what lays each matrix out, and (its extent) the elements its buffer holds."""
        return [(KhrAccess(x, s), r, c) for x, s, (r, c) in zip(self.layouts, strides, self.shapes(M, N, K))]

    def extents(self, M: int, N: int, K: int, strides: Sequence[int]) -> list[int]:
        """khr route: the elements of A's, B's, C's and D's memory (the last line ends the buffer)."""
        return [khr.extent_components(a, r, c, t) for (a, r, c), t in zip(self.whole(M, N, K, strides),
                                                                            self.components())]

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: compute each case's tile on host buffers."""
        if self.route is Route.khr:
            return self._execute_khr(params, offsets, buffers)
        A, B, C, D = buffers
        for w, (oa, ob, oc, od) in zip(params, offsets):
            M, N, K, ty, tx = (int(x) for x in w[:5])
            alpha = from_bits(int(w[W_ALPHA]), self.c_type)[()]
            beta = from_bits(int(w[W_BETA]), self.c_type)[()]
            a = A[oa:oa + M * K].reshape(M, K)
            b = B[ob:ob + K * N].reshape(K, N)
            c = C[oc:oc + M * N].reshape(M, N)
            d0 = D[od:od + M * N].reshape(M, N)
            d, _ = cm2_gemm_ops.expected_tile(a, b, c, alpha, beta, slice(ty * self.tile_m, (ty + 1) * self.tile_m),
                                              slice(tx * self.tile_n, (tx + 1) * self.tile_n), d0, self.c_type)
            D[od:od + M * N] = d.ravel()
        return None

    def _execute_khr(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """The khr route as the shader runs it: each TILE_K chunk of A's tile rows and B's tile
        columns loaded with OpCooperativeMatrixLoadKHR (``khr_load``), C's tile likewise, the tile
        computed, D's tile stored with OpCooperativeMatrixStoreKHR (``khr_store``)."""
        tm, tn, tk = self.tile_m, self.tile_n, self.tile_k
        for w, offs in zip(params, offsets):
            M, N, K, ty, tx = (int(x) for x in w[:5])
            alpha = from_bits(int(w[W_ALPHA]), self.c_type)[()]
            beta = from_bits(int(w[W_BETA]), self.c_type)[()]
            strides = [int(x) for x in w[W_STRIDES:W_STRIDES + 4]]
            sa, sb, sc, sd = strides
            la, lb, lc, ld = self.layouts
            mem = [b[int(o):int(o) + n] for b, o, n in zip(buffers, offs, self.extents(M, N, K, strides))]
            a = np.hstack([khr_load(tile_access(la, sa, ty * tm, k), tm, tk, mem[0], self.a_type)
                           for k in range(0, K, tk)])
            b = np.vstack([khr_load(tile_access(lb, sb, k, tx * tn), tk, tn, mem[1], self.a_type)
                           for k in range(0, K, tk)])
            c = khr_load(tile_access(lc, sc, ty * tm, tx * tn), tm, tn, mem[2], self.c_type)
            everything = slice(None)
            d, _ = cm2_gemm_ops.expected_tile(a, b, c, alpha, beta, everything, everything, c, self.c_type)
            out = mem[3]
            out[:] = khr_store(tile_access(ld, sd, ty * tm, tx * tn), d, out, self.c_type)


def khr_load(access: KhrAccess, rows: int, cols: int, memory: np.ndarray, component: ComponentType) -> np.ndarray:
    """OpCooperativeMatrixLoadKHR (the name the reference semantics call, and a mutant patches)."""
    return khr.expected_load(access, rows, cols, memory, component)


def khr_store(access: KhrAccess, matrix: np.ndarray, memory: np.ndarray, component: ComponentType) -> np.ndarray:
    """OpCooperativeMatrixStoreKHR (the name the reference semantics call, and a mutant patches)."""
    return khr.expected_store(access, matrix, memory, component)


#: alpha and beta for float accumulators: powers of two (exact scaling) and zero.
FLOAT_SCALES = (1.0, 0.0, 2.0, -1.0, 0.5, -2.0, -0.5)


@dataclass(frozen=True)
class GemmCase:
    family: ClassVar[str] = FAMILY_NAME

    shader: GemmVariant
    m_tiles: int = 1
    n_tiles: int = 1
    k_tiles: int = 1
    ty: int = 0
    tx: int = 0
    alpha: float | int = 1
    beta: float | int = 0
    seed: int = 0
    #: float data: ``grid`` (multiples of 1/8: every sum exact in any order) or ``random`` (full
    #: mantissas, magnitudes 2^-3..2, C in [-8, 8]: the sums round, so a device numeric model is
    #: seen bit for bit; the spec bound holds for any data: a float16 sum of such terms is far from
    #: overflow, and flushing a subnormal partial sum costs less than 2^-14, far below the bound's
    #: gamma_K * sum|a||b| >= 16 * 2^-11 * 16 * 2^-6)
    values: str = "grid"
    #: khr route: the Stride (leading dimension, in elements) of A, B, C and D in memory
    strides: tuple[int, ...] = ()

    def variant(self) -> GemmVariant:
        return self.shader

    def dims(self) -> tuple[int, int, int]:
        v = self.shader
        return self.m_tiles * v.tile_m, self.n_tiles * v.tile_n, self.k_tiles * v.tile_k

    def params(self) -> np.ndarray:
        M, N, K = self.dims()
        c = self.shader.c_type
        bits = to_bits(np.asarray([self.alpha, self.beta], dtype=c.dtype), c)
        return np.array([M, N, K, self.ty, self.tx, int(bits[0]), int(bits[1]), *self.strides], dtype=np.uint32)

    def inputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        M, N, K = self.dims()
        v = self.shader
        rng = np.random.Generator(np.random.PCG64(self.seed))
        if v.a_type.is_float and self.values == "random":
            sign = lambda n: np.where(rng.integers(0, 2, size=n) == 1, -1.0, 1.0)  # noqa: E731
            a = (sign(M * K) * np.exp2(rng.uniform(-3, 1, size=M * K))).astype(v.a_type.dtype)
            b = (sign(K * N) * np.exp2(rng.uniform(-3, 1, size=K * N))).astype(v.a_type.dtype)
            c = rng.uniform(-8, 8, size=M * N).astype(v.c_type.dtype)
        elif v.a_type.is_float:  # multiples of 1/8 in [-2, 2]: exact in float16 and bfloat16
            a = (rng.integers(-16, 17, size=M * K) / 8).astype(v.a_type.dtype)
            b = (rng.integers(-16, 17, size=K * N) / 8).astype(v.a_type.dtype)
            c = rng.integers(-8, 9, size=M * N).astype(v.c_type.dtype)
        else:
            a = random_values(v.a_type, M * K, self.seed)
            b = random_values(v.a_type, K * N, self.seed ^ 0x1234567)
            c = random_values(v.c_type, M * N, self.seed ^ 0x7654321)
        return a, b, c

    def _alpha_beta(self) -> tuple[Any, Any]:
        c = self.shader.c_type
        return np.asarray(self.alpha, c.dtype)[()], np.asarray(self.beta, c.dtype)[()]

    def __post_init__(self) -> None:
        if self.values not in ("grid", "random"):
            raise ValueError(f"GemmCase values {self.values!r}: use 'grid' or 'random'")
        if self.values == "random" and not (self.shader.a_type.is_float and self.shader.c_type.is_float):
            raise ValueError("GemmCase values 'random' needs float A, B and C (integer data have no "
                             "rounding to see) -> use values 'grid'")
        v = self.shader
        if len(self.strides) != (4 if v.route is Route.khr else 0):
            raise ValueError(f"a {v.route.value}-route GEMM case has {'4' if v.route is Route.khr else 'no'} "
                             f"strides (A, B, C, D), not {len(self.strides)}")
        if v.route is Route.khr:
            self._check_strides()

    def _check_strides(self) -> None:
        """Each matrix's lines are disjoint (its stride at least a line), and every tile access
        keeps VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986's alignment (khr.check_access)."""
        v = self.shader
        M, N, K = self.dims()
        for name, (whole, rows, cols), (tr, tc), comp in zip("ABCD", v.whole(M, N, K, self.strides),
                                                             v.tile_shapes(), v.components()):
            if whole.stride < khr.line_length(whole.layout, rows, cols):
                raise ValueError(f"{name}'s stride {whole.stride} is shorter than its {whole.layout.value} lines "
                                 f"({khr.line_length(whole.layout, rows, cols)} elements): draw a longer one")
            khr.check_access(tile_access(whole.layout, whole.stride, tr, tc), tr, tc, comp,
                             is_store=name == "D")
    def data(self) -> CaseData:
        if self.shader.route is Route.khr:
            return self._khr_data()
        v = self.shader
        M, N, K = self.dims()
        a, b, c = self.inputs()
        d0 = np.full(M * N, from_bits(sentinel_bits(v.c_type), v.c_type), dtype=v.c_type.dtype)
        alpha, beta = self._alpha_beta()
        d, tol = cm2_gemm_ops.expected_tile(a.reshape(M, K), b.reshape(K, N), c.reshape(M, N), alpha, beta,
                                            slice(self.ty * v.tile_m, (self.ty + 1) * v.tile_m),
                                            slice(self.tx * v.tile_n, (self.tx + 1) * v.tile_n), d0.reshape(M, N),
                                            v.c_type)
        return CaseData(self.params(), [a, b, c, d0], [None, None, None, d.ravel()],
                        [None, None, None, tol.ravel()] if v.c_type.is_float else None)

    def d_matrix(self, memory: np.ndarray) -> np.ndarray:
        """D (M x N) as it lies in ``memory``, D's buffer: row-major and dense on the tensor route,
        by its layout and stride on the khr route (the padding between lines left out)."""
        M, N, K = self.dims()
        v = self.shader
        if v.route is Route.tensor:
            return np.asarray(memory).reshape(M, N)
        whole, rows, cols = v.whole(M, N, K, self.strides)[3]
        return np.asarray(memory)[khr.component_indices(whole, rows, cols, v.c_type)]

    def _khr_data(self) -> CaseData:
        """The khr route: the same matrices as the tensor route's (:meth:`inputs`), each laid out in
        its memory by its layout and stride (the padding between lines poisoned); D's memory
        poisoned. The expected tile follows the shader's instructions as the reference semantics
        run them (:meth:`GemmVariant._execute_khr`): A's, B's and C's tiles loaded with ``khr_load``,
        D's tile (and its tolerance) stored with ``khr_store``, so a deviation of those accesses (a
        mutant, ``--expect-deviation``) moves the expectation as it moves the result."""
        v = self.shader
        M, N, K = self.dims()
        a, b, c = self.inputs()
        alpha, beta = self._alpha_beta()
        initial = []
        for (whole, rows, cols), comp, x, n in zip(v.whole(M, N, K, self.strides), v.components(),
                                                   (a, b, c, None), v.extents(M, N, K, self.strides)):
            memory = np.full(n, from_bits(sentinel_bits(comp), comp), dtype=comp.dtype)
            if x is not None:  # the whole matrix laid out (not a device access: its alignment is the tile's)
                memory[khr.component_indices(whole, rows, cols, comp)] = x.reshape(rows, cols)
            initial.append(memory)
        (la, lb, lc, ld), (sa, sb, sc, sd) = v.layouts, self.strides
        tm, tn, tk, row, col = v.tile_m, v.tile_n, v.tile_k, self.ty * v.tile_m, self.tx * v.tile_n
        at = np.hstack([khr_load(tile_access(la, sa, row, k), tm, tk, initial[0], v.a_type) for k in range(0, K, tk)])
        bt = np.vstack([khr_load(tile_access(lb, sb, k, col), tk, tn, initial[1], v.a_type) for k in range(0, K, tk)])
        ct = khr_load(tile_access(lc, sc, row, col), tm, tn, initial[2], v.c_type)
        everything = slice(None)
        d, tol = cm2_gemm_ops.expected_tile(at, bt, ct, alpha, beta, everything, everything, ct, v.c_type)
        to_d = tile_access(ld, sd, row, col)
        expected = khr_store(to_d, d, initial[3], v.c_type)
        if not v.c_type.is_float:
            return CaseData(self.params(), initial, [None, None, None, expected])
        out_tol = khr_store(to_d, tol, np.zeros(initial[3].size), v.c_type)
        return CaseData(self.params(), initial, [None, None, None, expected], [None, None, None, out_tol])

    def compare_rule(self) -> CompareRule:
        return CompareRule("tolerance") if self.shader.c_type.is_float else CompareRule("bitwise")

    def to_json(self) -> dict[str, Any]:
        out = {"family": FAMILY_NAME, "variant": self.shader.to_json(),
               "tiles": [self.m_tiles, self.n_tiles, self.k_tiles], "tile": [self.ty, self.tx],
               "alpha": self.alpha, "beta": self.beta, "seed": self.seed}
        if self.values != "grid":  # grid cases keep the names they had
            out["values"] = self.values
        if self.strides:  # the khr route's; a tensor-route case's JSON and name are as before routes
            out["strides"] = list(self.strides)
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> GemmCase:
        v = GemmVariant.from_json(o["variant"])
        num = float if v.c_type.is_float else int
        return cls(v, *(int(t) for t in o["tiles"]), *(int(t) for t in o["tile"]), num(o["alpha"]),
                   num(o["beta"]), int(o["seed"]), o.get("values", "grid"), tuple(int(s) for s in o.get("strides", ())))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        if buffer != 3:
            return {}
        M, N, _ = self.dims()
        v = self.shader
        row, col = divmod(element, N)
        if v.route is Route.khr:  # D's lines are rows (RowMajor) or columns, self.strides[3] apart
            line, within = divmod(element, self.strides[3])
            if within >= khr.line_length(v.layouts[3], M, N):
                return {"padding": True}
            row, col = (line, within) if v.layouts[3] is Layout.RowMajor else (within, line)
        return {"row": row, "col": col, "inTile": row // v.tile_m == self.ty and col // v.tile_n == self.tx}


def h100_model(case: GemmCase, params: Any) -> list[np.ndarray | None] | None:
    """D under a device model (ctsgen.oracle.models.h100): MMA steps with aligned, truncated
    terms and an fp32 accumulator rounded toward zero, then the fp32 epilogue (float16 / bfloat16
    -> float32); float16 -> float16 with an fp16 accumulator (``h100.f16_step``: a fused step rounded to nearest)
    and the epilogue in float16."""
    v = case.shader
    if v.a_type not in h100.K_STEP or v.c_type not in (ComponentType.float32, ComponentType.float16):
        return None
    M, N, K = case.dims()
    a, b, c = case.inputs()
    rows = slice(case.ty * v.tile_m, (case.ty + 1) * v.tile_m)
    cols = slice(case.tx * v.tile_n, (case.tx + 1) * v.tile_n)
    r = h100.gemm(a.reshape(M, K)[rows], b.reshape(K, N)[:, cols], v.a_type, params, v.c_type)
    alpha, beta = case._alpha_beta()
    d = np.full((M, N), from_bits(sentinel_bits(v.c_type), v.c_type), dtype=v.c_type.dtype)
    d[rows, cols] = h100.gemm_epilogue(r, c.reshape(M, N)[rows, cols], float(alpha), float(beta), v.c_type)
    if v.route is Route.khr:  # the tile stored into D's memory, as the case's expected D is
        memory = case.data().initial[3]
        at = tile_access(v.layouts[3], case.strides[3], case.ty * v.tile_m, case.tx * v.tile_n)
        return [None, None, None, khr.expected_store(at, d[rows, cols], memory, v.c_type)]
    return [None, None, None, d.ravel()]
