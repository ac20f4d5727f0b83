"""The coopvec-program coverage tables: layers by origin, operation pairs, interpretation chains, seed lines."""

from __future__ import annotations

import dataclasses

from ctsgen.families.coopvec_program.coverage import END, tables
from ctsgen.families.coopvec_program.program import Ctl, Program
from ctsgen.ops.coopvec_matrix import MatrixLayout
from ctsgen.families.coopvec_program.strategy import SEEDS


def test_a_seed_program_lands_in_its_cells() -> None:
    """int8-mlp-2-layer: load, MatMulAdd, shr, clamp, convert, MatMulAdd, convert, store; two
    s8/s8->s32 layers in a chain."""
    mlp = {"variant": {"program": SEEDS["int8-mlp-2-layer"].to_json()}}
    layers, steps, pairs, chains, seeds, domains, controlled, flows = tables([mlp])
    assert steps.counts[(2, "forward")] == 1 and sum(steps.counts.values()) == 1
    assert layers.counts[(2, "int8-mlp-2-layer")] == 1 and (1, "int8-mlp-2-layer") in layers.excluded
    assert pairs.counts[("load", "matmuladd")] == 1 and pairs.counts[("matmuladd", "shr")] == 1
    assert pairs.counts[("shr", "clamp")] == 1 and pairs.counts[("convert", "matmuladd")] == 1
    assert pairs.counts[("matmuladd", "convert")] == 1 and pairs.counts[("convert", "store")] == 1
    assert sum(pairs.counts.values()) == 7
    assert chains.counts[("s8/s8->s32", "s8/s8->s32")] == 1 and chains.counts[("s8/s8->s32", END)] == 1
    assert seeds.counts[("int8-mlp-2-layer", "cases")] == 1 and seeds.counts[("mlp-2-layer", "cases")] == 0
    assert ("load", "store") in pairs.excluded and ("max", "outer") in pairs.excluded
    assert not pairs.excluded_but_held()
    assert ("f16/f16->f16", "u8p/s8->s32") in chains.excluded
    assert domains.counts[(2, "exact")] == 1 and sum(domains.counts.values()) == 1
    assert flows.counts[("none", "full")] == 1 and not sum(controlled.counts.values())


def test_the_data_domain_table_counts_float_cases() -> None:
    mlp = {"variant": {"program": SEEDS["mlp-2-layer"].to_json()}, "domain": "float"}
    domains = tables([mlp, {"variant": mlp["variant"]}])[5]
    assert domains.counts[(2, "float")] == 1 and domains.counts[(2, "exact")] == 1


def test_the_control_flow_tables_count_controlled_nodes_and_partial_workgroups() -> None:
    """A program with an if around its first MatMulAdd and a loop around an activation, in 8 invocations."""
    p = SEEDS["mlp-2-layer"]
    nodes = list(p.nodes)
    nodes[1] = dataclasses.replace(nodes[1], ctl=Ctl.branch)
    nodes[2] = dataclasses.replace(nodes[2], ctl=Ctl.loop)
    nodes[1] = dataclasses.replace(nodes[1], layer=dataclasses.replace(nodes[1].layer,
                                                                       layout=MatrixLayout.InferencingOptimal))
    case = {"variant": {"program": Program(tuple(nodes), 8).to_json(), "local": 8}}
    controlled, flows = tables([case, {"variant": {"program": p.to_json()}}])[-2:]
    assert controlled.counts[("matmuladd", "if")] == 1 and controlled.counts[("act", "loop")] == 1
    assert flows.counts[("if+loop", "partial")] == 1 and flows.counts[("none", "full")] == 1
