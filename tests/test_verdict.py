"""The compare rules: bitwise, and per-element tolerance with QualityWarning."""

from __future__ import annotations

import numpy as np
import pytest

from ctsgen.errors import BackendError, DeviceLost, DispatchTimeout, WorkerCrashed
from ctsgen.execute.judge import OutputBuffer, error_result, judge, judge_buffer, status_of
from ctsgen.core.verdict import CaseResult, Status

TOL = {"rule": "tolerance", "warn_fraction": 0.75}


def test_bitwise_tells_minus_zero_from_zero_and_nan_payloads_apart() -> None:
    e = np.array([0.0, 1.0, np.nan], dtype=np.float32)
    a = np.array([-0.0, 1.0, np.nan], dtype=np.float32)
    assert list(judge_buffer(a, e, {"rule": "bitwise"}).bad) == [0]


def test_tolerance_is_an_inclusive_absolute_bound_per_element() -> None:
    e = np.array([1.0, 2.0, 3.0])
    tol = np.array([0.5, 0.0, 0.25])
    a = np.array([1.5, 2.0, 3.3])
    j = judge_buffer(a, e, TOL, tol)
    assert list(j.bad) == [2]
    assert j.max_ratio == pytest.approx(0.3 / 0.25)


def test_tolerance_nan_needs_nan_and_infinity_needs_the_same_infinity() -> None:
    e = np.array([np.nan, np.inf, -np.inf, 1.0])
    a = np.array([np.nan, np.inf, np.inf, np.nan])
    j = judge_buffer(a, e, TOL, np.ones(4))
    assert list(j.bad) == [2, 3]


def test_a_shape_mismatch_fails_every_element() -> None:
    j = judge_buffer(np.zeros(3), np.zeros(4), TOL, np.ones(4))
    assert j.bad.size == 4


def test_quality_warning_near_the_edge() -> None:
    e = np.array([1.0, 2.0], dtype=np.float32)
    tol = np.array([1.0, 1.0])

    def verdict(actual: np.ndarray, rule: dict = TOL):
        return judge("c", [OutputBuffer("out", actual, e, tol)], rule)

    assert verdict(e + np.float32(0.5)).status is Status.Pass
    near = verdict(e + np.float32(0.9))
    assert near.status is Status.QualityWarning and near.max_error_ratio == pytest.approx(0.9)
    assert verdict(e + np.float32(0.9), {"rule": "tolerance"}).status is Status.QualityWarning  # 0.75 by default
    assert verdict(e + np.float32(0.9), {"rule": "tolerance", "warn_fraction": 0.95}).status is Status.Pass
    assert verdict(e + np.float32(1.5)).status is Status.Fail


