"""cm2-program under an expected driver deviation (docs/spec-decisions.md
"expected-deviation"): the expectation composes the deviated single-operation behaviour node by
node, on the spec case's own inputs, in fuzz, run, the pytest plugin and check_case."""

from __future__ import annotations

from pathlib import Path
import re
import json
from dataclasses import replace

import numpy as np
import pytest

from ctsgen.mutants.backend import MutantBackend
from ctsgen.cli import main
from ctsgen.mutants.deviations import expected_under, applied
from ctsgen.families.cm2_program import FAMILY
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant, Scalars, layout_variant, tolerance_on
from ctsgen.families.cm2_program.program import A16, Node, Op, Program
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.model.tensor import ClampMode
from ctsgen.runner.options import RunOptions
from ctsgen.testing import check_case

pytest_plugins = ["pytester"]

FLOOR = "setdimension-floor"
U = ClampMode.Undefined


def h100_repro(second_load: bool = False) -> ProgramCase:
    """The shortest program the H100 failed (docs/validation.md, "cm2-program and the expected
    SetDimension deviation"): a constant, a
    Dim-3 float16 A load with blockSize [1,1,2] over layoutDimension [1,2,1] and the default
    strides, and its store through a 16x16 layout. ``second_load`` adds a plain 16x16 load of
    the same type after it (its tensor region follows the first one's in the same buffer)."""
    nodes = [Node(Op.const, A16), Node(Op.load, A16, (), U, 3)]
    params: list = [Scalars(1), TensorLayoutCase(layout_variant(nodes[1]), (1, 2, 1), blockSize=(1, 1, 2))]
    if second_load:
        nodes.append(Node(Op.load, A16, (), U, 2))
        params.append(TensorLayoutCase(layout_variant(nodes[2]), (16, 16)))
        nodes.append(Node(Op.add, A16, (1, 2)))
        params.append(None)
    nodes.append(Node(Op.store, A16, (len(nodes) - 1,), U, 2))
    params.append(TensorLayoutCase(layout_variant(nodes[-1]), (16, 16)))
    return ProgramCase(ProgramVariant(Program(tuple(nodes))), tuple(params), seed=0)


def test_the_h100_repro_under_the_deviation_reads_block_row_zero_everywhere() -> None:
    """Hand-worked. The load's span is [1,2,1], so matrix element i has span coordinate
    (0, i mod 2, 0); its block coordinate on axis 1 is i mod 2. The spec's default stride of
    axis 1 is ceiling(1/2) = 1, so element i is tensor element i mod 2; the deviation's is
    floor(1/2) = 0, so every element is tensor element 0. Seed 0 gives the tensor [2, 1]: the
    spec expects 1.0 at every odd element, the deviation 2.0, as the H100 returned."""
    c = h100_repro()
    spec = c.data()
    tensor = spec.initial[0]
    assert tensor.tolist() == [2.0, 1.0]
    assert np.array_equal(spec.expected[1], np.tile(tensor, 128))
    deviated = expected_under(FAMILY, c, spec, (FLOOR,))
    assert np.array_equal(deviated.expected[1], np.full(256, 2.0, np.float16))
    assert int((deviated.expected[1] != spec.expected[1]).sum()) == 128
    assert deviated.expected[0] is None  # the input buffer stays unchecked


def test_the_deviation_changes_what_a_program_must_give_not_what_it_is_given() -> None:
    """The blocked load's region keeps the spec's extent (2 elements; the deviated strides would
    address 1), so the second load's region starts at element 2 with or without the deviation,
    and the second load still reads the tensor the spec places there."""
    c = h100_repro(second_load=True)
    spec = c.data()
    deviated = expected_under(FAMILY, c, spec, (FLOOR,))
    assert deviated.params is spec.params and deviated.initial is spec.initial
    start, sizes = c.layout_regions()
    assert start[2] == 2 and sizes[0] == 2 + 256
    second = spec.initial[0][2:].astype(np.float64)
    first = np.full(256, float(spec.initial[0][0]))
    assert np.array_equal(deviated.expected[1].astype(np.float64), first + second)


def test_check_case_on_the_mutant_backend_fails_as_the_h100_did_and_passes_with_the_deviation() -> None:
    backend = MutantBackend(FLOOR)
    c = h100_repro()
    plain = check_case(backend, c)
    assert plain.status.value == "Fail" and "128 of 256 elements of 'out_float16' differ" in plain.detail
    assert check_case(backend, c, RunOptions(expect_deviations=(FLOOR,))).status.value == "Pass"


#: Examples per fuzz run. Measured (python, Fuzzer on mutant:setdimension-floor, max_batch 16):
#: without --expect-deviation the first failure came at example 37, 52, 44, 58 on seeds 0-3 run
#: alone, and at 120 on seed 3 after this file's other tests (Hypothesis' draws shift with what
#: ran before); with it, none in 150 on seeds 0-3.
BUDGET = 250


