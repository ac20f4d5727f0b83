"""The coopvec coverage tables: size ranges at their edges, the H100 combinations, the spec's exclusions."""

from __future__ import annotations

import pytest

from ctsgen.families.coopvec.coverage import size_range, tables


@pytest.mark.parametrize(("n", "expected"), [(1, "1"), (2, "2-4"), (4, "2-4"), (5, "5-16"), (16, "5-16"),
                                             (17, "17-64"), (128, "65-128"), (129, "129-512"), (512, "129-512"),
                                             (513, ">512")])
def test_size_range(n: int, expected: str) -> None:
    assert size_range(n) == expected


def _variant(op: str, layout: int, transpose: bool, m: int, k: int, types: tuple[str, ...]) -> dict:
    names = ("inputType", "inputInterpretation", "matrixInterpretation", "biasInterpretation", "resultType")
    return {"variant": {"op": op, "layout": layout, "transpose": transpose, "M": m, "K": k, **dict(zip(names, types))}}


def test_cells_of_a_matmul_and_a_reduce_sum_and_the_excluded_ones() -> None:
    f16 = ("float16",) * 5
    combos, ops, transpose, sizes, values = tables([_variant("matmuladd", 2, True, 3, 40, f16),
                                            _variant("reduce_sum", 0, False, 1, 7, f16)])
    label = "float16 as float16, matrix float16, bias float16 -> float16"
    assert len(combos.rows) == 16 and combos.counts[(label, "InferencingOptimal")] == 1
    assert sum(combos.counts.values()) == 1  # the ReduceSum case has no matrix
    assert len(combos.excluded) == 4  # E4M3 and E5M2 matrices: RowMajor and ColumnMajor
    assert ops.counts[("MatMulAdd", "InferencingOptimal")] == 1
    assert ops.counts[("ReduceSumAccumulate", "no matrix")] == 1
    assert transpose.counts[(True, "InferencingOptimal")] == 1 and (True, "RowMajor") in transpose.excluded
    assert sizes.counts[("17-64", "2-4")] == 1 and sizes.counts[("5-16", "no M (ReduceSum)")] == 1
    assert values.counts[("random", 32)] == 2  # neither names its data kind nor its invocations: the defaults
