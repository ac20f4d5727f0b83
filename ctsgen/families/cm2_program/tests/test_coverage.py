"""The cm2-program coverage tables: operand edges, lengths by origin, layout objects, seed lines."""

from __future__ import annotations

from ctsgen.families.cm2_program.coverage import tables
from ctsgen.families.cm2_program.program import ACC32, Node, Op, Program, in_subgroup
from ctsgen.families.cm2_program.strategy import SEEDS, khr_route
from ctsgen.model.tensor import ClampMode


def test_a_seed_program_lands_in_its_cells() -> None:
    fa = {"variant": {"program": SEEDS["flash-attention"].to_json()}}
    pairs, lengths, objects, seeds, kinds, decodes, domains = tables([fa])
    assert pairs.counts[("muladd", "reduce")] == 1 and pairs.counts[("reduce", "sub")] == 1
    assert pairs.counts[("muladd", "store")] == 1 and pairs.counts[("reduce", "store")] == 1
    assert lengths.counts[(11, "flash-attention")] == 1 and (10, "flash-attention") in lengths.excluded
    assert objects.counts[(5, 3)] == 1  # 3 loads + 2 stores; Constant, ClampToEdge, Repeat
    assert seeds.counts[("flash-attention", "cases")] == 1 and seeds.counts[("mlp", "cases")] == 0
    assert (1, 2) in objects.excluded and not objects.excluded_but_held()


def test_a_seed_programs_khr_twin_at_another_subgroup_size_lands_in_its_own_cells() -> None:
    mlp = {"variant": {"program": in_subgroup(khr_route(SEEDS["mlp"]), 8).to_json()}}
    _, lengths, _, seeds, kinds, _, _ = tables([mlp])
    assert seeds.counts[("mlp khr", "cases")] == 1 and seeds.counts[("mlp", "cases")] == 0
    assert lengths.counts[(SEEDS["mlp"].ops, "mlp khr")] == 1
    assert kinds.counts[("loadkhr", 4)] == 1 and kinds.counts[("storekhr", 2)] == 1


def test_view_and_decode_loads_show_in_the_pair_kind_and_format_tables() -> None:
    """Two view loads, a decode load and a store in one shader: four tensor objects, the view
    loads' two in one cell, the decode load's format and Dim in its own table."""
    C = ClampMode
    p = Program((Node(Op.loadview, ACC32, (), C.Constant, 2, hasDimensions=False, permutation=(1, 0)),
                 Node(Op.loadview, ACC32, (), C.Repeat, 3, hasDimensions=True, permutation=(0, 2, 1)),
                 Node(Op.loaddecode, ACC32, (), C.ClampToEdge, 2, decoder="q4_0", blockShape=(2, 16)),
                 Node(Op.add, ACC32, (0, 1)), Node(Op.sub, ACC32, (3, 2)), Node(Op.store, ACC32, (4,), C.Constant, 2)))
    pairs, lengths, objects, seeds, kinds, decodes, domains = tables([{"variant": {"program": p.to_json()}}])
    assert pairs.counts[("loadview", "add")] == 2 and pairs.counts[("loaddecode", "sub")] == 1
    assert "loadview" not in pairs.cols and "loaddecode" not in pairs.cols  # sources consume nothing
    assert objects.counts[(4, 3)] == 1  # Constant, Repeat, ClampToEdge
    assert kinds.counts[("loadview", 2)] == 1 and kinds.counts[("loaddecode", 1)] == 1
    assert kinds.counts[("store", 1)] == 1 and kinds.counts[("load", 1)] == 0
    assert decodes.counts[("q4_0", 2)] == 1 and sum(decodes.counts.values()) == 1


def test_a_decode_load_through_a_view_is_a_source_of_its_own_kind() -> None:
    """It produces (a row of the pair table, no column), has its own tensor-object row, and its
    block format counts among the decode loads."""
    C = ClampMode
    p = Program((Node(Op.loaddecodeview, ACC32, (), C.Repeat, 2, hasDimensions=True, permutation=(1, 0),
                      decoder="q6_k", blockShape=(1, 256)),
                 Node(Op.storeview, ACC32, (0,), C.Constant, 2, hasDimensions=False, permutation=(1, 0))))
    pairs, lengths, objects, seeds, kinds, decodes, domains = tables([{"variant": {"program": p.to_json()}}])
    assert pairs.counts[("loaddecodeview", "storeview")] == 1 and "loaddecodeview" not in pairs.cols
    assert kinds.counts[("loaddecodeview", 1)] == 1 and kinds.counts[("storeview", 1)] == 1
    assert decodes.counts[("q6_k", 2)] == 1


def test_the_data_domain_table_counts_float_cases_by_length() -> None:
    mlp = SEEDS["mlp"].to_json()
    domains = tables([{"variant": {"program": mlp}}, {"variant": {"program": mlp}, "domain": "float"}])[-1]
    assert domains.counts[(SEEDS["mlp"].ops, "exact")] == 1 and domains.counts[(SEEDS["mlp"].ops, "float")] == 1
