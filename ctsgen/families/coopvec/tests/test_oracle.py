"""Oracle properties from SPV_NV_cooperative_vector (OpCooperativeVectorMatrixMulAddNV text)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ctsgen.families.coopvec import oracle
from ctsgen.families.coopvec.case import CoopVecVariant
from ctsgen.families.coopvec.data import case_data
from ctsgen.families.coopvec.case import CoopVecCase
from ctsgen.model.types import CoopVecType as T

RNG = np.random.default_rng(7)


def test_identity_matrix_returns_the_converted_input() -> None:
    x = np.array([[1.5, -2.0, 0.25]])
    assert np.array_equal(oracle.matmul(x, np.eye(3), None, T.float16), x.astype(np.float16))


def test_linear_in_the_bias() -> None:
    x = RNG.integers(-128, 128, (4, 5))
    w = RNG.integers(-128, 128, (3, 5))
    b = RNG.integers(-1000, 1000, 3)
    y0 = oracle.matmul(x, w, None, T.sint32).astype(np.int64)
    assert np.array_equal(oracle.matmul(x, w, b, T.sint32).astype(np.int64), y0 + b)


def test_transpose_equivalence_through_the_variant() -> None:
    """A transposed K x M stored matrix gives the same result as its M x K transpose untransposed."""
    v = CoopVecVariant("matmul", T.float16, T.float16, T.float16, T.float16, T.float16, 2, True, 3, 5)
    stored = RNG.normal(size=(5, 3)).astype(np.float16)
    buf = stored.view(np.uint8).ravel()
    assert np.array_equal(v.read_matrix(buf, 0, 0), stored.T.astype(np.float64))


def test_int_accumulation_wraps_like_int64_reduced_mod_2_32() -> None:
    """"Integer operations ... at the precision of the Result Type and are exact (with the usual wrapping rules)"."""
    x = np.array([[127, 127]])
    w = np.array([[127, 127]])
    b = np.array([2**31 - 1])
    got = oracle.matmul(x, w, b, T.sint32)
    exact = 127 * 127 * 2 + 2**31 - 1
    assert int(got[0, 0]) == ((exact + 2**31) % 2**32) - 2**31 < 0


def test_conversions_saturate_and_round_to_nearest_even() -> None:
    assert oracle.convert_input(np.array([300, -300, 5], np.int32), T.sint32, T.sint8).tolist() == [127, -128, 5]
    assert oracle.convert_input(np.array([-7, 300], np.int32), T.sint32, T.uint8).tolist() == [0, 255]
    assert oracle.convert_input(np.array([2.5, 3.5, -0.5, 127.5, -1e9], np.float32), T.float32,
                                T.sint8).tolist() == [2, 4, 0, 127, -128]
    assert oracle.convert_input(np.array([-1], np.int8), T.sint8, T.uint8).tolist() == [0]


def test_packed_int8_lowest_component_in_lowest_bits() -> None:
    word = np.array([0x80FF0201], np.uint32)
    assert oracle.convert_input(word, T.uint32, T.sint8packed).tolist() == [1, 2, -1, -128]
    assert oracle.convert_input(word, T.uint32, T.uint8packed).tolist() == [1, 2, 255, 128]


@pytest.mark.parametrize("t", [T.floate4m3, T.floate5m2, T.float16])
def test_fp8_edge_values_convert_like_ml_dtypes(t: T) -> None:
    fi = ml_dtypes.finfo(t.dtype)
    edges = np.array([float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal), -float(fi.max)])
    got = oracle.convert_input(edges.astype(np.float16), T.float16, t)
    assert np.array_equal(got, edges.astype(t.dtype).astype(np.float64))


def test_float_results_stay_within_their_derived_tolerance_and_well_conditioned() -> None:
    """The data rule: |y| >= S/4 wherever the tolerance is proportional to S."""
    v = CoopVecVariant("matmuladd", T.float16, T.floate4m3, T.floate4m3, T.float16, T.float16, 2, False, 16, 64)
    d = case_data(CoopVecCase(v, 0, 0, 16, seed=3, edges=True))
    tol, exp = d.tolerance[3], d.expected[3].astype(np.float64)
    used = tol > 0
    assert (tol[used] <= 2e-3 * np.abs(exp[used]) + 1e-3).all()


def test_accumulation_tolerance_covers_every_order() -> None:
    init = np.full(4, 1.0, np.float16)
    terms = RNG.uniform(0.1, 2, (32, 4)).astype(np.float16)
    fwd = oracle.accumulate_f16(init, terms).astype(np.float64)
    rev = oracle.accumulate_f16(init, terms[::-1]).astype(np.float64)
    assert (np.abs(fwd - rev) <= oracle.accumulate_tolerance(init, terms, False)).all()
