"""The tensor-view coverage tables: clip classes worked by hand, every permutation of every VDim listed."""

from __future__ import annotations

import math

import pytest

from ctsgen.families.tensor_view.coverage import CLIPS, clip_class, permutation_label, tables


@pytest.mark.parametrize(("clip", "expected"), [
    (None, "not set"),
    ([0, 16, 0, 8], "exactly the matrix"),
    ([1, 15, 0, 8], "cuts the matrix"),         # row 0 skipped
    ([0, 0, 0, 8], "cuts the matrix"),          # an empty window skips everything
    ([0, 17, 0, 8], "runs past it"),            # one row span past the 16 rows, nothing skipped
    ([0, 0xFFFFFFFF, 0, 0xFFFFFFFF], "runs past it"),
    ([2, 100, 0, 8], "cuts and runs past"),
])
def test_clip_class_of_a_16x8_matrix(clip: list[int] | None, expected: str) -> None:
    assert clip_class(clip, 16, 8) == expected


def _case(perm: list[int], has: bool, clip: list[int] | None, dims: list[int] | None) -> dict:
    return {"variant": {"Dim": len(perm), "VDim": len(perm), "hasDimensions": has, "permutation": perm,
                        "matrix": {"rows": 16, "cols": 8}},
            "clip": clip, "viewDimension": dims, "viewStride": None}


def test_every_permutation_of_every_vdim_is_a_row_and_a_case_lands_in_its_own() -> None:
    perms, by_dim, clips, state = tables([_case([2, 0, 1], True, [1, 15, 0, 8], [2, 2, 2]),
                                          _case([0], False, None, None)])
    assert len(perms.rows) == sum(math.factorial(d) for d in range(1, 6)) == 153
    assert permutation_label([2, 0, 1]) == "3: p201"
    assert perms.counts[("3: p201", "cases")] == 1 and perms.counts[("1: p0", "cases")] == 1
    assert len(perms.empty_cells()) == 151
    assert clips.counts[(True, CLIPS[2])] == 1 and clips.counts[(False, CLIPS[0])] == 1
    assert state.counts[(True, "SetDimension (packed strides)")] == 1
    assert state.counts[(False, "layout span's")] == 1
    assert by_dim.counts[(3, 3)] == 1
