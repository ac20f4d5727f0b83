"""The coopvec family's compile-time signature: :class:`CoopVecVariant` (SPV_NV_cooperative_vector).

The operation, the type combination (Input type, Input/Matrix/Bias
interpretations, Result type), MemoryLayout, Transpose and the vector sizes
M, K (constant operands of OpCooperativeVectorMatrixMulAddNV), with what the
case's data (``data.py``) and the case itself (``case.py``) both need: the
operation and layout names and :class:`CaseOperands`, the run-time operands
the data of a case depend on.

Operations: ``matmul`` (OpCooperativeVectorMatrixMulNV), ``matmuladd``
(...MulAddNV), ``outer_product`` (OpCooperativeVectorOuterProductAccumulateNV,
M x K fp16 matrix, TrainingOptimal), ``reduce_sum``
(OpCooperativeVectorReduceSumAccumulateNV, K fp16 components).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ctsgen.core.shader import DEVICE_LAYOUT_KEY, BufferSpec, MatrixConversion
from ctsgen.device.profile import Requirements
from ctsgen.families.coopvec import oracle
from ctsgen.model.types import CoopVecType, coopvec_combination_feature
from ctsgen.templates import render

FAMILY_NAME = "coopvec"
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
W_MATRIX_OFFSET, W_STRIDE, W_BIAS_OFFSET = 0, 1, 2
FAMILY_WORDS = 3
F16 = CoopVecType.float16
VALUE_KINDS = ("random", "edges", "grid", "special")  # how a case's data are drawn (CoopVecCase.values)


def ceil_to(n: int, m: int) -> int:
    return -(-n // m) * m


@dataclass(frozen=True)
class CoopVecVariant:
    """Compile-time signature (see the module docstring); ``op`` and ``layout`` given as their
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

    @property
    def id(self) -> str:
        t = (f"{self.inputType.name}_as_{self.inputInterpretation.name}.m_{self.matrixInterpretation.name}"
             f".b_{self.biasInterpretation.name}.r_{self.resultType.name}")
        if self.op is CoopVecOp.reduce_sum:
            return f"coopvec.reduce_sum.float16.k{self.K}{self.workgroup_suffix}"
        return (f"coopvec.{self.op}.{t}.{LAYOUTS[self.layout].lower()}"
                f"{'.transpose' if self.transpose else ''}.m{self.M}_k{self.K}{self.workgroup_suffix}")

    @property
    def workgroup_suffix(self) -> str:
        return "" if self.invocations == LOCAL else f".wg{self.invocations}"

    @property
    def local_size_x(self) -> int:
        return self.invocations

    def buffers(self) -> tuple[BufferSpec, ...]:
        if self.op in MATMUL_OPS:
            out = [BufferSpec(1, "input", self.inputType.dtype.name), BufferSpec(2, "matrix", "uint8"),
                   BufferSpec(3, "bias", "uint8"), BufferSpec(4, "output", self.resultType.dtype.name)]
            if self.optimal:
                out.append(BufferSpec(5, "optimal", "uint8"))
            return tuple(out)
        if self.op is CoopVecOp.outer_product:
            return (BufferSpec(1, "a", "float16"), BufferSpec(2, "matrix", "float16"),
                    BufferSpec(3, "b", "float16"), BufferSpec(4, "optimal", "uint8"))
        return (BufferSpec(1, "v", "float16"), BufferSpec(2, "sum", "float16"))

    def requirements(self) -> Requirements:
        feats = ["cooperativeVector"]
        if self.op in MATMUL_OPS:
            feats.append(coopvec_combination_feature(self.inputType.vk, self.inputInterpretation.vk,
                                                     self.matrixInterpretation.vk, self.biasInterpretation.vk,
                                                     self.resultType.vk, self.transpose))
        else:
            feats.append("cooperativeVectorTraining")
        return Requirements(extensions=("VK_NV_cooperative_vector",), features=tuple(feats))

    def device_layout(self) -> dict[str, Any]:
        """Placement the runner and backends honour (ctsgen.backends.base.DEVICE_LAYOUT_KEY)."""
        n = len(self.buffers())
        if self.op in MATMUL_OPS:
            out: dict[str, Any] = {"bufferAlign": {"2": 64}}
            if self.optimal:
                rows, cols = self.stored_shape
                out["matrixConversions"] = [MatrixConversion(
                    2, 5, rows, cols, self.source_type.vk, self.matrixInterpretation.vk, int(self.layout),
                    n + W_MATRIX_OFFSET).to_json()]
            return out
        if self.op is CoopVecOp.outer_product:
            return {"matrixConversions": [MatrixConversion(2, 4, self.M, self.K, F16.vk, F16.vk,
                                                           int(MatrixLayout.TrainingOptimal),
                                                           n + W_MATRIX_OFFSET, write_back=True).to_json()]}
        return {}

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        n = len(self.buffers())
        return render(Path(__file__).parent, "shader.comp.j2", v=self, H=n, words=n + FAMILY_WORDS,
                      baked=None if baked is None else [int(w) for w in baked],
                      W=dict(MOFF=W_MATRIX_OFFSET, STRIDE=W_STRIDE, BOFF=W_BIAS_OFFSET),
                      layout_enum=f"gl_CooperativeVectorMatrixLayout{self.layout.name}NV",
                      in_es=self.inputType.dtype.itemsize,
                      res_es=(self.resultType if self.op in MATMUL_OPS else F16).dtype.itemsize)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op.value, "inputType": self.inputType.name, "inputInterpretation": self.inputInterpretation.name,
                "matrixInterpretation": self.matrixInterpretation.name,
                "biasInterpretation": self.biasInterpretation.name, "resultType": self.resultType.name,
                "layout": int(self.layout), "transpose": self.transpose, "M": self.M, "K": self.K,
                "invocations": self.invocations, DEVICE_LAYOUT_KEY: self.device_layout()}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> CoopVecVariant:
        T = CoopVecType
        return cls(CoopVecOp(o["op"]), T[o["inputType"]], T[o["inputInterpretation"]], T[o["matrixInterpretation"]],
                   T[o["biasInterpretation"]], T[o["resultType"]], MatrixLayout(int(o["layout"])), bool(o["transpose"]),
                   int(o["M"]), int(o["K"]), int(o.get("invocations", LOCAL)))

    # -- reference semantics ----------------------------------------------
    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Decode each case's words and run the instruction on host buffers (optimal layouts
        are ignored: the reference reads the row-major source, see MatrixConversion)."""
        for words, offs in zip(params.astype(np.int64), offsets):
            if self.op in MATMUL_OPS:
                x = self.input_vectors(buffers[0], int(offs[0]))
                w = self.read_matrix(buffers[1][offs[1]:], int(words[W_MATRIX_OFFSET]), int(words[W_STRIDE]))
                b = self.read_bias(buffers[2][offs[2]:], int(words[W_BIAS_OFFSET]))
                y = oracle.matmul(x, w, b, self.resultType)
                self.write_rows(buffers[3], int(offs[3]), y)
            elif self.op is CoopVecOp.outer_product:
                a = self.rows_of(buffers[0], int(offs[0]), self.M)
                bv = self.rows_of(buffers[2], int(offs[2]), self.K)
                c = buffers[1][offs[1]:offs[1] + self.M * self.K].reshape(self.M, self.K)
                c[:] = oracle.accumulate_f16(c, outer_terms(a, bv))
            else:
                v = self.rows_of(buffers[0], int(offs[0]), self.K)
                start = int(offs[1]) + int(words[W_BIAS_OFFSET]) // 2
                acc = buffers[1][start:start + self.K]
                acc[:] = oracle.accumulate_f16(acc, v)

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
    """Each invocation's fp16 outer product a_i b_i^T (products rounded to fp16)."""
    return (a.astype(np.float32)[:, :, None] * b.astype(np.float32)[:, None, :]).astype(np.float16)


class CaseOperands(Protocol):
    """The run-time operands and data seed of a case (a :class:`~ctsgen.families.coopvec.case.CoopVecCase`),
    what its data are drawn from."""

    shader: CoopVecVariant
    matrixOffset: int
    matrixStride: int
    biasOffset: int
    seed: int
    values: str

    def params(self) -> np.ndarray: ...