def test_a_failing_case_names_its_first_mismatches_with_what_the_locator_says() -> None:
    want = np.arange(20, dtype=np.uint16)
    got = want.copy()
    got[[3, 5] + list(range(10, 20))] += 1
    asked = []

    def locate(buffer: int, element: int) -> dict:
        asked.append((buffer, element))
        return {"row": element // 4, "col": element % 4}

    skipped = OutputBuffer("in", np.zeros(2, np.uint16), None)  # not checked: its index still counts
    r = judge("c", [skipped, OutputBuffer("out", got, want)], {"rule": "bitwise"}, locate)
    assert r.status is Status.Fail and r.detail == "12 of 20 elements of 'out' differ"
    assert [m["element"] for m in r.mismatches] == [3, 5, 10, 11, 12, 13, 14, 15]  # MAX_MISMATCHES
    assert asked == [(1, k) for k in (3, 5, 10, 11, 12, 13, 14, 15)]
    assert r.mismatches[0] == {"buffer": "out", "element": 3, "row": 0, "col": 3,
                               "expected": {"value": 3, "bits": "0x0003"}, "actual": {"value": 4, "bits": "0x0004"}}
    assert r.max_error_ratio is None  # bitwise: no error ratio


def test_a_passing_case_never_asks_the_locator() -> None:
    def locate(buffer: int, element: int) -> dict:
        raise AssertionError("the locator is for failing elements only")

    a = np.ones(4, np.float32)
    assert judge("c", [OutputBuffer("out", a, a.copy())], {"rule": "bitwise"}, locate).status is Status.Pass


def test_a_dispatch_without_result_maps_to_the_cts_codes() -> None:
    assert status_of(DispatchTimeout("x")) is Status.Timeout
    assert status_of(DeviceLost("x")) is Status.DeviceLost
    assert status_of(WorkerCrashed("x")) is Status.Crash
    assert status_of(BackendError("x")) is Status.Crash  # no result, no better name for it
    assert error_result("c", DeviceLost("lost at fence 3")) == CaseResult("c", Status.DeviceLost,
                                                                          "DeviceLost: lost at fence 3")

def test_signed_zero_flag_relaxes_bitwise_and_tightens_tolerance() -> None:
    """Decision "signed-zero": bitwise with signed_zero false treats +0 and -0 as equal (and nothing
    else); tolerance with signed_zero true needs an exact zero's sign (an ieee variant declares
    SignedZeroInfNanPreserve)."""
    from ctsgen.core.family import CompareRule
    from ctsgen.execute.judge import judge_buffer

    want = np.array([-0.0, 0.0, 1.0, np.nan], np.float32)
    got = np.array([0.0, -0.0, 1.0, np.nan], np.float32)
    assert judge_buffer(got, want, CompareRule("bitwise").to_json()).bad.tolist() == [0, 1]
    assert judge_buffer(got, want, CompareRule("bitwise", signed_zero=False).to_json()).bad.tolist() == []
    tol = np.zeros(4)
    assert judge_buffer(got, want, CompareRule("tolerance").to_json(), tol).bad.tolist() == []
    assert judge_buffer(got, want, CompareRule("tolerance", signed_zero=True).to_json(), tol).bad.tolist() == [0, 1]


def test_data_movement_keeps_nan_payloads_and_subnormals_bit_for_bit() -> None:
    """Decision "data-movement-bits" (cited, not relaxed): a Constant-clamped element is moved, not
    computed, so tensor-layout's rule compares its bits: a quietened NaN payload, a flushed
    subnormal or a dropped sign of zero each fail; decode's relaxed rule forgives only the sign."""
    from ctsgen.core.family import CompareRule
    from ctsgen.execute.judge import judge_buffer

    want = np.array([0x7FA00001, 0x00000001, 0x80000000], np.uint32).view(np.float32)
    got = np.array([0x7FC00000, 0x00000000, 0x00000000], np.uint32).view(np.float32)
    layout_rule = CompareRule("bitwise").to_json()  # tensor-layout / tensor-view compare_rule
    assert judge_buffer(got, want, layout_rule).bad.tolist() == [0, 1, 2]
    computed = CompareRule("bitwise", signed_zero=False).to_json()  # arithmetic: sign and flush forgiven
    assert judge_buffer(got, want, computed).bad.tolist() == [0]
    moved = CompareRule("tolerance").to_json()  # a NaN tolerance marks a moved element: its bits count
    assert judge_buffer(got, want, moved, np.full(3, np.nan)).bad.tolist() == [0, 1, 2]
    assert judge_buffer(want.copy(), want, moved, np.full(3, np.nan)).bad.tolist() == []


def test_a_result_whose_interval_reaches_the_subnormal_range_may_be_flushed() -> None:
    """Vulkan lets any denormalized result be flushed to zero (no DenormPreserve): where the admitted
    interval holds a subnormal, +0 and -0 pass, however far 0 lies outside it. float16 [2^-24,
    3 * 2^-24] (all subnormal) admits 0 and -0, [2^-14, 2^-13] (all normal) does not, nor does a
    float32 buffer with the first bounds (normal there). Failed before: 0 lay outside the interval."""
    e16 = np.array([2.0**-23, 1.5 * 2.0**-14], np.float16)
    sides = np.array([[2.0**-24, 0.5 * 2.0**-14], [2.0**-24, 0.5 * 2.0**-14]])  # [2^-24, 3 2^-24], [2^-14, 2^-13]
    for zero in (0.0, -0.0):
        got = np.full(2, zero, np.float16)
        assert judge_buffer(got, e16, TOL, sides).bad.tolist() == [1]
    assert judge_buffer(np.zeros(2, np.float32), e16.astype(np.float32), TOL, sides).bad.tolist() == [0, 1]
    # an interval that only reaches into the subnormals from the normal side: [2^-14 - 2^-24, 2^-14]
    reach = np.array([[2.0**-24], [0.0]])
    assert judge_buffer(np.zeros(1, np.float16), np.array([2.0**-14], np.float16), TOL, reach).bad.tolist() == []
    assert judge_buffer(np.zeros(1, np.float16), np.array([2.0**-14], np.float16), TOL, np.zeros((2, 1))
                        ).bad.tolist() == [0]
    # computed results compared bit for bit (signed_zero false): a subnormal expected admits +-0
    rule = {"rule": "bitwise", "signed_zero": False}
    e = np.array([2.0**-20, 2.0**-14], np.float16)
    assert judge_buffer(np.array([-0.0, 0.0], np.float16), e, rule).bad.tolist() == [1]
    assert judge_buffer(np.array([0.0, 0.0], np.float16), e, {"rule": "bitwise"}).bad.tolist() == [0, 1]


def test_a_failing_moved_element_reports_no_nan_tolerance() -> None:
    """A moved element (NaN bound) that fails is reported without a tolerance: strict JSON has no
    NaN, and its rule is its bits."""
    import json

    want = np.array([1.0, -65504.0], np.float16)
    got = np.array([1.0, 0.0], np.float16)
    tol = np.array([[0.0, np.nan], [0.0, np.nan]])
    r = judge("c", [OutputBuffer("out", got, want, tol)], TOL)
    assert r.status is Status.Fail and [m["element"] for m in r.mismatches] == [1]
    assert "tolerance" not in r.mismatches[0]
    json.dumps(r.mismatches, allow_nan=False)


_SPECIALS = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -2.5, 6e-8, 1e-45, 65504.0])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint32"])
@pytest.mark.parametrize("rule", [{"rule": "bitwise"}, {"rule": "bitwise", "signed_zero": False},
                                  {"rule": "tolerance"}, {"rule": "tolerance", "signed_zero": True}])
