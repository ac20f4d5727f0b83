"""lavapipe-reduce-tiles: the exact model of lavapipe's Row and Column reductions (docs/validation.md,
"lavapipe: Row and Column reductions"), as an expected deviation and as a mutant."""

from __future__ import annotations

import numpy as np
import pytest

from ctsgen.mutants.deviations import data_under, expected_under, reaching
from ctsgen.families import get_family
from ctsgen.families.cm2_reduce.case import ReduceCase, ReduceVariant
from ctsgen.ops import cm2_reduce as cm2_reduce_ops
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, expected_reduce
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.mutants.catalogue import get_mutant
from ctsgen.toolchain.variants import compile_variant

LVP = "lavapipe-reduce-tiles"
S32 = ComponentType.sint32


def _lavapipe(matrix: np.ndarray, mode: ReduceMode, combine: Combine, out_rows: int, out_cols: int) -> np.ndarray:
    with get_mutant(LVP).applied():
        return cm2_reduce_ops.expected_reduce(matrix, mode, combine, S32, out_rows, out_cols)[0]


def _matrix(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(rows * 100 + cols).integers(-1000, 1000, size=(rows, cols)).astype(np.int32)


def test_a_16x24_row_sum_gives_rows_8_to_15_row_0_to_7s_sums_of_columns_8_to_15() -> None:
    """What lavapipe gave (Mesa 26.2.6): 192 of 384 elements differ."""
    m = _matrix(16, 24)
    got, spec = _lavapipe(m, ReduceMode.Row, Combine.sum, 16, 24), m.sum(axis=1, keepdims=True)
    assert np.array_equal(got[:8], np.broadcast_to(spec[:8], (8, 24)))
    assert np.array_equal(got[8:], np.broadcast_to(m[:8, 8:16].sum(axis=1, keepdims=True), (8, 24)))
    assert int((got != np.broadcast_to(spec, (16, 24))).sum()) == 192


def test_a_24x16_row_max_takes_the_tiles_numbered_row_major() -> None:
    """Row tile K reads tile number K of 8x8 tiles numbered row-major: with 2 tiles a row, tile 2 is
    rows 8-15, columns 0-7."""
    m = _matrix(24, 16)
    got = _lavapipe(m, ReduceMode.Row, Combine.max, 24, 8)
    assert np.array_equal(got[8:16, 0], m[0:8, 8:16].max(axis=1))
    assert np.array_equal(got[16:24, 0], m[8:16, 0:8].max(axis=1))
    assert np.array_equal(got[:8, 0], m[:8].max(axis=1))


def test_a_16x24_column_sum_gives_columns_8_to_23_the_sums_of_rows_0_to_7() -> None:
    m = _matrix(16, 24)
    got = _lavapipe(m, ReduceMode.Column, Combine.sum, 8, 24)
    assert np.array_equal(got[:, :8], np.broadcast_to(m[:, :8].sum(axis=0), (8, 8)))
    assert np.array_equal(got[:, 8:], np.broadcast_to(m[:8, 8:].sum(axis=0), (8, 16)))


@pytest.mark.parametrize("mode, rows, cols, out", [
    (ReduceMode.Row, 8, 24, (8, 24)), (ReduceMode.Row, 24, 8, (24, 8)), (ReduceMode.Column, 8, 24, (8, 24)),
    (ReduceMode.Column, 24, 8, (16, 8)), (ReduceMode.RowColumn, 16, 24, (16, 24)),
    (ReduceMode.Block2x2, 16, 24, (8, 12))])
def test_shapes_8_wide_or_tall_and_the_other_modes_are_as_the_spec_says(
        mode: ReduceMode, rows: int, cols: int, out: tuple[int, int]) -> None:
    m = _matrix(rows, cols)
    assert np.array_equal(_lavapipe(m, mode, Combine.xor, *out), expected_reduce(m, mode, Combine.xor, S32, *out)[0])


def _variant(mode: ReduceMode, rows: int, cols: int) -> ReduceVariant:
    source = MatrixType(ComponentType.float32, Scope.Subgroup, rows, cols, MatrixUse.Accumulator)
    return ReduceVariant(mode, Combine.sum, source, source)


def test_as_an_expected_deviation_a_case_keeps_its_inputs_and_its_float_tolerance_follows() -> None:
    fam = get_family("cm2-reduce")
    c = ReduceCase(_variant(ReduceMode.Row, 16, 16), seed=3, values="random")
    spec = c.data()
    [deviated] = data_under(fam, [c], (LVP,))
    assert all(np.array_equal(a, b) for a, b in zip(deviated.initial, spec.initial))
    src = spec.initial[0].reshape(16, 16).astype(np.float64)
    want = np.broadcast_to(src[:8, 8:].sum(axis=1, keepdims=True), (8, 16))
    got = deviated.expected[1].reshape(16, 16)[8:].astype(np.float64)
    assert np.all(np.abs(got - want) <= deviated.tolerance[1].reshape(16, 16)[8:])
    assert not np.array_equal(deviated.expected[1], spec.expected[1])
    # the tolerance is the one of 8 terms, not of 16
    assert np.all(deviated.tolerance[1].reshape(16, 16)[8:] < spec.tolerance[1].reshape(16, 16)[8:])


def test_only_modules_with_a_reduce_can_show_it() -> None:
    sv = compile_variant(_variant(ReduceMode.Column, 16, 16), "cm2-reduce", validation="if-installed")
    assert reaching((LVP, "setdimension-floor"), sv) == (LVP,)
    fam = get_family("cm2-reduce")
    c = ReduceCase(_variant(ReduceMode.Column, 16, 16), seed=1)
    assert np.array_equal(expected_under(fam, c, c.data(), ()).expected[1], c.data().expected[1])
