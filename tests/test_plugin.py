"""The pytest plugin: a pack's cases as items, verdicts as outcomes, batching per variant."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctsgen.cli import main
from ctsgen.pytest_plugin import CaseFailed, CtsgenQualityWarning, apply_verdict
from ctsgen.runner.verdict import CaseResult, Status

pytest_plugins = ["pytester"]

#: 80 cases: every Dim x clampMode x operation cell, plus explicit strides
#: (which the set-stride-ignored mutant gets wrong).
COUNT = 80


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("plugin") / "pack"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(tmp_path_factory.mktemp("spirv-cache")))
        assert main(["generate", "--count", str(COUNT), "--seed", "0", "--out", str(out)]) == 0
    yield out


def _names(pack: Path) -> list[str]:
    return [c["name"] for c in json.loads((pack / "manifest.json").read_text())["cases"]]


def test_reference_backend_passes_every_case_with_case_names_in_junit(pytester: pytest.Pytester,
                                                                       pack: Path) -> None:
    xml = pytester.path / "r.xml"
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), f"--junitxml={xml}")
    res.assert_outcomes(passed=COUNT)
    names = {tc.get("name") for tc in ET.parse(xml).getroot().iter("testcase")}
    assert names == set(_names(pack))


def test_k_selects_a_group_by_case_name(pytester: pytest.Pytester, pack: Path) -> None:
    want = [n for n in _names(pack) if "clamp_repeat" in n]
    assert 0 < len(want) < COUNT
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "-k", "clamp_repeat", "-v")
    res.assert_outcomes(passed=len(want))
    ran = [line for line in res.outlines if " PASSED" in line]
    assert all("clamp_repeat" in line for line in ran) and len(ran) == len(want)


def _junit_outcomes(xml: Path) -> dict[str, str]:
    """case name -> passed/failed/skipped (an xdist group suffix '@variant' dropped)."""
    out = {}
    for tc in ET.parse(xml).getroot().iter("testcase"):
        kind = next((c.tag for c in tc if c.tag in ("failure", "error", "skipped")), "passed")
        out[tc.get("name").split("@", 1)[0]] = kind
    return out


def test_a_mutant_backend_fails_some_items_and_xdist_workers_agree(pytester: pytest.Pytester,
                                                                   pack: Path) -> None:
    """Fail verdicts carry the mismatch report; two xdist workers pinned to two (simulated)
    devices give every case the same outcome as one process, each variant on one worker."""
    args = ["-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-backend", "mutant:set-stride-ignored"]
    one = pytester.path / "one.xml"
    res = pytester.runpytest(*args, f"--junitxml={one}")
    outcomes = res.parseoutcomes()
    assert outcomes.get("failed", 0) > 0 and outcomes.get("passed", 0) > 0
    assert outcomes["failed"] + outcomes["passed"] == COUNT
    res.stdout.fnmatch_lines(["*Fail: * elements of '*' differ*"])
    two = pytester.path / "two.xml"
    pytester.runpytest(*args, "-n", "2", "--ctsgen-devices", "0,1", f"--junitxml={two}").assert_outcomes(
        passed=outcomes["passed"], failed=outcomes["failed"])
    assert _junit_outcomes(two) == _junit_outcomes(one)
    placed: dict[str, set[tuple[str, str]]] = {}
    for tc in ET.parse(two).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        placed.setdefault(props["variant"], set()).add((props["worker"], props["device"]))
    assert all(len(v) == 1 for v in placed.values())  # a variant never splits across workers
    assert {d for v in placed.values() for _, d in v} == {"0", "1"}
    assert all(d == w[2:] for v in placed.values() for w, d in v)  # gwK on device K


def test_not_supported_is_a_skip_and_variants_run_batched(pytester: pytest.Pytester, pack: Path) -> None:
    """A third-party backend (MODULE:CLASS) whose profile lacks an extension some variants
    require: their items are skipped with the reason; the others run one dispatch per variant."""
    pytester.makepyfile(limited_backend='''
        from ctsgen.backends.reference import ReferenceBackend
        from ctsgen.device.profile import DeviceProfile

        class NoBfloat16(DeviceProfile):
            def unsupported_reason(self, req):
                if "VK_KHR_shader_bfloat16" in req.extensions:
                    return "this device lacks VK_KHR_shader_bfloat16"
                return None

        class Limited(ReferenceBackend):
            name = "limited"
            dispatches = []
            def profile(self):
                return NoBfloat16(name="limited")
            prepares = []
            def run(self, dispatch, timeout_s):
                Limited.dispatches.append((dispatch.variant.id, dispatch.workgroups))
                return super().run(dispatch, timeout_s)
            def prepare(self, variants):
                Limited.prepares.append(len(variants))
    ''')
    pytester.makeconftest('''
        import limited_backend
        def pytest_sessionfinish(session):
            calls = limited_backend.Limited.dispatches
            ids = [v for v, _ in calls]
            assert len(ids) == len(set(ids)), "a variant was dispatched more than once"
            print("DISPATCHES", len(calls), sum(n for _, n in calls))
            print("FIRST PREPARE", limited_backend.Limited.prepares[0])
    ''')
    pytester.syspathinsert()
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "-s", "-rs",
                             "--ctsgen-backend", "limited_backend:Limited", "--ctsgen-isolation", "none")
    manifest = json.loads((pack / "manifest.json").read_text())
    bf16 = [c for c in manifest["cases"]
            if "VK_KHR_shader_bfloat16" in manifest["variants"][c["variant"]]["requirements"]["extensions"]]
    assert bf16
    res.assert_outcomes(passed=COUNT - len(bf16), skipped=len(bf16))
    res.stdout.fnmatch_lines(["*NotSupported: this device lacks VK_KHR_shader_bfloat16*"])
    n_variants = len({c["variant"] for c in manifest["cases"] if c not in bf16})
    res.stdout.fnmatch_lines([f"*DISPATCHES {n_variants} {COUNT - len(bf16)}"])
    res.stdout.fnmatch_lines([f"*FIRST PREPARE {n_variants}"])  # every supported pipeline, up front


def test_without_a_pack_the_plugin_collects_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize("status", [Status.Fail, Status.Timeout, Status.DeviceLost, Status.Crash])
def test_failing_verdicts_fail_with_their_reason(status: Status) -> None:
    with pytest.raises(CaseFailed, match=f"{status.value}: the reason"):
        apply_verdict(CaseResult("x", status, "the reason", [{"element": 3}]))


def test_quality_warning_passes_with_a_warning_and_not_supported_skips() -> None:
    with pytest.warns(CtsgenQualityWarning, match="near the edge"):
        apply_verdict(CaseResult("x", Status.QualityWarning, "near the edge"))
    with pytest.raises(pytest.skip.Exception, match="NotSupported: no such feature"):
        apply_verdict(CaseResult("x", Status.NotSupported, "no such feature"))
    apply_verdict(CaseResult("x", Status.Pass))


def test_given_cases_and_check_case_on_the_reference_backend(pytester: pytest.Pytester,
                                                              session_spirv_cache: Path) -> None:
    """A driver team's property test in a few lines: the fixture and the helper together."""
    pytester.makepyfile(test_mine='''
        from hypothesis import settings
        from ctsgen.testing import check_case, given_cases

        @settings(max_examples=5, deadline=None, database=None)
        @given_cases(family="tensor-layout")
        def test_mine(case, ctsgen_backend):
            result = check_case(ctsgen_backend, case)
            assert not result.status.is_failure, result.detail
    ''')
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_documented_third_party_adapter_passes_its_own_pack(
        pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        session_spirv_cache: Path) -> None:
    """docs/third-party-backend.md's adapter, run as the page says (in a supervised worker)."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "third-party-backend.md").read_text()
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) < 100
    (pytester.path / "my_backend.py").write_text(code)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(pytester.path),
                                                                    os.environ.get("PYTHONPATH")])))
    pytester.syspathinsert()
    small = tmp_path / "pack"
    assert main(["generate", "--count", "3", "--seed", "0", "--out", str(small)]) == 0
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(small),
                             "--ctsgen-backend", "my_backend:HarnessBackend")
    res.assert_outcomes(passed=3)