def test_a_buffer_equal_bit_for_bit_takes_the_short_path_to_the_verdict_the_elements_give(dtype, rule) -> None:
    """judge_buffer passes a buffer whose every bit is as expected without comparing its elements;
    the element comparison (_judge_elements) gives the same: no bad element, ratio 0. Specials
    included (NaN, infinities, signed zeros, subnormals), symmetric, two-sided and moved
    (NaN) tolerances."""
    from ctsgen.execute.judge import _judge_elements, tolerance_sides

    rng = np.random.default_rng(7)
    with np.errstate(invalid="ignore", over="ignore"):
        values = np.concatenate([_SPECIALS, rng.normal(size=22) * 100]).astype(dtype)
    bits = np.dtype(f"uint{8 * values.dtype.itemsize}")
    for tolerance in (None, np.full(values.shape, 0.5), np.zeros(values.shape),
                      np.stack([np.zeros(values.shape), np.full(values.shape, 2.0)]),
                      np.where(np.arange(values.size) % 3 == 0, np.nan, 1.0)):
        if rule["rule"] == "tolerance" and tolerance is None:
            continue
        short = judge_buffer(values, values.copy(), rule, tolerance)
        sides = tolerance_sides(tolerance, values.shape) if rule["rule"] == "tolerance" else None
        full = _judge_elements(values, values.copy(), rule, sides, bits)
        assert short.bad.size == full.bad.size == 0 and short.max_ratio == full.max_ratio == 0.0


def test_the_short_path_needs_the_same_type_not_only_the_same_bits() -> None:
    """float16 1.0 and the uint16 with its bits (0x3c00) are not the same value: the elements are
    compared, as float64, and the tolerance rule fails them."""
    expected = np.array([1.0], np.float16)
    assert judge_buffer(expected.view(np.uint16), expected, {"rule": "tolerance"}, np.zeros(1)).bad.tolist() == [0]


def test_the_rule_and_the_tolerance_are_checked_before_any_short_path() -> None:
    same = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="unknown compare rule"):
        judge_buffer(same, same.copy(), {"rule": "nearly"})
    with pytest.raises(ValueError, match="needs the buffer's tolerance"):
        judge_buffer(same, same.copy(), {"rule": "tolerance"})
