"""cm2-reduce in workgroups of several subgroups: each subgroup reduces its own tile
(docs/spec-decisions.md "subgroup-scope-workgroups")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, find, settings

from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import load_profile
from ctsgen.families.cm2_reduce import FAMILY
from ctsgen.families.cm2_reduce.case import ReduceCase, ReduceVariant
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2 import MAX_SUBGROUPS, in_subgroups
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, expected_reduce
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import compile_glsl, validate_spirv

S32 = ComponentType.sint32
LAVAPIPE = load_profile(Path(__file__).resolve().parents[4] / "ctsgen/device/profiles/mesa-lavapipe-26.2.6.txt")
ONE = MatrixType(S32, Scope.Subgroup, 16, 24, MatrixUse.Accumulator, 8)  # one lavapipe subgroup's type
FIND = settings(max_examples=300, database=None, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


def _variant(subgroups: int, mode: ReduceMode = ReduceMode.Row) -> ReduceVariant:
    m = in_subgroups(ONE, subgroups)
    return ReduceVariant(mode, Combine.sum, m, m, subgroups)


def test_each_subgroups_tile_is_reduced_on_its_own() -> None:
    """Tile t holds the value t + 1 everywhere: a Row sum gives 24 (t + 1) in tile t alone."""
    case = ReduceCase(_variant(3), seed=0)
    tiles = np.repeat(np.arange(1, 4, dtype=np.int32), 16 * 24).reshape(3, 16, 24)
    out, _ = expected_reduce(tiles, ReduceMode.Row, Combine.sum, S32, 16, 24)
    assert [set(out[t].ravel().tolist()) for t in range(3)] == [{24}, {48}, {72}]
    d = case.data()  # the case's expected buffer is its tiles' reductions, one after another
    src = d.initial[0].reshape(3, 16, 24)
    for t, mode in enumerate(ReduceMode):
        if mode is ReduceMode.Block2x2:
            continue
        one = expected_reduce(src[t], mode, Combine.sum, S32, 16, 24)[0]
        assert np.array_equal(expected_reduce(src, mode, Combine.sum, S32, 16, 24)[0][t], one)
    assert np.array_equal(d.expected[1].reshape(3, 16, 24)[1], expected_reduce(src[1], ReduceMode.Row, Combine.sum,
                                                                               S32, 16, 24)[0])


def test_a_workgroup_of_several_subgroups_is_a_variant_of_its_own() -> None:
    one, four = _variant(1), _variant(4)
    assert one.id == "cm2_reduce.row.sum.sint32.accumulator_16x24.subgroup.to_16x24"  # the ids of before
    assert four.id == one.id + ".subgroups4" and four.local_size_x == 32
    assert "subgroups" not in one.to_json() and ReduceVariant.from_json(four.to_json()) == four
    glsl = four.glsl()
    assert "tile < 4u; tile += gl_NumSubgroups" in glsl and "(P(1u) + tile * 384u)" in glsl
    assert "gl_SubgroupID" not in one.glsl()
    validate_spirv(compile_glsl(glsl, four.id))


def test_a_workgroup_scope_variant_has_one_subgroup_tile() -> None:
    wg = MatrixType(S32, Scope.Workgroup, 16, 16, MatrixUse.Accumulator, 128)
    with pytest.raises(ValueError, match="Workgroup-scope"):
        ReduceVariant(ReduceMode.Row, Combine.sum, wg, wg, 2)
    with pytest.raises(ValueError, match="at least one subgroup"):
        ReduceVariant(ReduceMode.Row, Combine.sum, ONE, ONE, 0)


@pytest.mark.slow
def test_lavapipe_draws_workgroups_of_one_to_max_subgroups_and_shrinks_to_one() -> None:
    variants = FAMILY.variants(StrategyOptions(profile=LAVAPIPE))
    drawn = {v.subgroups for v in draw_examples(variants, 80, 5)}
    assert drawn == set(range(1, MAX_SUBGROUPS + 1)), drawn
    for v in draw_examples(variants, 20, 6):
        assert LAVAPIPE.unsupported_reason(v.requirements()) is None, v.id
        assert v.local_size_x == v.subgroups * LAVAPIPE.subgroup_size
    several = find(variants, lambda v: v.subgroups > 1, settings=FIND)
    assert several.subgroups == 2 and several.mode is ReduceMode.Row


def test_the_lavapipe_profile_allows_subgroup_types_in_whole_subgroups_only() -> None:
    """workgroupInvocations is 0 in lavapipe's Subgroup-scope entries: the workgroup is any number of
    whole subgroups (the shipped repro runs 4 subgroups of 8), within maxComputeWorkGroupInvocations."""
    assert LAVAPIPE.supports_matrix(in_subgroups(ONE, 4)) is None
    assert "not whole subgroups of 8" in LAVAPIPE.supports_matrix(MatrixType(S32, Scope.Subgroup, 16, 24,
                                                                             MatrixUse.Accumulator, 12))
    assert "maxComputeWorkGroupInvocations" in LAVAPIPE.supports_matrix(in_subgroups(ONE, 256))
    wrong = MatrixType(S32, Scope.Subgroup, 16, 20, MatrixUse.Accumulator, 32)  # 20 is no multiple of 8
    assert "no cooperative-matrix property entry" in LAVAPIPE.supports_matrix(wrong)


@pytest.mark.parametrize("value", ["2", True, 0, -1, 1.0, None])
def test_a_pack_whose_subgroups_is_no_whole_number_of_one_or_more_is_refused(value: object) -> None:
    """Hostile packs: a string, a bool (int(True) is 1), zero, a float: refused naming the field, not
    read as a number (a pack reader turns the ValueError into one line)."""
    o = _variant(4).to_json()
    o["subgroups"] = value
    with pytest.raises(ValueError, match="subgroups is"):
        ReduceVariant.from_json(o)
    o["subgroups"] = 4
    assert ReduceVariant.from_json(o) == _variant(4)
