"""coopmat-khr: the MulAdd oracle against hand-worked examples and exact integers / rationals
(ml_dtypes for bfloat16), the element-wise instructions' integer rules by hand, drawn data inside
every instruction's domain on every fixture profile, the shaders through glslang and spirv-val, and
cases through the reference backend."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.device.profile import load_profile
from ctsgen.families import get_family
from ctsgen.families.coopmat_khr.case import KhrCase, KhrVariant, compute, load_operand, store_result
from ctsgen.families.coopmat_khr.operation import FLOAT_OP, INT_OP, Op, element_type
from ctsgen.families.coopmat_khr.strategy import khr_entries, signatures
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.coopvec_elementwise import check_domain
from ctsgen.ops.khr_addressing import Layout, expected_load, expected_store, KhrAccess
from ctsgen.ops.khr_muladd import expected_muladd, saturation_defined
from ctsgen.strategies.sampling import draw_examples
from ctsgen.execute.run import drawn, run_cases
from ctsgen.toolchain.variants import compile_variant
from ctsgen.toolchain import compile_glsl
from ctsgen.toolchain.spirv_patch import instructions, to_words

S8, U8, S32, U32 = ComponentType.sint8, ComponentType.uint8, ComponentType.sint32, ComponentType.uint32
F16, F32, BF16 = ComponentType.float16, ComponentType.float32, ComponentType.bfloat16
PROFILES = sorted((Path(__file__).resolve().parents[3] / "device" / "profiles").glob("*.txt"))
FAMILY = get_family("coopmat-khr")


def _m(comp: ComponentType, rows: int, cols: int, use: MatrixUse = MatrixUse.Accumulator) -> MatrixType:
    return MatrixType(comp, Scope.Subgroup, rows, cols, use, 8)


# -- MulAdd: hand-worked ------------------------------------------------------------------------------
def test_saturating_accumulation_clamps_the_sum_with_c_to_the_result_type() -> None:
    a = np.array([[127, 127]], np.int8)
    b = np.array([[127], [127]], np.int8)
    c = np.array([[2**31 - 100]], np.int32)
    d, _ = expected_muladd(a, b, c, S32, saturating=True)
    assert d[0, 0] == 2**31 - 1  # 32258 + 2^31 - 100 saturates
    wrapped, _ = expected_muladd(a, b, c, S32, saturating=False)
    assert int(wrapped[0, 0]) == 32258 + 2**31 - 100 - 2**32  # the low 32 bits, as signed
    low = np.array([[-2**31 + 5]], np.int32)
    d, _ = expected_muladd(-a, b, low, S32, saturating=True)
    assert d[0, 0] == -2**31


def test_signedness_follows_each_operands_component_type() -> None:
    a = np.array([[255]], np.uint8)   # zero-extended: 255
    b = np.array([[-1]], np.int8)     # sign-extended: -1
    d, _ = expected_muladd(a, b, np.array([[0]], np.int32), S32)
    assert d[0, 0] == -255
    d, _ = expected_muladd(a, b, np.array([[0]], np.uint32), U32)
    assert d[0, 0] == 2**32 - 255  # the low 32 bits of -255


def test_saturation_with_an_unsigned_result_and_a_negative_product_is_undefined() -> None:
    a, b = np.array([[1]], np.uint8), np.array([[-1]], np.int8)
    assert not saturation_defined(a, b, U32)
    with pytest.raises(ValueError, match="undefined"):
        expected_muladd(a, b, np.array([[5]], np.uint32), U32, saturating=True)
    assert saturation_defined(a, -b, U32) and saturation_defined(a, b, S32)


def test_integer_muladd_is_the_exact_sum_in_python_integers() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (8, 32)).astype(np.int8)
    b = rng.integers(0, 256, (32, 8)).astype(np.uint8)
    c = rng.integers(-2**31, 2**31, (8, 8)).astype(np.int64).astype(np.int32)
    for sat in (False, True):
        d, _ = expected_muladd(a, b, c, S32, saturating=sat)
        for i in range(8):
            for j in range(8):
                exact = sum(int(a[i, k]) * int(b[k, j]) for k in range(32)) + int(c[i, j])
                want = max(-2**31, min(2**31 - 1, exact)) if sat else (exact + 2**31) % 2**32 - 2**31
                assert int(d[i, j]) == want


@pytest.mark.parametrize("ab, acc", [(F16, F16), (F16, F32), (BF16, F32)])
def test_float_muladd_bound_holds_the_exact_rational_result_and_every_order(ab: ComponentType, acc: ComponentType) -> None:
    rng = np.random.default_rng(7)
    a = (rng.choice([-1, 1], (4, 16)) * np.exp2(rng.uniform(-3, 1, (4, 16)))).astype(ab.dtype)
    b = (rng.choice([-1, 1], (16, 4)) * np.exp2(rng.uniform(-3, 1, (16, 4)))).astype(ab.dtype)
    c = rng.uniform(-8, 8, (4, 4)).astype(acc.dtype)
    d, tol = expected_muladd(a, b, c, acc)
    for i in range(4):
        for j in range(4):
            exact = sum(Fraction(float(a[i, k])) * Fraction(float(b[k, j])) for k in range(16)) + Fraction(float(c[i, j]))
            assert abs(Fraction(float(d[i, j])) - exact) <= Fraction(float(tol[1, i, j]))
            # a device summing in K order, rounding each partial sum to the accumulator, stays inside
            s = acc.dtype.type(c[i, j])
            for k in range(16):
                s = acc.dtype.type(float(s) + float(a[i, k]) * float(b[k, j]))
            assert abs(float(s) - float(d[i, j])) <= tol[1, i, j]
    assert a.dtype == np.dtype(ml_dtypes.bfloat16) or ab is not BF16


# -- element-wise instructions by hand ----------------------------------------------------------------
def _variant(op: Op, comp: ComponentType) -> KhrVariant:
    m = _m(comp, 8, 8)
    n = op.loads + 1
    return KhrVariant(op, (m,) * op.loads, m, (Layout.RowMajor,) * n, (None,) * n)


def test_sdiv_rounds_toward_zero_udiv_and_snegate_wrap() -> None:
    x = np.full((8, 8), -7, np.int8)
    y = np.full((8, 8), 2, np.int8)
    assert (compute(_variant(Op.div, S8), [x, y], 0)[0] == -3).all()
    u = np.full((8, 8), 1, np.uint32)
    assert (compute(_variant(Op.negate, U32), [u], 0)[0] == 2**32 - 1).all()
    assert (compute(_variant(Op.scale, S8), [np.full((8, 8), 100, np.int8)], 3)[0] == 300 - 256).all()


def test_float_division_admits_exactly_the_values_within_two_and_a_half_ulp() -> None:
    x, y = np.full((8, 8), 1.0, np.float32), np.full((8, 8), 3.0, np.float32)
    out, tol = compute(_variant(Op.div, F32), [x, y], 0)
    ulp = Fraction(1, 2**25)  # the spacing of [0.25, 0.5)
    e = Fraction(float(out[0, 0]))
    for k in range(-4, 5):
        v = e + k * ulp
        admitted = e - Fraction(float(tol[0, 0, 0])) <= v <= e + Fraction(float(tol[1, 0, 0]))
        assert admitted == (abs(v - Fraction(1, 3)) <= Fraction(5, 2) * ulp), k


# -- drawn cases on every fixture ----------------------------------------------------------------------
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_drawn_data_lie_inside_every_instructions_domain(path: Path) -> None:
    profile = load_profile(path)
    options = StrategyOptions(profile=profile)
    cases = [c for op in Op if signatures(profile)[op] for c in draw_examples(FAMILY.cases(options, op=op), 6, 11)]
    assert {c.shader.op for c in cases} == {op for op in Op if signatures(profile)[op]}
    for case in cases:
        v = case.shader
        data = case.data()  # raises on an undefined result
        mats = [load_operand(a, m, mem) for a, m, mem in zip(case.accesses(), v.operands, data.initial)]
        res = v.result.component
        if v.op in FLOAT_OP and not (v.op is Op.scale and not res.is_float):
            t = element_type(res)
            op = (FLOAT_OP if res.is_float else INT_OP)[v.op]
            check_domain(op, mats, float(case.s) if res.is_float else 0.0, t, t, ieee=False)
        if v.saturating:
            assert saturation_defined(mats[0], mats[1], res)
        assert profile.unsupported_reason(v.requirements()) is None


def test_every_khr_entry_is_a_muladd_signature_with_its_saturation() -> None:
    radv = load_profile(next(p for p in PROFILES if "radv" in p.name))
    entries = khr_entries(radv)
    assert len(entries) == len(radv.coopmat_khr) == 14
    assert sum(sat for *_, sat in entries) == 4
    lvp = load_profile(next(p for p in PROFILES if "lavapipe" in p.name))
    assert {(ops[0].component, ops[2].component) for ops, _, _ in khr_entries(lvp)} == {
        (F16, F16), (F16, F32), (U8, U32), (S8, S32)}
    assert all(m.workgroup_size == 8 for ops, _, _ in khr_entries(lvp) for m in ops)


def test_stride_zero_and_overlapping_loads_are_drawn_and_shrinking_ends_at_a_packed_copy() -> None:
    lvp = load_profile(next(p for p in PROFILES if "lavapipe" in p.name))
    cases = draw_examples(FAMILY.cases(StrategyOptions(profile=lvp)), 80, 5)
    assert cases[0].shader.op is Op.copy and cases[0].offsets == (0, 0) and not cases[0].edges
    loads = [(c.strides[k], c.shader.operands[k]) for c in cases for k in range(c.shader.op.loads)]
    assert any(s == 0 for s, _ in loads)
    assert any(0 < s < m.cols for s, m in loads)  # lines of at least 16 bytes, stepping by fewer elements


def test_cases_round_trip_through_json() -> None:
    for case in draw_examples(FAMILY.cases(StrategyOptions()), 30, 2):
        assert KhrCase.from_json(case.to_json()) == case
        assert KhrVariant.from_json(case.shader.to_json()) == case.shader


def test_an_invalid_signature_is_refused_with_the_rule() -> None:
    m = _m(F16, 8, 8)
    with pytest.raises(ValueError, match="bfloat16 arithmetic"):
        _variant(Op.add, BF16)
    with pytest.raises(ValueError, match="Rows, Columns and Use"):
        KhrVariant(Op.convert, (m,), replace(m, component=F32, use=MatrixUse.A), (Layout.RowMajor,) * 2, (None,) * 2)
    with pytest.raises(ValueError, match="SaturatingAccumulation"):
        KhrVariant(Op.add, (m, m), m, (Layout.RowMajor,) * 3, (None,) * 3, saturating=True)


@pytest.mark.slow
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_drawn_shaders_compile_validate_and_pass_on_the_reference_backend(path: Path) -> None:
    profile = load_profile(path)
    backend = ReferenceBackend()
    per_op = [draw_examples(FAMILY.cases(StrategyOptions(profile=profile), op=op), 1, 9)[0]
              for op in Op if signatures(profile)[op]]
    for case in per_op:  # the reference backend runs any profile's types; check_case would gate on the H100's
        result = run_cases(backend, compile_variant(case.shader, FAMILY.name), [drawn(case, case.data())], 60).results[0]
        assert result.status is Status.Pass, (case.name(), result)


# -- hostile inputs (each probe that found something, kept) ----------------------------------------------
def test_the_device_path_is_the_oracle_on_drawn_cases() -> None:
    for case in draw_examples(FAMILY.cases(StrategyOptions()), 30, 8):
        data = case.data()
        acc = case.accesses()
        for a, m, mem in zip(acc, case.shader.operands, data.initial):
            np.testing.assert_array_equal(load_operand(a, m, mem), expected_load(a, m.rows, m.cols, mem, m.component))
        res = case.shader.result
        matrix = np.zeros((res.rows, res.cols), res.component.dtype)
        out = data.initial[-1]
        np.testing.assert_array_equal(store_result(acc[-1], matrix, out, res.component),
                                      expected_store(acc[-1], matrix, out, res.component))


def test_an_access_past_the_memory_reads_zeros_and_drops_writes_the_rest_as_inside() -> None:
    """A device's robust buffer access, which the reference's execution (a tampered stride, a mutant)
    needs: elements past the end load 0 and store nowhere; of overlapping store lines the later lands."""
    m = MatrixType(F16, Scope.Subgroup, 4, 8, MatrixUse.A, 32)
    memory = np.arange(32, dtype=np.float16)
    whole = memory.reshape(4, 8)
    short = load_operand(KhrAccess(Layout.RowMajor, 8), m, memory[:29])
    np.testing.assert_array_equal(short, np.where(np.arange(32).reshape(4, 8) < 29, whole, 0))
    np.testing.assert_array_equal(load_operand(KhrAccess(Layout.RowMajor, 8), m, memory), whole)
    stored = store_result(KhrAccess(Layout.RowMajor, 8), -whole, np.zeros(29, np.float16), F16)
    np.testing.assert_array_equal(stored, -memory[:29])
    for layout, stride in ((Layout.RowMajor, 4), (Layout.ColumnMajor, 2)):  # lines overlap: 4 or 2 apart
        n = 3 * stride + 8 if layout is Layout.RowMajor else 7 * stride + 4  # the last line's end
        expected = np.zeros(n, np.float16)
        for r in range(4):  # one element after another, row-major: a later one overwrites
            for c in range(8):
                expected[(r * stride + c) if layout is Layout.RowMajor else (c * stride + r)] = -whole[r, c]
        np.testing.assert_array_equal(store_result(KhrAccess(layout, stride), -whole, np.zeros(n, np.float16), F16),
                                      expected)


def test_tampered_parameter_words_give_a_wrong_result_not_a_crash_of_the_reference() -> None:
    case = draw_examples(FAMILY.cases(StrategyOptions(), op=Op.add), 1, 3)[0]
    data = case.data()
    words = data.params.copy()
    words[0] = 9999  # a load stride far past the operand the pack holds
    buffers = [b.copy() for b in data.initial]
    case.shader.execute(words[None, :], np.zeros((1, len(buffers)), np.int64), buffers)
    assert not np.array_equal(buffers[-1], data.expected[-1])


def test_a_case_with_an_invalid_access_is_refused_when_read() -> None:
    case = draw_examples(FAMILY.cases(StrategyOptions(), op=Op.copy), 1, 3)[0]
    bad = case.to_json()
    bad["strides"][-1] = 0  # a store's stride must be > 0
    with pytest.raises(ValueError, match="overlap"):
        KhrCase.from_json(bad)


def test_an_unusual_khr_list_draws_only_defined_cases() -> None:
    """Found by a hostile profile: a saturating int32 x int32 entry at K = 256 overflowed A x B (undefined)
    and a bfloat16 Result at K = 256 has no sum bound (K u = 1)."""
    anv = load_profile(next(p for p in PROFILES if "anv" in p.name))
    entry = lambda m, n, k, a, c, sat: {"MSize": m, "NSize": n, "KSize": k, "AType": a, "BType": a,  # noqa: E731
                                        "CType": c, "ResultType": c, "saturatingAccumulation": sat, "scope": 3}
    odd = replace(anv, coopmat_khr=[entry(16, 16, 256, 5, 5, 1), entry(8, 8, 256, 1000141000, 1000141000, 0),
                                    entry(3, 5, 7, 0, 1, 0), entry(8, 8, 32, 3, 9, 1)])
    entries = khr_entries(odd)
    assert len(entries) == 3 and all(ops[0].component is not BF16 for ops, _, _ in entries)
    for i in range(len(entries)):
        for case in draw_examples(FAMILY.cases(StrategyOptions(profile=odd), op=Op.muladd, entry=i), 4, i):
            data = case.data()
            mats = [load_operand(a, m, mem) for a, m, mem in zip(case.accesses(), case.shader.operands, data.initial)]
            assert not case.shader.saturating or saturation_defined(mats[0], mats[1], case.shader.result.component)


OP_COOPERATIVE_MATRIX_MUL_ADD_KHR = 4459
#: Cooperative Matrix Operands (SPV_KHR_cooperative_matrix): Matrix{A,B,C,Result}SignedComponentsKHR, saturation
SIGNED = {0: 0x1, 1: 0x2, 2: 0x4, 3: 0x8}
SATURATING = 0x10


@pytest.mark.parametrize("index", range(14))
def test_the_shader_sets_the_operands_the_oracle_assumes(index: int) -> None:
    """Each RADV KHR entry's MulAdd: the shader's Cooperative Matrix Operands mark exactly the signed
    integer matrices (the oracle sign-extends those) and SaturatingAccumulation where the entry lists it."""
    radv = load_profile(next(p for p in PROFILES if "radv" in p.name))
    (a, b, c), result, sat = khr_entries(radv)[index]
    v = KhrVariant(Op.muladd, (a, b, c), result, (Layout.RowMajor,) * 4, (None,) * 4, sat)
    words = to_words(compile_glsl(v.glsl(), f"{v.id}.comp"))
    muladds = [ops for _, opcode, ops in instructions(words) if opcode == OP_COOPERATIVE_MATRIX_MUL_ADD_KHR]
    assert len(muladds) == 1
    mask = muladds[0][5] if len(muladds[0]) > 5 else 0
    want = sum(bit for k, bit in SIGNED.items() if (a, b, c, result)[k].component in (S8, S32))
    assert mask == want | (SATURATING if sat else 0), (v.id, hex(mask))
