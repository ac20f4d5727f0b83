"""The operands of one cooperative-vector instruction (SPV_NV_cooperative_vector): the operation,
the type combination (Input type, Input/Matrix/Bias interpretations, Result type),
MemoryLayout, Transpose and the vector sizes M, K (constant operands of
OpCooperativeVectorMatrixMulAddNV), with the spec's rules on them, the geometry of the input,
matrix and output buffers they imply, and readers of those buffers (:class:`CoopVecSignature`); the type combinations a device
profile advertises and the layouts each allows.
The coopvec family's variant extends it with its shader; the coopvec-program family's MatMulAdd
layers use it as it is.

Operations: ``matmul`` (OpCooperativeVectorMatrixMulNV), ``matmuladd``
(...MulAddNV), ``outer_product`` (OpCooperativeVectorOuterProductAccumulateNV,
M x K fp16 matrix, TrainingOptimal), ``reduce_sum``
(OpCooperativeVectorReduceSumAccumulateNV, K fp16 components).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ctsgen.device.profile import DeviceProfile
from ctsgen.model.types import CoopVecType
from ctsgen.ops import coopvec as oracle

LOCAL = 32  # default invocations per workgroup = input vectors per case: one full subgroup


class CoopVecOp(enum.StrEnum):
    """The instruction a variant tests (its value is the name in packs and case names)."""

    matmul = "matmul"  # OpCooperativeVectorMatrixMulNV
    matmuladd = "matmuladd"  # OpCooperativeVectorMatrixMulAddNV
    outer_product = "outer_product"  # OpCooperativeVectorOuterProductAccumulateNV
    reduce_sum = "reduce_sum"  # OpCooperativeVectorReduceSumAccumulateNV


class MatrixLayout(enum.IntEnum):
    """``VkCooperativeVectorMatrixLayoutNV`` / the SPIR-V MemoryLayout operand (its value in packs)."""

    RowMajor = 0
    ColumnMajor = 1
    InferencingOptimal = 2
    TrainingOptimal = 3

    @property
    def optimal(self) -> bool:
        """An implementation-defined layout, written with vkConvertCooperativeVectorMatrixNV."""
        return self >= MatrixLayout.InferencingOptimal


LAYOUTS = tuple(lay.name for lay in MatrixLayout)  # names, indexed by the layout's value
MATMUL_OPS = (CoopVecOp.matmul, CoopVecOp.matmuladd)
TRAINING_OPS = (CoopVecOp.outer_product, CoopVecOp.reduce_sum)
F16 = CoopVecType.float16


def ceil_to(n: int, m: int) -> int:
    return -(-n // m) * m


@dataclass(frozen=True)
class CoopVecSignature:
    """One instruction's compile-time operands (see the module docstring); ``op`` and ``layout`` given as their
    values (a pack's JSON, a strategy's draw) become :class:`CoopVecOp` / :class:`MatrixLayout`."""

    op: CoopVecOp
    inputType: CoopVecType
    inputInterpretation: CoopVecType
    matrixInterpretation: CoopVecType
    biasInterpretation: CoopVecType
    resultType: CoopVecType
    layout: MatrixLayout
    transpose: bool
    M: int
    K: int
    invocations: int = LOCAL

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", CoopVecOp(self.op))
        object.__setattr__(self, "layout", MatrixLayout(self.layout))
        if not 1 <= self.invocations <= 1024:
            raise ValueError(f"invocations {self.invocations}: a workgroup holds 1..1024 invocations "
                             "(maxComputeWorkGroupSize.x)")
        if self.op in MATMUL_OPS:
            if self.transpose and not self.layout.optimal:
                raise ValueError("Transpose is not supported for RowMajor/ColumnMajor (SPV_NV_cooperative_vector)")
            if self.matrixInterpretation in (CoopVecType.floate4m3, CoopVecType.floate5m2) and not self.layout.optimal:
                raise ValueError("an E4M3/E5M2 matrix needs an optimal layout "
                                 "(VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090)")
            if self.inputInterpretation.is_packed and self.K % 4:
                raise ValueError(f"K {self.K}: a packed int8 input holds K/4 uint32 words; K must be a multiple of 4")
        elif self.op is CoopVecOp.outer_product and self.layout is not MatrixLayout.TrainingOptimal:
            raise ValueError("OuterProductAccumulate needs TrainingOptimal "
                             "(VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10093)")

    # -- geometry ---------------------------------------------------------
    @property
    def takes_special_values(self) -> bool:
        """Whether infinities can be fed in: a float MatMul with a float InputInterpretation."""
        return self.op in MATMUL_OPS and self.resultType.is_float and self.inputInterpretation.is_float

    @property
    def optimal(self) -> bool:
        return self.layout.optimal

    @property
    def in_components(self) -> int:
        return self.K // 4 if self.inputInterpretation.is_packed else self.K

    @property
    def in_stride(self) -> int:
        """Bytes between invocations' input vectors (16-aligned, VUID-...-OpCooperativeVectorLoadNV-10099)."""
        n = max(self.M, self.K) if self.op is CoopVecOp.outer_product else self.in_components
        return ceil_to(n * self.inputType.dtype.itemsize, 16)

    @property
    def out_stride(self) -> int:
        n = self.M if self.op in MATMUL_OPS or self.op is CoopVecOp.outer_product else self.K
        t = self.resultType if self.op in MATMUL_OPS else F16
        return ceil_to(n * t.dtype.itemsize, 16)

    @property
    def stored_shape(self) -> tuple[int, int]:
        """Rows x columns of the matrix in memory (K x M when transposed)."""
        return (self.K, self.M) if self.transpose else (self.M, self.K)

    @property
    def source_type(self) -> CoopVecType:
        """Type of the row-major source an optimal layout is converted from (fp8 from fp16:
        VUID-VkConvertCooperativeVectorMatrixInfoNV-dstComponentType-10082 forbids row-major fp8)."""
        return F16 if self.matrixInterpretation in (CoopVecType.floate4m3, CoopVecType.floate5m2) \
            else self.matrixInterpretation

    def rows_of(self, buf: np.ndarray, off: int, n: int) -> np.ndarray:
        """One vector of ``n`` components per invocation, one per in_stride bytes."""
        step = self.in_stride // buf.dtype.itemsize
        return buf[off:off + self.invocations * step].reshape(self.invocations, step)[:, :n]

    def input_vectors(self, buf: np.ndarray, off: int) -> np.ndarray:
        """The invocations' inputs, converted to the InputInterpretation (invocations x K)."""
        raw = self.rows_of(buf, off, self.in_components)
        return oracle.convert_input(raw, self.inputType, self.inputInterpretation)

    def read_matrix(self, buf: np.ndarray, moff: int, stride: int) -> np.ndarray:
        """The effective M x K matrix as float64/int64 values of MatrixInterpretation."""
        rows, cols = self.stored_shape
        if self.optimal:
            src = self.source_type
            stored = buf[:rows * cols * src.dtype.itemsize].view(src.dtype).reshape(rows, cols)
            stored = stored.astype(np.float64) if src.is_float else stored.astype(np.int64)
        else:
            t = self.matrixInterpretation
            es = t.dtype.itemsize
            lines, per = (rows, cols) if self.layout is MatrixLayout.RowMajor else (cols, rows)
            idx = moff + np.arange(lines)[:, None] * stride + np.arange(per * es)[None, :]
            stored = np.ascontiguousarray(buf[idx]).view(t.dtype).reshape(lines, per)
            stored = stored.astype(np.float64) if t.is_float else stored.astype(np.int64)
            if self.layout is MatrixLayout.ColumnMajor:
                stored = stored.T
        return stored.T if self.transpose else stored

    def read_bias(self, buf: np.ndarray, boff: int) -> np.ndarray | None:
        if self.op is not CoopVecOp.matmuladd:
            return None
        t = self.biasInterpretation
        b = buf[boff:boff + self.M * t.dtype.itemsize].view(t.dtype)
        return b.astype(np.float64) if t.is_float else b.astype(np.int64)

    def write_rows(self, buf: np.ndarray, off: int, y: np.ndarray) -> None:
        step = self.out_stride // buf.dtype.itemsize
        buf[off:off + self.invocations * step].reshape(self.invocations, step)[:, :y.shape[1]] = y


