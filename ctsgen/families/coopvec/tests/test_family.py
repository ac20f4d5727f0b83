"""Strategies restricted to the H100 profile; every sampled variant compiles and validates; reference passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

import ctsgen.device
from ctsgen.device.profile import parse_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.families.coopvec import FAMILY
from ctsgen.families.coopvec.strategy import strata
from ctsgen.ops.coopvec_matrix import combinations, LOCAL
from ctsgen.model.types import CoopVecType, coopvec_combination_features
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import compile_glsl, validate_spirv
from ctsgen.families.coopvec.variant import CoopVecVariant
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.shader import ShaderVariant
from ctsgen.execute.batch import build_batch, case_outputs
from ctsgen.execute.judge import judge_buffer
from ctsgen.families.coopvec.case import CoopVecCase

#: The H100 read-out ctsgen ships (the embedded default profile).
PROFILE = Path(ctsgen.device.__file__).with_name("profiles") / "nvidia-h100-driver580.txt"


def _h100():
    return parse_profile(PROFILE.read_text(), str(PROFILE))


def test_h100_profile_gives_16_combinations_and_fp8_only_optimal() -> None:
    combos = combinations(_h100())
    assert len(combos) == 16
    cells = strata()
    fp8 = [c for c in cells if c.get("combo") in (14, 15)]
    assert {c["layout"] for c in fp8} == {2, 3}


@settings(max_examples=40)
@given(FAMILY.cases(StrategyOptions(profile=_h100())))
def test_drawn_variants_are_advertised_by_the_profile(case) -> None:
    prof = _h100()
    feats = coopvec_combination_features(prof.coopvec_combinations)
    prof.features.update(feats)
    assert prof.unsupported_reason(case.variant().requirements()) is None


def test_unadvertised_combination_is_not_supported() -> None:
    T = CoopVecType
    v = CoopVecVariant("matmul", T.float32, T.float32, T.float32, T.float32, T.float32, 0, False, 4, 4)
    prof = _h100()
    prof.features.update(coopvec_combination_features(prof.coopvec_combinations))
    assert "coopvecCombination" in (prof.unsupported_reason(v.requirements()) or "")


def test_sampled_variants_compile_validate_and_pass_on_the_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                    ) -> None:
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(tmp_path))  # a private SPIR-V cache
    opts = StrategyOptions(profile=_h100())
    cases = draw_examples(FAMILY.cases(opts), 30, 11)
    for c in cases:
        v = c.variant()
        spirv = compile_glsl(v.glsl())
        validate_spirv(spirv)
        sv = ShaderVariant(v.id, spirv, v.local_size_x, v.buffers(), v.requirements(), "coopvec", v.to_json())
        d = c.data()
        batch = build_batch(sv, [d.params], [d.initial])
        out = case_outputs(batch, ReferenceBackend().run(batch.dispatch, 10), 0)
        for b, want in enumerate(d.expected):
            if want is not None:
                j = judge_buffer(out[b], want, c.compare_rule().to_json(), d.tolerance[b] if d.tolerance else None)
                assert not j.bad.size, c.name()


@pytest.mark.parametrize("invocations", [1, 8, 64])
def test_workgroup_sizes_give_one_product_per_invocation(invocations: int) -> None:
    """The spec puts no condition on the workgroup size: every invocation's own input, its own result row."""
    T = CoopVecType
    v = CoopVecVariant("matmuladd", T.float16, T.float16, T.float16, T.float16, T.float16, 0, False, 3, 8, invocations)
    assert v.local_size_x == invocations and v.id.endswith(f".wg{invocations}")
    assert f"local_size_x = {invocations}" in v.glsl()
    d = CoopVecCase(v, 0, 16, 16, seed=5, values="grid").data()
    x = v.input_vectors(d.initial[0], 0)
    assert x.shape == (invocations, 8) and d.expected[3].size == invocations * v.out_stride // 2
    assert CoopVecVariant.from_json(v.to_json()) == v


def test_variants_written_before_workgroup_sizes_load_as_one_full_subgroup() -> None:
    T = CoopVecType
    o = CoopVecVariant("matmul", T.float16, T.float16, T.float16, T.float16, T.float16, 0, False, 4, 4).to_json()
    del o["invocations"]
    assert CoopVecVariant.from_json(o).invocations == LOCAL


@settings(max_examples=60)
@given(FAMILY.cases(StrategyOptions()))
def test_ordinary_cases_keep_row_and_column_major_matmuls_in_full_subgroups(case) -> None:
    """Partial subgroups with RowMajor / ColumnMajor matrices hang the H100: opt-in only."""
    assert case.hazards() == []


@settings(max_examples=30)
@given(FAMILY.hazardous(StrategyOptions(), []))
def test_hazardous_cases_are_row_or_column_major_matmuls_in_partial_subgroups(case) -> None:
    v = case.variant()
    assert case.hazards() == ["partial-subgroup-row-column-major"]
    assert v.layout in (0, 1) and v.invocations < 32 and v.op in ("matmul", "matmuladd")


@pytest.mark.parametrize("result, values", [(CoopVecType.float16, "grid"), (CoopVecType.float16, "random"),
                                            (CoopVecType.float32, "random")])
def test_a_store_past_the_vector_end_fails(result: CoopVecType, values: str) -> None:
    """M = 3 float16 (float32) results take 6 (12) of each invocation's 16 output bytes; the other 5
    (1) components are padding the store must not write. The output starts poisoned with the
    sentinel and the padding is compared bit for bit: zeros written there fail. Failed before: the
    output started as +0.0 compared by value, so a store of zeros past the end passed."""
    T = CoopVecType
    v = CoopVecVariant("matmuladd", T.float16, T.float16, T.float16, T.float16, result, 0, False, 3, 3)
    c = CoopVecCase(v, 0, 16, 16, seed=5, values=values)
    d = c.data()
    want, rule = d.expected[3], c.compare_rule().to_json()
    step = v.out_stride // want.dtype.itemsize
    assert step - 3 == {T.float16: 5, T.float32: 1}[result]
    assert judge_buffer(want.copy(), want, rule, d.tolerance[3]).bad.size == 0
    got = want.copy()
    got.reshape(-1, step)[:, 3:] = 0.0  # a store writing zeros past the end
    bad = judge_buffer(got, want, rule, d.tolerance[3]).bad
    assert bad.size == v.invocations * (step - 3) and (bad % step >= 3).all()
