"""The cm2-gemm family's case model: a GEMM tile through tensor-layout slices, with alpha/beta.

A :class:`GemmVariant` is the compile-time signature: the A/B/C component
types of one flexible-dimensions property entry (VkCooperativeMatrixFlexibleDimensionsPropertiesNV),
its scope and workgroup size, and TILE_M / TILE_N / TILE_K (multiples of the
entry's granularities). A :class:`GemmCase` adds run-time words: M, N, K
(multiples of the tile sizes), the tile (ty, tx) to compute, and the bits
of alpha and beta. Bindings: 1 A (M x K), 2 B (K x N), 3 C (M x N),
4 D (M x N, poisoned first).
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
from ctsgen.families.cm2_gemm.oracle import expected_tile
from ctsgen.families.cm2_shared import requirements_for
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.oracle.values import from_bits, random_values, sentinel_bits, to_bits
from ctsgen.templates import render

FAMILY_NAME = "cm2-gemm"
N_BUFFERS = 4
W_M, W_N, W_K, W_TY, W_TX, W_ALPHA, W_BETA = range(7)
FAMILY_WORDS = 7


@dataclass(frozen=True)
class GemmVariant:
    a_type: ComponentType
    c_type: ComponentType
    scope: Scope
    workgroup_size: int
    tile_m: int
    tile_n: int
    tile_k: int

    def matrices(self) -> tuple[MatrixType, MatrixType, MatrixType]:
        s, w = self.scope, self.workgroup_size
        return (MatrixType(self.a_type, s, self.tile_m, self.tile_k, MatrixUse.A, w),
                MatrixType(self.a_type, s, self.tile_k, self.tile_n, MatrixUse.B, w),
                MatrixType(self.c_type, s, self.tile_m, self.tile_n, MatrixUse.Accumulator, w))

    @property
    def id(self) -> str:
        scope = "subgroup" if self.scope is Scope.Subgroup else f"workgroup{self.workgroup_size}"
        return (f"cm2_gemm.{self.a_type.name}_to_{self.c_type.name}.{scope}"
                f".tile_{self.tile_m}x{self.tile_n}x{self.tile_k}")

    @property
    def local_size_x(self) -> int:
        return self.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        a, c = self.a_type.dtype.name, self.c_type.dtype.name
        return (BufferSpec(1, "A", a), BufferSpec(2, "B", a), BufferSpec(3, "C", c), BufferSpec(4, "D", c))

    def requirements(self) -> Requirements:
        return requirements_for(["cooperativeMatrixTensorAddressing", "cooperativeMatrixFlexibleDimensions"],
                                list(self.matrices()))

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        ma, mb, mc = self.matrices()
        return render(Path(__file__).parent, "shader.comp.j2", v=self, ma=ma, mb=mb, mc=mc,
                      TA=self.a_type.glsl, TC=self.c_type.glsl, c_component=self.c_type.name,
                      bfloat16=self.a_type is ComponentType.bfloat16, H=N_BUFFERS,
                      W=dict(M=W_M, N=W_N, K=W_K, TY=W_TY, TX=W_TX, ALPHA=W_ALPHA, BETA=W_BETA),
                      words=N_BUFFERS + FAMILY_WORDS, baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        return {"aType": self.a_type.name, "cType": self.c_type.name, "scope": self.scope.name,
                "workgroupSize": self.workgroup_size, "tile": [self.tile_m, self.tile_n, self.tile_k]}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> GemmVariant:
        return cls(ComponentType[o["aType"]], ComponentType[o["cType"]], Scope[o["scope"]],
                   int(o["workgroupSize"]), *(int(t) for t in o["tile"]))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: compute each case's tile on host buffers."""
        A, B, C, D = buffers
        for w, (oa, ob, oc, od) in zip(params, offsets):
            M, N, K, ty, tx = (int(x) for x in w[:5])
            alpha = from_bits(int(w[W_ALPHA]), self.c_type)[()]
            beta = from_bits(int(w[W_BETA]), self.c_type)[()]
            a = A[oa:oa + M * K].reshape(M, K)
            b = B[ob:ob + K * N].reshape(K, N)
            c = C[oc:oc + M * N].reshape(M, N)
            d0 = D[od:od + M * N].reshape(M, N)
            d, _ = expected_tile(a, b, c, alpha, beta, slice(ty * self.tile_m, (ty + 1) * self.tile_m),
                                 slice(tx * self.tile_n, (tx + 1) * self.tile_n), d0, self.c_type)
            D[od:od + M * N] = d.ravel()


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

    def variant(self) -> GemmVariant:
        return self.shader

    def dims(self) -> tuple[int, int, int]:
        v = self.shader
        return self.m_tiles * v.tile_m, self.n_tiles * v.tile_n, self.k_tiles * v.tile_k

    def params(self) -> np.ndarray:
        M, N, K = self.dims()
        c = self.shader.c_type
        bits = to_bits(np.asarray([self.alpha, self.beta], dtype=c.dtype), c)
        return np.array([M, N, K, self.ty, self.tx, int(bits[0]), int(bits[1])], dtype=np.uint32)

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

    def data(self) -> CaseData:
        v = self.shader
        M, N, K = self.dims()
        a, b, c = self.inputs()
        d0 = np.full(M * N, from_bits(sentinel_bits(v.c_type), v.c_type), dtype=v.c_type.dtype)
        alpha, beta = self._alpha_beta()
        d, tol = expected_tile(a.reshape(M, K), b.reshape(K, N), c.reshape(M, N), alpha, beta,
                               slice(self.ty * v.tile_m, (self.ty + 1) * v.tile_m),
                               slice(self.tx * v.tile_n, (self.tx + 1) * v.tile_n), d0.reshape(M, N), v.c_type)
        return CaseData(self.params(), [a, b, c, d0], [None, None, None, d.ravel()],
                        [None, None, None, tol.ravel()] if v.c_type.is_float else None)

    def compare_rule(self) -> CompareRule:
        return CompareRule("tolerance") if self.shader.c_type.is_float else CompareRule("bitwise")

    def to_json(self) -> dict[str, Any]:
        out = {"family": FAMILY_NAME, "variant": self.shader.to_json(),
               "tiles": [self.m_tiles, self.n_tiles, self.k_tiles], "tile": [self.ty, self.tx],
               "alpha": self.alpha, "beta": self.beta, "seed": self.seed}
        if self.values != "grid":  # grid cases keep the names they had
            out["values"] = self.values
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> GemmCase:
        v = GemmVariant.from_json(o["variant"])
        num = float if v.c_type.is_float else int
        return cls(v, *(int(t) for t in o["tiles"]), *(int(t) for t in o["tile"]), num(o["alpha"]),
                   num(o["beta"]), int(o["seed"]), o.get("values", "grid"))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        if buffer != 3:
            return {}
        M, N, _ = self.dims()
        row, col = divmod(element, N)
        v = self.shader
        return {"row": row, "col": col, "inTile": row // v.tile_m == self.ty and col // v.tile_n == self.tx}


def h100_model(case: GemmCase, params: Any) -> list[np.ndarray | None] | None:
    """D under a device model (ctsgen.oracle.models.h100): MMA steps with aligned, truncated
    terms and an fp32 accumulator rounded toward zero, then the fp32 epilogue (float16 / bfloat16
    -> float32); float16 -> float16 with an fp16 accumulator (``h100.f16_step``: a fused step rounded to nearest)
    and the epilogue in float16."""
    from ctsgen.oracle.models import h100  # noqa: PLC0415

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
    return [None, None, None, d.ravel()]