def outer_terms(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each invocation's fp16 outer product a_i b_i^T: each binary32 product rounded to fp16,
    returned as binary32 values (on the fp16 grid, what :func:`oracle.accumulate_f16` adds)."""
    p = oracle.widen_to_f32(a)[:, :, None] * oracle.widen_to_f32(b)[:, None, :]
    if p.size < oracle.F16_GRID_MIN_ELEMENTS or not max(float(p.max()), -float(p.min())) < oracle.F16_ROUNDS_TO_INF:
        return oracle.widen_to_f32(p.astype(np.float16))  # small, or NaN or fp16 overflow among the products
    rounded = np.empty_like(p)
    oracle.round_to_f16_grid(p, rounded, np.empty(p.shape, np.uint32))
    return rounded


#: the vector sizes M, K cases take (up to maxCooperativeVectorComponents), smallest first
SIZES = (1, 2, 3, 4, 5, 8, 12, 16, 17, 24, 32, 40, 48, 64, 96, 128)
#: an advertised type combination: Input type, Input / Matrix / Bias interpretations, Result type, Transpose
Combo = tuple[CoopVecType, CoopVecType, CoopVecType, CoopVecType, CoopVecType, bool]
FP8 = (CoopVecType.floate4m3, CoopVecType.floate5m2)


def combinations(profile: DeviceProfile) -> list[Combo]:
    """The profile's advertised combinations, in its order (types ctsgen does not model are left out)."""
    out = []
    for c in profile.coopvec_combinations:
        try:
            out.append((*(CoopVecType.from_vk(c[k]) for k in ("inputType", "inputInterpretation",
                                                               "matrixInterpretation", "biasInterpretation",
                                                               "resultType")), bool(c["transpose"])))
        except ValueError:
            continue
    return out


def valid_layouts(combo: Combo) -> list[MatrixLayout]:
    """Every layout, or only the optimal ones for an E4M3/E5M2 matrix (VUID-...-10090)."""
    return [lay for lay in MatrixLayout if lay.optimal or combo[2] not in FP8]