@pytest.mark.slow
def test_fuzz_finds_the_deviation_in_programs_only_without_the_flag(tmp_path: Path, capsys) -> None:
    """``ctsgen fuzz --family cm2-program`` on the deviation's backend: a failure within the
    budget without ``--expect-deviation``, none in the same budget with it."""
    command = ["fuzz", "--backend", f"mutant:{FLOOR}", "--family", "cm2-program", "--max-examples", str(BUDGET),
               "--max-batch", "16", "--seed", "0", "--database", "none", "--isolation", "none",
               "--shrink-time", "0", "--repro-dir", str(tmp_path)]
    assert main(command) == 1
    out = capsys.readouterr().out
    found = re.search(r"first failure after (\d+) examples", out)
    assert found and int(found.group(1)) <= BUDGET and "cm2_program." in out
    assert main(command + ["--expect-deviation", FLOOR]) == 0
    out = capsys.readouterr().out
    assert f": {BUDGET} examples" in out and "no failure found" in out


@pytest.fixture(scope="module")
def program_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deviation") / "pack"
    assert main(["generate", "--family", "cm2-program", "--count", "60", "--seed", "3", "--jobs", "1",
                 "--out", str(out)]) == 0
    return out


def _statuses(results: Path) -> dict[str, str]:
    return {r["name"]: r["status"] for r in map(json.loads, results.read_text().splitlines()) if "name" in r}


@pytest.mark.slow
def test_run_over_a_program_pack_fails_only_without_the_flag(program_pack: Path, tmp_path: Path) -> None:
    """Measured: the 60-program pack (seed 3) has blocked loads with default strides; on the
    deviation's backend some of its programs fail by the spec, and none with the flag."""
    plain, flagged = tmp_path / "plain.jsonl", tmp_path / "flagged.jsonl"
    backend = ["--backend", f"mutant:{FLOOR}", "--quiet"]
    assert main(["run", str(program_pack), *backend, "--results", str(plain)]) == 1
    failing = [n for n, s in _statuses(plain).items() if s != "Pass"]
    assert failing and all(_statuses(plain)[n] == "Fail" for n in failing)
    assert main(["run", str(program_pack), *backend, "--results", str(flagged), "--expect-deviation", FLOOR]) == 0
    assert set(_statuses(flagged).values()) == {"Pass"} and len(_statuses(flagged)) == 60
    # the pack is what the device ran: the flag did not change its inputs, only the verdicts
    assert main(["run", str(program_pack), "--quiet", "--results", str(tmp_path / "ref.jsonl")]) == 0


@pytest.mark.slow
def test_the_pytest_plugin_honours_the_deviation(program_pack: Path, pytester: pytest.Pytester) -> None:
    args = ["-p", "no:cacheprovider", "--ctsgen-pack", str(program_pack), "--ctsgen-backend", f"mutant:{FLOOR}"]
    plain = pytester.runpytest(*args).parseoutcomes()
    assert plain.get("failed", 0) >= 1
    flagged = pytester.runpytest(*args, "--ctsgen-expect-deviation", FLOOR)
    flagged.assert_outcomes(passed=60)


def test_an_unknown_deviation_is_a_plugin_usage_error(program_pack: Path, pytester: pytest.Pytester) -> None:
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(program_pack),
                             "--ctsgen-expect-deviation", "no-such-mutant")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert any("no-such-mutant" in line for line in res.errlines)



def test_a_float_programs_bound_follows_the_data_the_deviation_moves() -> None:
    """On the H100 (docs/validation.md, "Programs at the current code") a float-domain program failed by one ulp
    under --expect-deviation: the deviated oracle read other data, but its tolerance kept the
    spec's bound, computed from the values the spec reads. The bound is now recomputed on the
    deviated run (FamilySpec.tolerance): it is the float domain's bound of the deviated values,
    and here it differs from the spec's (the blocked load reads element 0 everywhere)."""
    c = replace(h100_repro(second_load=True), domain="float")
    spec = c.data()
    deviated = expected_under(FAMILY, c, spec, (FLOOR,))
    with applied((FLOOR,)):
        want = tolerance_on(c, spec.params, [np.array(a, copy=True) for a in spec.initial])
    assert spec.tolerance is not None and deviated.tolerance is not None
    assert all((w is None and d is None) or np.array_equal(w, d) for w, d in zip(want, deviated.tolerance))
    assert any(s is not None and not np.array_equal(s, d) for s, d in zip(spec.tolerance, deviated.tolerance))


def test_the_h100_float_program_failure_is_within_its_deviated_bound() -> None:
    """The case the H100 failed (docs/validation.md, "Programs at the current code": seed 3800's pack,
    regenerated bit for bit here): 15 of out_float32's elements expected 0 under the spec (bound
    about 0), -29.16 and the like under the deviation; the device was one float32 ulp from the
    deviated values, well within the deviated bound the fix computes."""
    c = FAMILY.case_from_json(json.loads(
        (Path(__file__).parent / "data" / "h100-run3-case_d2b0aad93f.json").read_text()))
    assert c.domain == "float"
    spec = c.data()
    k = [b.name for b in c.variant().buffers()].index("out_float32")
    deviated = expected_under(FAMILY, c, spec, (FLOOR,))
    device = {102: -29.162763595581055, 106: 31.162763595581055, 183: -34.622623443603516}  # the run's log
    for element, got in device.items():
        assert float(spec.expected[k][element]) == 0.0 and spec.tolerance[k][element] < 1e-37
        want, bound = float(deviated.expected[k][element]), float(deviated.tolerance[k][element])
        assert abs(got - want) > spec.tolerance[k][element] and abs(got - want) <= bound
