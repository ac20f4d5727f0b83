"""The pytest plugin in a driver's CI (docs/ci.md): selection, baselines and JUnit as CI tools read it."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctsgen.cli import main
from ctsgen.results.deqp_csv import read_rows

pytest_plugins = ["pytester"]

PACK_COUNT, PACK_SEED = 24, 1
MUTANT = "mirror-as-repeat"


def _cases(xml: Path) -> dict[str, ET.Element]:
    return {tc.get("name"): tc for tc in ET.parse(xml).getroot().iter("testcase")}


@pytest.mark.slow
def test_junit_names_family_and_group_and_the_real_device(pytester: pytest.Pytester, pristine: Path) -> None:
    xml = pytester.path / "r.xml"
    pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pristine), f"--junitxml={xml}"
                       ).assert_outcomes(passed=PACK_COUNT)
    cases = _cases(xml)
    assert set(cases) == set(_cases_of(pristine)), set(cases) ^ set(_cases_of(pristine))
    for name, tc in cases.items():
        assert tc.get("classname") == name.rsplit(".", 1)[0] and tc.get("classname").startswith("tensor_layout.")
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        assert props["device"] == "ctsgen reference backend" and props["driver"] and props["device"] != "None"


def test_include_exclude_and_caselist_deselect_as_ctsgen_run_selects(pytester: pytest.Pytester, pristine: Path,
                                                                      tmp_path: Path) -> None:
    names = sorted(_cases_of(pristine))
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pristine), "-v",
                             "--ctsgen-include", r"\.load\.", "--ctsgen-exclude", "clamp_constant")
    want = [n for n in names if ".load." in n and "clamp_constant" not in n]
    res.assert_outcomes(passed=len(want), deselected=PACK_COUNT - len(want))
    caselist = tmp_path / "cases.txt"
    caselist.write_text("\n".join(names[:3]) + "\n")
    pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pristine), "--ctsgen-caselist", str(caselist)
                       ).assert_outcomes(passed=3, deselected=PACK_COUNT - 3)


def _cases_of(pack: Path) -> list[str]:
    import json

    return [c["name"] for c in json.loads((pack / "manifest.json").read_text())["cases"]]


@pytest.mark.slow
def test_a_baseline_turns_the_mutants_failures_into_xfails(pytester: pytest.Pytester, pack: Path) -> None:
    assert main(["run", str(pack), "--quiet", "--backend", f"mutant:{MUTANT}"]) == 1
    failures = pack / f"results-mutant-{MUTANT}" / "failures.csv"
    listed = {name for _, name, _ in read_rows(failures)}
    args = ["-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-backend", f"mutant:{MUTANT}"]
    pytester.runpytest(*args).assert_outcomes(passed=PACK_COUNT - len(listed), failed=len(listed))
    xml = pytester.path / "b.xml"
    pytester.runpytest(*args, "--ctsgen-baseline", str(failures), f"--junitxml={xml}").assert_outcomes(
        passed=PACK_COUNT - len(listed), xfailed=len(listed))
    skipped = {n for n, tc in _cases(xml).items() if tc.find("skipped") is not None}
    assert skipped == listed  # JUnit writes an xfail as skipped, with its reason
    fixed = ["-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-baseline", str(failures)]
    res = pytester.runpytest(*fixed)  # deqp-runner: a listed failure that passes fails the run
    res.assert_outcomes(passed=PACK_COUNT - len(listed), failed=len(listed))
    res.stdout.fnmatch_lines(["*UnexpectedImprovement(Pass)*the baseline can shrink*"])
    res = pytester.runpytest(*fixed, "--ctsgen-improvements-pass")
    res.assert_outcomes(passed=PACK_COUNT, warnings=len(listed))
    res.stdout.fnmatch_lines(["*CtsgenUnexpectedImprovement*the baseline can shrink*"])


def test_a_bad_baseline_is_a_usage_error(pytester: pytest.Pytester, pristine: Path, tmp_path: Path) -> None:
    bad = tmp_path / "fails.txt"
    bad.write_text("a.case,Fial\n")
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pristine), "--ctsgen-baseline", str(bad))
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert any(re.search(r"fails.txt:1: unknown status 'Fial'", ln) for ln in res.errlines + res.outlines)


def test_flake_retries_make_a_case_failing_once_an_xfail(pytester: pytest.Pytester, pristine: Path,
                                                          monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    from test_ci import FailsFirstDispatch

    args = ["-p", "no:cacheprovider", "--ctsgen-pack", str(pristine), "--ctsgen-backend",
            "test_ci:FailsFirstDispatch", "--ctsgen-isolation", "none"]
    FailsFirstDispatch.dispatched = 0
    pytester.runpytest(*args).assert_outcomes(passed=PACK_COUNT - 1, failed=1)
    FailsFirstDispatch.dispatched = 0
    res = pytester.runpytest(*args, "--ctsgen-flake-retries", "1", "-rx")
    res.assert_outcomes(passed=PACK_COUNT - 1, xfailed=1)
    res.stdout.fnmatch_lines(["*XFAIL*Flake: Fail:*"])
