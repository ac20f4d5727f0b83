"""cm2-program's debug re-run: a failing program's REPORT.md names the first node
whose value differs, measured by re-running the program with every value also stored to a debug
buffer. Each planted composition mutant breaks one known node of a hand-built program whose later
nodes depend on it, so "first" is tested, not just "some"."""

from __future__ import annotations

from pathlib import Path
import re

import numpy as np
import pytest
from hypothesis import given, settings

from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.cli import main
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_program import FAMILY
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant, Scalars, layout_variant
from ctsgen.families.cm2_program.program import A16, ACC16, ACC32, B16, SIDE, Node, Op, Program
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import MatrixType
from ctsgen.repro import export_case
from ctsgen.runner.debug_run import debug_rerun
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv
from ctsgen.families.cm2_program.tests.test_deviation import h100_repro

U = ClampMode.Undefined


def _case(nodes: list[Node], scalars: dict[int, Scalars], seed: int = 0) -> ProgramCase:
    """A program over 16x16 row-major layouts: every load and store gets one, other nodes the
    given scalars (or none)."""
    params = []
    for i, n in enumerate(nodes):
        if n.op in (Op.load, Op.store):
            params.append(TensorLayoutCase(layout_variant(n), (SIDE, SIDE)))
        else:
            params.append(scalars.get(i))
    return ProgramCase(ProgramVariant(Program(tuple(nodes))), tuple(params), seed)


def L(t: MatrixType) -> Node:
    """A load of type ``t`` through tensorLayoutNV<2, Undefined>."""
    return Node(Op.load, t, (), U, 2)


def S(t: MatrixType, v: int) -> Node:
    """A store of value ``v`` (of type ``t``) through tensorLayoutNV<2, Undefined>."""
    return Node(Op.store, t, (v,), U, 2)


