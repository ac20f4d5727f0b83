"""The cm2-program coverage tables: operand edges, lengths by origin, layout objects, seed lines."""

from __future__ import annotations

from ctsgen.families.cm2_program.coverage import tables
from ctsgen.families.cm2_program.strategy import SEEDS


def test_a_seed_program_lands_in_its_cells() -> None:
    fa = {"variant": {"program": SEEDS["flash-attention"].to_json()}}
    pairs, lengths, objects, seeds = tables([fa])
    assert pairs.counts[("muladd", "reduce")] == 1 and pairs.counts[("reduce", "sub")] == 1
    assert pairs.counts[("muladd", "store")] == 1 and pairs.counts[("reduce", "store")] == 1
    assert lengths.counts[(11, "flash-attention")] == 1 and (10, "flash-attention") in lengths.excluded
    assert objects.counts[(5, 3)] == 1  # 3 loads + 2 stores; Constant, ClampToEdge, Repeat
    assert seeds.counts[("flash-attention", "cases")] == 1 and seeds.counts[("mlp", "cases")] == 0
    assert (1, 2) in objects.excluded and not objects.excluded_but_held()
