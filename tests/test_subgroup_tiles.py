"""Subgroup-scope cases in workgroups of several subgroups (docs/spec-decisions.md
"subgroup-scope-workgroups"): each subgroup loads, computes and stores its own tile, so each tile of
a case's expected buffer is the one-tile oracle of that tile's inputs (cm2-convert, cm2-elementwise;
cm2-reduce: its family's tests/test_subgroups.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, find, settings

from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import load_profile
from ctsgen.families import get_family
from ctsgen.ops.cm2_convert import expected_result
from ctsgen.ops.cm2_elementwise import Op, expected_per_element
from ctsgen.toolchain import compile_glsl, validate_spirv

LAVAPIPE = load_profile(Path(__file__).resolve().parents[1] / "ctsgen/device/profiles/mesa-lavapipe-26.2.6.txt")
FIND = settings(max_examples=300, database=None, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


def _three_subgroups(family: str):  # type: ignore[no-untyped-def]
    fam = get_family(family)
    return find(fam.cases(StrategyOptions(profile=LAVAPIPE)), lambda c: c.shader.subgroups == 3, settings=FIND)


@pytest.mark.slow
def test_cm2_convert_tiles_are_converted_on_their_own() -> None:
    case = _three_subgroups("cm2-convert")
    v, d = case.shader, case.data()
    src = d.initial[0].reshape(3, v.source.rows, v.source.cols)
    got = d.expected[1].reshape(3, v.result.rows, v.result.cols)
    for t in range(3):
        assert np.array_equal(got[t], expected_result(v.kind, src[t], v.source.component, v.result.component)[0])
    assert v.local_size_x == 3 * LAVAPIPE.subgroup_size and v.id.endswith(".subgroups3")
    assert case.locate(1, v.result.elements + 1)["subgroup"] == 1
    validate_spirv(compile_glsl(v.glsl(), v.id))


def test_cm2_elementwise_coordinates_restart_in_each_tile() -> None:
    """affine adds row * cols + col: the coordinates are the tile's own, not the workgroup's."""
    case = _three_subgroups("cm2-elementwise")
    v, d = case.shader, case.data()
    m = v.matrix
    x, op = d.initial[0].reshape(3, m.rows, m.cols), d.initial[1].reshape(3, m.rows, m.cols)
    got = d.expected[2].reshape(3, m.rows, m.cols)
    s = np.asarray(case.s, dtype=m.component.dtype)[()]
    for t in range(3):
        assert np.array_equal(got[t], expected_per_element(v.op, x[t], m.component, s=s, m=op[t], r0=case.r0,
                                                           c0=case.c0))
    zeros = np.zeros((2, 2, 3), np.int32)  # two tiles of zeros: both get the same coordinates
    both = expected_per_element(Op.affine, zeros, m.component.__class__.sint32, s=1, m=zeros)
    assert np.array_equal(both[0], both[1]) and both[1].ravel().tolist() == [0, 1, 2, 3, 4, 5]
    validate_spirv(compile_glsl(v.glsl(), v.id))