#: mutant -> (program, its scalars, the node the mutant breaks). Every broken node has consumers
#: after it, which then differ too.
PLANTED = {
    # v3 = A x B + C (float16 accumulator), v4 its transpose: the mutant relabels without moving
    "program-transpose-after-muladd-skipped": (
        [L(A16), L(B16), Node(Op.const, ACC16), Node(Op.muladd, ACC16, (0, 1, 2)), Node(Op.transpose, B16, (3,)),
         Node(Op.scale, B16, (4,)), S(B16, 5)], {2: Scalars(1), 5: Scalars(2)}, 4),
    # v3 = v0 + v2 while v1 (same type, defined between) is live: the mutant's add reads v1 for v0
    "program-register-reused-too-early": (
        [L(ACC32), Node(Op.const, ACC32), Node(Op.generate, ACC32), Node(Op.add, ACC32, (0, 2)),
         Node(Op.scale, ACC32, (3,)), S(ACC32, 4), S(ACC32, 1)],
        {1: Scalars(2), 2: Scalars(-1, 3, 5), 4: Scalars(-1)}, 3),
    # the store of a per-element result writes the per-element op's source: every value matches
    "program-store-after-perelement-writes-source": (
        [L(ACC16), Node(Op.perelement, ACC16, (0,), fn="select"), Node(Op.scale, ACC16, (1,)), S(ACC16, 1),
         S(ACC16, 2)], {1: Scalars(2, 0, 7), 2: Scalars(-1)}, 3),
    # v4 = A x B + v3 where v3 = A x B + C: the mutant's second MulAdd accumulates onto zero
    "program-muladd-chain-drops-c": (
        [L(A16), L(B16), Node(Op.const, ACC32), Node(Op.muladd, ACC32, (0, 1, 2)),
         Node(Op.muladd, ACC32, (0, 1, 3)), Node(Op.sub, ACC32, (4, 3)), S(ACC32, 5)], {2: Scalars(1)}, 4),
    # a Row max of a MulAdd result: the mutant reduces the MulAdd's C (a constant)
    "program-reduce-after-muladd-reads-c": (
        [L(A16), L(B16), Node(Op.const, ACC32), Node(Op.muladd, ACC32, (0, 1, 2)),
         Node(Op.reduce, ACC32, (3,), mode=ReduceMode.Row, combine=Combine.max), Node(Op.convert, ACC16, (4,)),
         S(ACC16, 5)], {2: Scalars(1)}, 4),
    # a conversion of a sum reduction: the mutant converts the pre-reduction value
    "program-convert-after-reduce-reads-source": (
        [L(ACC32), Node(Op.reduce, ACC32, (0,), mode=ReduceMode.Column, combine=Combine.sum),
         Node(Op.convert, ACC16, (1,)), Node(Op.scale, ACC16, (2,)), S(ACC16, 3)], {3: Scalars(2)}, 2),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_the_first_differing_node_is_the_one_the_mutant_breaks(name: str) -> None:
    nodes, scalars, broken = PLANTED[name]
    c = _case(nodes, scalars)
    backend = MutantBackend(name)
    assert check_case(backend, c).status.value == "Fail"  # the planted fault shows in the outputs
    run = debug_rerun(FAMILY, c, backend)
    assert run is not None and run.first is not None
    assert run.first.index == broken and run.first.label == f"#{broken} {nodes[broken].op.value}"
    assert run.line().startswith(f"first differing node: #{broken} {nodes[broken].op.value} (")
    assert 0 < run.first.bad <= run.first.total and len(run.first.examples) == min(3, run.first.bad)
    validate_spirv(compile_glsl(run.glsl, f"{name}.debug"))


def test_the_reference_backend_matches_every_node() -> None:
    nodes, scalars, _ = PLANTED["program-transpose-after-muladd-skipped"]
    run = debug_rerun(FAMILY, _case(nodes, scalars), ReferenceBackend())
    assert run.first is None and "did not reproduce" in run.line()


def test_a_difference_is_quoted_with_its_position_and_values() -> None:
    """The transpose mutant leaves v4 = v3 where the oracle has v3 transposed: the first quoted
    element is the first off-diagonal one with v3[0, k] != v3[k, 0]."""
    nodes, scalars, _ = PLANTED["program-transpose-after-muladd-skipped"]
    c = _case(nodes, scalars)
    v3 = c.values()[3]
    run = debug_rerun(FAMILY, c, MutantBackend("program-transpose-after-muladd-skipped"))
    differ = np.argwhere(v3.T != v3)
    r, k = (int(x) for x in differ[0])
    assert run.first.bad == len(differ)
    assert run.first.examples[0] == f"({r}, {k}): expected {float(v3.T[r, k])!r}, got {float(v3[r, k])!r}"


def test_under_an_expected_deviation_the_intermediates_follow_it() -> None:
    """The H100's SetDimension deviation on the mutant that models it: with the deviation expected
    no node differs; without, the first is the blocked load (#1)."""
    c = h100_repro()
    backend = MutantBackend("setdimension-floor")
    plain = debug_rerun(FAMILY, c, backend)
    assert plain.first.index == 1 and plain.first.bad == 128
    assert debug_rerun(FAMILY, c, backend, ("setdimension-floor",)).first is None


@settings(max_examples=15, deadline=None)
@given(FAMILY.variants(StrategyOptions()))
def test_sampled_debug_variants_compile_and_validate(v: ProgramVariant) -> None:
    d = ProgramVariant(v.program, debug=True)
    assert ProgramVariant.from_json(d.to_json()) == d and d.id == v.id + ".debug"
    validate_spirv(compile_glsl(d.glsl(), d.id))


@pytest.mark.slow
def test_a_failing_programs_report_names_the_first_differing_node(tmp_path: Path) -> None:
    name = "program-muladd-chain-drops-c"
    nodes, scalars, broken = PLANTED[name]
    c = _case(nodes, scalars)
    backend = MutantBackend(name)
    result = check_case(backend, c)
    out = export_case(c, tmp_path / "repro", failure=result.to_json(), backend=f"mutant:{name}",
                      debug_backend=backend)
    report = (out / "REPORT.md").read_text()
    assert "#4   v4 = muladd(v0, v1, v3)" in report  # the program, one node a line
    assert "**first differing node: #4 muladd (" in report
    assert "coopMatMulAdd(v0, v1, v3)" in report  # the repro's GLSL
    validate_spirv(compile_glsl((out / "debug.comp").read_text(), "debug"))
    results = tmp_path / "r.jsonl"
    assert main(["run", str(out), "--backend", f"mutant:{name}", "--quiet", "--results", str(results)]) == 1
    # the same from the pack and its results file: ctsgen repro --debug-rerun
    again = tmp_path / "again"
    assert main(["repro", str(out), c.name(), "--out", str(again), "--results", str(results),
                 "--backend", f"mutant:{name}", "--debug-rerun"]) == 0
    assert "**first differing node: #4 muladd (" in (again / "REPORT.md").read_text()


@pytest.mark.slow
def test_fuzz_writes_the_first_differing_node_into_the_repro(tmp_path: Path) -> None:
    """``ctsgen fuzz`` on a composition mutant: the shrunk program's REPORT.md names a store fed
    by a per-element op (the node that mutant breaks)."""
    name = "program-store-after-perelement-writes-source"
    assert main(["fuzz", "--backend", f"mutant:{name}", "--family", "cm2-program", "--max-examples", "400",
                 "--max-batch", "16", "--database", "none", "--isolation", "none", "--shrink-time", "20",
                 "--repro-dir", str(tmp_path)]) == 1
    (report,) = tmp_path.glob("*/REPORT.md")
    text = report.read_text()
    found = re.search(r"first differing node: #(\d+) store \(", text)
    assert found, text
    k = int(found.group(1))
    listing = re.search(rf"#{k} +store\(v(\d+)\)", text)
    assert listing and re.search(rf"#{listing.group(1)} +v{listing.group(1)} = perelement\(", text)
