"""Expected results of OpCooperativeMatrixReduceNV (SPV_NV_cooperative_matrix2).

Reduce mode (3.X Cooperative Matrix Reduce Mode): Row (0x1) combines the
elements of each row and writes the result to every element of that row of
the result (whose column count may differ: the value is replicated);
Column (0x2) likewise per column; Row|Column (0x3) combines the whole
matrix into every result element; 2x2 (0x4) combines each 2x2 block
(rows 2i..2i+1, columns 2j..2j+1) into result element (i, j), the result
having half the rows and columns. The order in which CombineFunc is applied
is the implementation's (docs/spec-decisions.md "cm2-reduce-semantics").

Vectorised: the reduction domain of every result element is a reshaped
numpy view; combine functions are numpy ufunc reductions evaluated exactly
(float64 for floats, int64 with wrapping for integers) and rounded once.
"""

from __future__ import annotations

import enum

import numpy as np

from ctsgen.model.types import ComponentType
from ctsgen.oracle.numeric import rounding_bound, sum_error_bound, unit_roundoff


class ReduceMode(enum.IntEnum):
    """Cooperative Matrix Reduce Mode bits."""

    Row = 0x1
    Column = 0x2
    RowColumn = 0x3
    Block2x2 = 0x4

    @property
    def glsl(self) -> str:
        return {ReduceMode.Row: "gl_CooperativeMatrixReduceRowNV",
                ReduceMode.Column: "gl_CooperativeMatrixReduceColumnNV",
                ReduceMode.RowColumn: "gl_CooperativeMatrixReduceRowAndColumnNV",
                ReduceMode.Block2x2: "gl_CooperativeMatrixReduce2x2NV"}[self]

    @property
    def snake(self) -> str:
        return {ReduceMode.RowColumn: "row_column", ReduceMode.Block2x2: "2x2"}.get(self, self.name.lower())


class Combine(str, enum.Enum):
    """The CombineFunc: all associative and commutative, so any order gives the exact
    result for integers, max and min; float sums get a derived tolerance. ``xor`` is
    written asymmetrically in the shader ((a | b) - (a & b)) but is a ^ b."""

    sum = "sum"
    max = "max"
    min = "min"
    product = "product"
    xor = "xor"


#: A float sum is drawn only when gamma_{n-1} stays meaningful: (n-1) * u <= 1/8
#: (at most 256 float16 terms), so the bound is at most about 14% of sum|x|.
MAX_SUM_NU = 1 / 8


def domain_size(mode: ReduceMode, rows: int, cols: int) -> int:
    """Number of source elements combined into one result element."""
    return {ReduceMode.Row: cols, ReduceMode.Column: rows, ReduceMode.RowColumn: rows * cols,
            ReduceMode.Block2x2: 4}[mode]


def sum_is_meaningful(mode: ReduceMode, rows: int, cols: int, component: ComponentType) -> bool:
    """Whether the float-sum tolerance of this reduction is tight enough to test anything."""
    return not component.is_float or (domain_size(mode, rows, cols) - 1) * unit_roundoff(component) <= MAX_SUM_NU


def result_shape(mode: ReduceMode, rows: int, cols: int, out_rows: int, out_cols: int) -> str | None:
    """None if an (out_rows x out_cols) result is allowed for a rows x cols source, else why not."""
    if mode is ReduceMode.Block2x2:
        if (out_rows * 2, out_cols * 2) != (rows, cols):
            return f"2x2 needs a result of half the source's size ({rows // 2}x{cols // 2})"
    elif mode is ReduceMode.Row and out_rows != rows:
        return "Row reduction keeps the number of rows"
    elif mode is ReduceMode.Column and out_cols != cols:
        return "Column reduction keeps the number of columns"
    return None


def reduction_domains(matrix: np.ndarray, mode: ReduceMode) -> np.ndarray:
    """(..., a, b, n) array: the n elements combined into reduced value (a, b) of each matrix of a
    stack (..., rows, cols) (one per subgroup's tile)."""
    *lead, r, c = matrix.shape
    if mode is ReduceMode.Row:
        return matrix.reshape(*lead, r, 1, c)
    if mode is ReduceMode.Column:
        return np.swapaxes(matrix, -1, -2).reshape(*lead, 1, c, r)
    if mode is ReduceMode.RowColumn:
        return matrix.reshape(*lead, 1, 1, r * c)
    return np.swapaxes(matrix.reshape(*lead, r // 2, 2, c // 2, 2), -3, -2).reshape(*lead, r // 2, c // 2, 4)


def _broadcast(reduced: np.ndarray, out_rows: int, out_cols: int) -> np.ndarray:
    shape = (*reduced.shape[:-2], out_rows, out_cols)
    return np.broadcast_to(reduced, shape).copy() if reduced.shape != shape else reduced


def expected_reduce(matrix: np.ndarray, mode: ReduceMode, combine: Combine, component: ComponentType,
                    out_rows: int, out_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """(expected result, per-element absolute tolerance) of reducing ``matrix`` (rows x cols), or of
    each matrix of a stack (..., rows, cols) independently (one tile per subgroup).

    Integers wrap (the result is exact modulo 2^width); max/min are exact;
    a float product is exact for the drawn data (powers of two); a float sum
    is rounded once and bounded by gamma_{n-1} * sum|x| + u*|sum|
    (ctsgen.oracle.numeric.sum_error_bound: any order of combination)."""
    why = result_shape(mode, *matrix.shape[-2:], out_rows, out_cols)
    if why:
        raise ValueError(why)
    d = reduction_domains(matrix, mode)
    zero = np.zeros((*matrix.shape[:-2], out_rows, out_cols))
    if combine in (Combine.max, Combine.min):
        red = (d.max if combine is Combine.max else d.min)(axis=-1)
        return _broadcast(red.astype(component.dtype), out_rows, out_cols), zero
    if not component.is_float:
        wide = d.astype(np.int64)
        bits = 8 * component.size
        mask = (1 << bits) - 1
        if combine is Combine.sum:
            red = wide.sum(axis=-1) & mask
        elif combine is Combine.xor:
            red = np.bitwise_xor.reduce(wide & mask, axis=-1)
        else:  # product modulo 2^bits, multiplying in uint64 (exact modulo 2^64)
            red = np.multiply.reduce((wide & mask).astype(np.uint64), axis=-1) & np.uint64(mask)
        red = red.astype(np.uint64).astype(component.bits_dtype).view(component.dtype)
        return _broadcast(red, out_rows, out_cols), zero
    if combine is Combine.xor:
        raise ValueError("xor combines integers only")
    exact = d.astype(np.float64)
    if combine is Combine.product:
        red = np.multiply.reduce(exact, axis=-1)
        if np.any(red.astype(component.dtype).astype(np.float64) != red):
            raise ValueError("a float product is not exact in the type; draw powers of two with a bounded exponent")
        return _broadcast(red.astype(component.dtype), out_rows, out_cols), zero
    s = exact.sum(axis=-1)  # exact: the drawn values share a fixed-point grid
    tol = sum_error_bound(np.abs(exact).sum(axis=-1), d.shape[-1], component) + rounding_bound(s, component)
    return _broadcast(s.astype(component.dtype), out_rows, out_cols), _broadcast(tol, out_rows, out_cols)
