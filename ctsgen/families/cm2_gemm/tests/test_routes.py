"""cm2-gemm's two routes: the khr route's memory layout by the spec's rule, and the same matrices loaded
through tensor layouts and through OpCooperativeMatrixLoadKHR giving the same D on the reference backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import Status
import ctsgen.device.profile as profile_module
from ctsgen.device.profile import ProfileLacksError, default_profile, load_profile
from ctsgen.families.cm2_gemm import FAMILY
from ctsgen.families.cm2_gemm.case import GemmCase, GemmVariant, Route
from ctsgen.families.cm2_gemm.strategy import route_twins
from ctsgen.fuzz.buckets import observe, run_with_mutant
from ctsgen.model.types import ComponentType as C
from ctsgen.model.types import Scope
from ctsgen.ops.khr_addressing import Layout, component_indices
from ctsgen.oracle.values import sentinel_bits, to_bits
from ctsgen.strategies.sampling import draw_examples
from ctsgen.mutants.catalogue import catalogue

H100 = default_profile()
LAVAPIPE = load_profile(Path(profile_module.__file__).with_name("profiles") / "mesa-lavapipe-26.2.6.txt")


@settings(max_examples=25, deadline=None)
@given(route_twins(StrategyOptions(profile=H100)))
def test_both_routes_compute_the_same_d_from_the_same_matrices(pair: tuple[GemmCase, GemmCase]) -> None:
    tensor, khr_case = pair
    backend = ReferenceBackend()
    outputs = []
    for case in pair:
        result, out = observe(backend, case)
        assert result.status is Status.Pass, (case.name(), result.detail)
        outputs.append(case.d_matrix(out[3]))
    assert outputs[0].tobytes() == outputs[1].tobytes()
    assert tensor.name() != khr_case.name()
    # every element of D's memory outside its lines (the padding) keeps its poison
    d = khr_case.data().initial[3]
    _, out = observe(backend, khr_case)
    lines = np.zeros(d.size, bool)
    M, N, K = khr_case.dims()
    whole, rows, cols = khr_case.shader.whole(M, N, K, khr_case.strides)[3]
    lines[component_indices(whole, rows, cols, khr_case.shader.c_type).ravel()] = True
    poison = sentinel_bits(khr_case.shader.c_type)
    assert (to_bits(out[3][~lines], khr_case.shader.c_type) == poison).all()


def test_a_column_major_matrix_with_padding_lies_by_the_spec_rule() -> None:
    """SPV_KHR_cooperative_matrix, "Cooperative Matrix Layout" (ColumnMajorKHR): elements (*, col) lie in
    order from Pointer[col * Stride]; hand-worked for A (16 x 8 int8, stride 32: 16 elements of padding)."""
    v = GemmVariant(C.sint8, C.sint32, Scope.Subgroup, 8, 16, 8, 8, Route.khr, (Layout.ColumnMajor,) * 4)
    case = GemmCase(v, 1, 1, 1, 0, 0, 1, 0, 3, strides=(32, 16, 16, 16))
    a, _, _ = case.inputs()
    memory = case.data().initial[0]
    a = a.reshape(16, 8)
    assert memory.size == 7 * 32 + 16
    poison = np.uint8(sentinel_bits(C.sint8)).view(np.int8)
    for col in range(8):
        assert memory[col * 32:col * 32 + 16].tolist() == a[:, col].tolist()
    for col in range(7):  # the padding after each line but the last
        assert (memory[col * 32 + 16:col * 32 + 32] == poison).all()


def test_strides_shorter_than_a_line_or_misaligned_are_refused() -> None:
    v = GemmVariant(C.float16, C.float32, Scope.Subgroup, 8, 16, 16, 16, Route.khr, (Layout.RowMajor,) * 4)
    GemmCase(v, 1, 1, 2, strides=(32, 16, 16, 16))
    for strides, words in (((36, 16, 16, 16), "not a multiple"), ((16, 16, 16, 8), "shorter than")):
        try:
            GemmCase(v, 1, 1, 2, strides=strides)
        except ValueError as exc:
            assert words in str(exc), exc
        else:
            raise AssertionError(f"strides {strides} accepted")


def test_the_route_follows_tensor_addressing() -> None:
    drawn = draw_examples(FAMILY.variants(StrategyOptions(profile=H100)), 40, 5)
    assert {v.route for v in drawn} == {Route.tensor, Route.khr}
    lavapipe = StrategyOptions(profile=LAVAPIPE)
    assert {v.route for v in draw_examples(FAMILY.variants(lavapipe), 20, 5)} == {Route.khr}


def test_a_tensor_route_case_keeps_its_json_and_name() -> None:
    """A tensor-route case's JSON has no route, layouts or strides: packs, repros and expectations written
    before the khr route name the same cases."""
    v = GemmVariant(C.float16, C.float32, Scope.Subgroup, 32, 16, 16, 16)
    case = GemmCase(v, 2, 1, 1, 1, 0, 2.0, 0.5, 7)
    assert case.to_json() == {"family": "cm2-gemm", "variant": {"aType": "float16", "cType": "float32",
                              "scope": "Subgroup", "workgroupSize": 32, "tile": [16, 16, 16]},
                              "tiles": [2, 1, 1], "tile": [1, 0], "alpha": 2.0, "beta": 0.5, "seed": 7}
    assert FAMILY.case_from_json(case.to_json()) == case


def test_each_khr_mutant_is_seen_by_the_memory_it_names() -> None:
    row, col = Layout.RowMajor, Layout.ColumnMajor
    cases = {  # MemoryLayouts, strides of one 16 x 16 x 16 tile -> the mutants that see it
        ((row,) * 4, (16, 16, 16, 16)): set(),
        ((col, row, row, row), (16, 16, 16, 16)): {"gemm-khr-column-major-as-row-major"},
        ((row,) * 4, (16, 32, 16, 16)): {"gemm-khr-stride-as-line-length"},
    }
    names = ("gemm-khr-column-major-as-row-major", "gemm-khr-stride-as-line-length")
    for (layouts, strides), killed in cases.items():
        v = GemmVariant(C.sint8, C.sint32, Scope.Subgroup, 8, 16, 16, 16, Route.khr, layouts)
        case = GemmCase(v, 1, 1, 1, 0, 0, 1, 0, 9, strides=strides)
        assert {n for n in names if run_with_mutant(case, catalogue()[n]).status is Status.Fail} == killed, layouts


def test_twins_are_refused_where_there_is_no_tensor_route() -> None:
    with pytest.raises(ProfileLacksError, match="cooperativeMatrixTensorAddressing is not supported"):
        draw_examples(route_twins(StrategyOptions(profile=LAVAPIPE)), 1, 0)
