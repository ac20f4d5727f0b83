"""fuzz names the documented deviation that explains a failure, as a campaign's bucket does
(ctsgen.fuzz.buckets.deviation_explaining), and its replay lines go through the launcher ctsgen runs under."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.backends.supervise import WORKER_LAUNCHER_ENV
from ctsgen.cli import main
from ctsgen.families.cm2_reduce.case import ReduceCase, ReduceVariant
from ctsgen.fuzz.buckets import deviation_explaining, documented_deviations, observe
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.mutants.backend import MutantBackend
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.repro import replay_command

M16 = MatrixType(ComponentType.sint32, Scope.Subgroup, 16, 16, MatrixUse.Accumulator)


def _case(mode: ReduceMode) -> ReduceCase:
    return ReduceCase(ReduceVariant(mode, Combine.sum, M16, M16), seed=1)


def test_the_documented_deviations_are_the_drivers() -> None:
    assert {m.name for m in documented_deviations()} == {"lavapipe-reduce-tiles", "setdimension-floor"}


def test_a_failure_the_lavapipe_rule_gives_is_named_by_it() -> None:
    device = MutantBackend("lavapipe-reduce-tiles")  # what lavapipe computes
    case = _case(ReduceMode.Row)
    result = observe(device, case)[0]
    assert result.status.value == "Fail"
    assert deviation_explaining(device, case, result).name == "lavapipe-reduce-tiles"


def test_a_failure_no_documented_deviation_explains_is_named_by_none() -> None:
    """A Column reduction read column-major is a bug of its own (another mutant), not lavapipe's rule;
    a pass is explained by nothing."""
    device = MutantBackend("reduce-column-reads-transposed")
    case = _case(ReduceMode.Column)
    result = observe(device, case)[0]
    assert result.status.value == "Fail" and deviation_explaining(device, case, result) is None
    passing = observe(ReferenceBackend(), case)[0]
    assert deviation_explaining(ReferenceBackend(), case, passing) is None


def test_a_failure_that_passes_when_run_again_alone_is_explained_by_none() -> None:
    """A case that failed in its batch and passes alone (lavapipe, a coopmat-kernel case with no reduction,
    docs/validation.md "Every route on lavapipe") was named "explained by lavapipe-reduce-tiles": every
    deviation whose oracle leaves the case unchanged passed the correct outputs."""
    case = _case(ReduceMode.Column)
    failed_in_its_batch = observe(MutantBackend("reduce-column-reads-transposed"), case)[0]
    assert failed_in_its_batch.status.value == "Fail"
    assert deviation_explaining(ReferenceBackend(), case, failed_in_its_batch) is None


@pytest.mark.slow
def test_fuzz_prints_the_deviation_beside_the_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--backend", "mutant:lavapipe-reduce-tiles", "--family", "cm2-reduce", "--max-examples",
                 "60", "--database", "none", "--seed", "1", "--shrink-time", "3", "--isolation", "none",
                 "--repro-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "    explained by the documented deviation lavapipe-reduce-tiles (" in out
    assert "--expect-deviation lavapipe-reduce-tiles judges by it" in out


def test_replay_lines_go_through_the_launcher_ctsgen_runs_under(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKER_LAUNCHER_ENV, raising=False)
    assert replay_command(Path("r"), "vulkan") == "ctsgen run r --backend vulkan"
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, "/opt/lvp/run")  # what lavapipe's PREFIX/run exports
    assert replay_command(Path("r"), "vulkan", ["lavapipe-reduce-tiles"]) == \
        "/opt/lvp/run python -m ctsgen run r --backend vulkan --expect-deviation lavapipe-reduce-tiles"
    monkeypatch.setenv(WORKER_LAUNCHER_ENV, "  ")  # blank: no launcher
    assert replay_command(Path("r"), "vulkan").startswith("ctsgen run ")
