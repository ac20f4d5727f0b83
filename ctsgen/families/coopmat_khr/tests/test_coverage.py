"""The coopmat-khr coverage tables: every H100 KHR entry is a row, bfloat16 arithmetic and
overlapping stores are excluded with their rules, and drawn cases land in the cells they should."""

from __future__ import annotations

from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import default_profile
from ctsgen.families import get_family
from ctsgen.families.coopmat_khr.coverage import stride_class, tables
from ctsgen.strategies.sampling import draw_examples


def test_tables_count_drawn_cases_and_exclude_what_the_spec_forbids() -> None:
    cases = draw_examples(get_family("coopmat-khr").cases(StrategyOptions()), 40, 4)
    ops, strides, pointees, entries = tables([c.to_json() for c in cases])
    assert sum(ops.counts.values()) == len(cases)
    assert ("add", "bfloat16") in ops.excluded and not ops.excluded_but_held()
    assert ("overlapping", "store RowMajor") in strides.excluded and not strides.excluded_but_held()
    assert sum(strides.counts.values()) == sum(len(c.shader.matrices) for c in cases)
    assert sum(pointees.counts.values()) == sum(strides.counts.values())
    assert len(entries.rows) == len(default_profile().coopmat_khr)  # every H100 entry is a row
    muladds = [c for c in cases if c.shader.op.value == "muladd"]
    assert sum(entries.counts.values()) == len(muladds)
    for c in cases:
        for k in range(len(c.shader.matrices)):
            assert (stride_class(c, k) == "0") == (c.strides[k] == 0)
