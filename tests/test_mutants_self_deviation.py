"""A mutant is a model of its own deviation (issue 45, item 1).

Buckets and ``--expect-deviation`` both rest on this: a pack run on ``mutant:M`` passes every case
under ``--expect-deviation M``, batched (each variant's cases in one dispatch) and alone (one case a
dispatch). A mutant that disagrees with itself splits one bug into several buckets, or reports a
known deviation as new. The sweep calls the library as ``ctsgen generate`` and ``ctsgen run`` do
(the same draw, the same per-variant gate, the same oracle under the deviation, the same judge), in
this process; the two reported command lines stay as subprocess tests.
"""

from __future__ import annotations

import functools

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from ctsgen.core.family import Case, StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.execute.run import drawn_cases, run_cases
from ctsgen.families import get_family
from ctsgen.mutants.backend import MutantBackend
from ctsgen.mutants.catalogue import catalogue
from ctsgen.mutants.deviations import expected_under, reaching
from ctsgen.pack.generate import draw_cases
from ctsgen.toolchain.variants import compile_variant

#: The seeds of the two reported tracebacks (issue 45), and cases a pack: every mutant of the
#: catalogue on both takes about 90 s of CPU (docs/validation.md, "Mutants agree with their own
#: deviations").
SEEDS = (26894, 62682)
COUNT = 20


@functools.lru_cache(maxsize=None)
def _drawn(family_name: str, count: int, seed: int) -> tuple[Case, ...]:
    """The pack's cases, drawn once per family and seed: every mutant of a family is run on the same
    cases (drawing them is most of a mutant's time here, and cases are immutable)."""
    return tuple(draw_cases(get_family(family_name), count, seed, StrategyOptions()))


def disagreements(mutant: str, count: int, seed: int, family_name: str | None = None
                  ) -> tuple[int, list[str], list[str]]:
    """(cases, those not judged Pass batched, those not judged Pass alone) of the pack ``ctsgen
    generate --family F --count COUNT --seed SEED`` draws (F ``family_name``, by default the mutant's
    family), run on ``mutant:MUTANT`` under ``--expect-deviation MUTANT``."""
    family = get_family(family_name or catalogue()[mutant].family)
    by_variant: dict[str, list[Case]] = defaultdict(list)
    for c in _drawn(family.name, count, seed):
        by_variant[c.variant().id].append(c)
    backend, batched, alone = MutantBackend(mutant), [], []
    try:
        for cases in by_variant.values():
            sv = compile_variant(cases[0].variant(), family.name)
            deviations = reaching((mutant,), sv)  # as a pack run gates each variant
            inputs = drawn_cases(cases, [expected_under(family, c, c.data(), deviations) for c in cases])
            cap = family.batch_cap or len(inputs)
            for i in range(0, len(inputs), cap):
                batched += [f"{r.name}: {r.status.value} {r.detail}" for r in
                            run_cases(backend, sv, inputs[i:i + cap], 60).results if r.status is not Status.Pass]
            for one in inputs:
                alone += [f"{r.name}: {r.status.value} {r.detail}" for r in
                          run_cases(backend, sv, [one], 60).results if r.status is not Status.Pass]
    finally:
        backend.close()
    return sum(map(len, by_variant.values())), batched, alone


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # a mutant reading poison
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("mutant", sorted(catalogue()))
def test_every_mutant_agrees_with_its_own_deviation(mutant: str, seed: int) -> None:
    cases, batched, alone = disagreements(mutant, COUNT, seed)
    assert cases == COUNT
    assert not batched, f"{len(batched)} of {cases} cases batched: {batched[:3]}"
    assert not alone, f"{len(alone)} of {cases} cases alone: {alone[:3]}"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", sorted(n for n, m in catalogue().items() if m.family == "tensor-layout"))
def test_a_tensor_layout_mutant_agrees_with_itself_through_a_view(mutant: str) -> None:
    """The tensor-view family runs the tensor-layout addressing a layout mutant replaces: its loads
    and stores through a view reach the same undefined results (set-block-size-ignored read past the
    tensor, span-outer-axis-no-wrap an Undefined clamp out of bounds, and crashed the mutant's own
    software device there)."""
    cases, batched, alone = disagreements(mutant, COUNT, SEEDS[0], "tensor-view")
    assert cases == COUNT and not batched and not alone, (batched[:3], alone[:3])


def test_the_sweep_sees_a_disagreement(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep can fail: with the deviation's expectation left as the spec's (as the cm2-gemm khr
    route's data() was, before it loaded and stored through khr_load / khr_store), the mutant's
    results fail it, batched and alone."""
    import ctsgen.mutants.deviations as deviations

    monkeypatch.setattr(deviations, "applied", _nothing_applied)
    cases, batched, alone = disagreements("set-stride-ignored", COUNT, SEEDS[0])
    assert batched and alone and len(batched) == len(alone) < cases


def _nothing_applied(names: object) -> object:
    from contextlib import nullcontext

    return nullcontext()


def _ctsgen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctsgen", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


@pytest.mark.slow
@pytest.mark.parametrize("seed, mutant", [(26894, "oob-store-written"), (62682, "span-outer-axis-no-wrap")])
def test_the_reported_command_lines_pass_every_case(tmp_path: Path, seed: int, mutant: str) -> None:
    """Issue 45's two reproductions on 07b2430: a clamped or wrapped out-of-bounds store makes two
    matrix elements race for one tensor element, and an Undefined-clamped layout reached out of
    bounds; each ended in a ValueError traceback from the deviation's oracle, exit 1. The spec
    leaves those results undefined: the deviation's expectation leaves them unjudged."""
    repo = Path(__file__).resolve().parents[1]
    pack = tmp_path / "pack"
    made = _ctsgen("generate", "--family", "tensor-layout", "--count", "120", "--seed", str(seed), "--out", str(pack),
                   cwd=repo)
    assert made.returncode == 0, made.stderr
    ran = _ctsgen("run", str(pack), "--backend", f"mutant:{mutant}", "--expect-deviation", mutant,
                  "--results", str(tmp_path / "results.jsonl"), cwd=repo)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "Traceback" not in ran.stderr
    assert "Pass: 120" in ran.stdout + ran.stderr
