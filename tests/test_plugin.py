"""The pytest plugin: a pack's cases as items, verdicts as outcomes, batching per variant."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.cli import main
from ctsgen.pytest_plugin import CaseFailed, CtsgenQualityWarning, apply_verdict
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.xdist_schedule import assign_groups

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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 3])
def test_a_mutant_backend_fails_some_items_and_xdist_workers_agree(pytester: pytest.Pytester, pack: Path,
                                                                   workers: int) -> None:
    """Fail verdicts carry the mismatch report; two or three xdist workers pinned to two
    (simulated) devices give every case the same outcome as one process, each variant on
    one worker, worker gwK on device K mod 2."""
    args = ["-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-backend", "mutant:set-stride-ignored"]
    one = pytester.path / "one.xml"
    res = pytester.runpytest(*args, f"--junitxml={one}")
    outcomes = res.parseoutcomes()
    assert outcomes.get("failed", 0) > 0 and outcomes.get("passed", 0) > 0
    assert outcomes["failed"] + outcomes["passed"] == COUNT
    res.stdout.fnmatch_lines(["*Fail: * elements of '*' differ*"])
    two = pytester.path / "two.xml"
    pytester.runpytest(*args, "-n", str(workers), "--ctsgen-devices", "0,1", f"--junitxml={two}").assert_outcomes(
        passed=outcomes["passed"], failed=outcomes["failed"])
    assert _junit_outcomes(two) == _junit_outcomes(one)
    placed: dict[str, set[tuple[str, str]]] = {}
    for tc in ET.parse(two).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        placed.setdefault(props["variant"], set()).add((props["worker"], props["device_index"]))
    assert all(len(v) == 1 for v in placed.values())  # a variant never splits across workers
    assert {w for v in placed.values() for w, _ in v} == {f"gw{k}" for k in range(workers)}
    assert {d for v in placed.values() for _, d in v} == {"0", "1"}
    assert all(int(d) == int(w[2:]) % 2 for v in placed.values() for w, d in v)


#: A reference backend that logs, per process, every prepare() and the variant of every run().
RECORDING_BACKEND = '''
import json, os
from pathlib import Path
from ctsgen.backends.reference import ReferenceBackend

class Recording(ReferenceBackend):
    name = "recording"

    def _log(self, **rec):
        log = Path(os.environ["RECORDING_LOG"]) / (os.environ.get("PYTEST_XDIST_WORKER", "main") + ".jsonl")
        with log.open("a") as fh:
            fh.write(json.dumps(rec) + "\\n")

    def prepare(self, variants):
        self._log(op="prepare", ids=[v.id for v in variants])

    def run(self, dispatch, timeout_s):
        self._log(op="run", id=dispatch.variant.id)
        crash_once = Path(os.environ["RECORDING_LOG"]) / "crash-once"
        if crash_once.exists() and os.environ.get("PYTEST_XDIST_WORKER") == "gw1":
            crash_once.unlink()
            os._exit(3)  # the pytest worker dies in its first dispatch
        return super().run(dispatch, timeout_s)
'''


def _recorded(log: Path) -> dict[str, list[dict]]:
    """process ("gw0", "main") -> its backend's prepare/run calls, in order."""
    return {f.stem: [json.loads(line) for line in f.read_text().splitlines()] for f in sorted(log.glob("*.jsonl"))}


def _run_recording(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, pack: Path, *args: str,
                   crash: bool = False) -> tuple[pytest.RunResult, dict[str, list[dict]], dict[str, dict[str, str]]]:
    """Run the pack on the recording backend (in the pytest processes; with ``crash``, worker
    gw1 dies in its first dispatch); what each process called, and each case's JUnit properties."""
    log = pytester.mkdir(f"log{len(list(pytester.path.glob('log*')))}")
    if crash:
        (log / "crash-once").touch()
    monkeypatch.setenv("RECORDING_LOG", str(log))
    (pytester.path / "recording_backend.py").write_text(RECORDING_BACKEND)
    pytester.makeconftest("")  # its directory goes on sys.path, in every xdist worker too
    xml = log / "r.xml"
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-isolation", "none",
                             "--ctsgen-backend", "recording_backend:Recording", f"--junitxml={xml}", *args)
    props = {tc.get("name").split("@", 1)[0]: {p.get("name"): p.get("value") for p in tc.iter("property")}
             for tc in ET.parse(xml).getroot().iter("testcase")}
    return res, _recorded(log), props


@pytest.mark.slow
def test_explicit_gateways_as_for_remote_hosts_plan_and_prepare_like_n(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, pack: Path) -> None:
    """Workers given as xdist gateways (``--tx 2*popen``, the form ``--tx ssh=HOST//python=python3``
    takes for another host) get the same whole-variant plan and up-front builds as ``-n 2``."""
    res, calls, _ = _run_recording(pytester, monkeypatch, pack, "--tx", "2*popen", "--dist", "load")
    res.assert_outcomes(passed=COUNT)
    assert sorted(calls) == ["gw0", "gw1"]
    firsts = [set(log[0]["ids"]) for log in calls.values()]
    assert all(log[0]["op"] == "prepare" for log in calls.values())
    assert not firsts[0] & firsts[1]
    manifest = json.loads((pack / "manifest.json").read_text())
    assert firsts[0] | firsts[1] == {c["variant"] for c in manifest["cases"]}


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 3])
def test_each_xdist_worker_prepares_exactly_its_own_variants_up_front(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, pack: Path, workers: int) -> None:
    """Each worker's first backend call is one prepare() of every variant it then runs; every
    later prepare() names only pipelines already built; over the workers every variant is
    prepared once. Whole variants balance the workers' cases to within one variant's size."""
    res, calls, props = _run_recording(pytester, monkeypatch, pack, "-n", str(workers))
    res.assert_outcomes(passed=COUNT)
    assert sorted(calls) == [f"gw{k}" for k in range(workers)]
    manifest = json.loads((pack / "manifest.json").read_text())
    sizes = Counter(c["variant"] for c in manifest["cases"])
    prepared_by: dict[str, set[str]] = {}
    for worker, log in calls.items():
        assert log[0]["op"] == "prepare", f"{worker} dispatched before preparing"
        first = set(log[0]["ids"])
        assert len(first) == len(log[0]["ids"])
        assert first == {c["id"] for c in log if c["op"] == "run"}
        assert all(set(c["ids"]) <= first for c in log[1:] if c["op"] == "prepare")  # no build at a dispatch
        prepared_by[worker] = first
    assert sorted(v for ids in prepared_by.values() for v in ids) == sorted(sizes)
    loads = [sum(sizes[v] for v in ids) for ids in prepared_by.values()]
    assert max(loads) - min(loads) <= max(sizes.values())
    reported = {p["worker"]: int(p["prepared"]) for p in props.values() if "prepared" in p}
    assert reported == {w: len(ids) for w, ids in prepared_by.items()}  # once per worker, on its first item


@pytest.mark.slow
def test_k_under_xdist_prepares_only_the_selected_variants(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, pack: Path) -> None:
    want = {c["name"]: c["variant"] for c in json.loads((pack / "manifest.json").read_text())["cases"]
            if "clamp_repeat" in c["name"]}
    res, calls, props = _run_recording(pytester, monkeypatch, pack, "-n", "2", "-k", "clamp_repeat")
    res.assert_outcomes(passed=len(want))
    assert set(props) == set(want)
    up_front = [log[0]["ids"] for log in calls.values()]
    assert sorted(v for ids in up_front for v in ids) == sorted(set(want.values()))


@pytest.mark.slow
def test_an_explicit_dist_keeps_xdists_scheduler_and_builds_each_pipeline_at_its_dispatch(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, pack: Path) -> None:
    """--dist worksteal is xdist's own scheduler: no plan, so no up-front prepare; each
    dispatch's pipeline is prepared alone, just before it, and every variant runs."""
    res, calls, props = _run_recording(pytester, monkeypatch, pack, "-n", "2", "--dist", "worksteal")
    res.assert_outcomes(passed=COUNT)
    for log in calls.values():
        ops = [(c["op"], tuple(c.get("ids", [c.get("id")]))) for c in log]
        assert ops[0::2] == [("prepare", ids) for _, ids in ops[1::2]]
        assert all(op == "run" and len(ids) == 1 for op, ids in ops[1::2])
    ran = {c["id"] for log in calls.values() for c in log if c["op"] == "run"}
    assert ran == {c["variant"] for c in json.loads((pack / "manifest.json").read_text())["cases"]}
    assert not any("prepared" in p for p in props.values())


@pytest.mark.slow
def test_dist_loadgroup_gets_the_whole_variant_plan(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, pack: Path) -> None:
    """--dist loadgroup means "keep groups whole"; xdist's own grouping is silently lost on
    pytest 9.2 (pytest-xdist #1386), so the plugin schedules it: each variant on one worker,
    prepared up front by that worker alone."""
    res, calls, _ = _run_recording(pytester, monkeypatch, pack, "-n", "2", "--dist", "loadgroup")
    res.assert_outcomes(passed=COUNT)
    firsts = [log[0] for log in calls.values()]
    assert all(first["op"] == "prepare" for first in firsts)
    ran = [(worker, c["id"]) for worker, log in calls.items() for c in log if c["op"] == "run"]
    assert len({v for _, v in ran}) == len(ran)  # one dispatch per variant, on one worker
    assert {v for _, v in ran} == {c["variant"] for c in json.loads((pack / "manifest.json").read_text())["cases"]}


@pytest.mark.slow
def test_a_crashed_workers_remaining_cases_run_on_its_replacement(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, pack: Path) -> None:
    """gw1 dies in its first dispatch: xdist fails the item it was running, the replacement
    worker (gw2, outside the plan) runs every other case gw1 had, building each pipeline
    at its dispatch; every case gets an outcome, no case of gw0's runs again."""
    res, calls, props = _run_recording(pytester, monkeypatch, pack, "-n", "2", crash=True)
    res.assert_outcomes(passed=COUNT - 1, failed=1)
    assert sorted(calls) == ["gw0", "gw1", "gw2"]
    died_in = calls["gw1"][-1]["id"]
    assert [c["op"] for c in calls["gw1"]].count("run") == 1
    assert not set(calls["gw1"][0]["ids"]) & {c["id"] for c in calls["gw0"] if c["op"] == "run"}
    took_over = [c for c in calls["gw2"] if c["op"] == "run"]
    assert {c["id"] for c in took_over} | {died_in} == set(calls["gw1"][0]["ids"])
    assert all(c["op"] == "run" or len(c["ids"]) == 1 for c in calls["gw2"])  # no plan: one at a time
    assert {p["worker"] for p in props.values() if "prepared" in p} == {"gw0"}  # gw1 died before reporting


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


def _group_by_letter(nodeid: str) -> str:
    """Test grouping: ``m.py::a3`` is in group ``a``; ids with a parameter are their own group."""
    name = nodeid.rsplit("::", 1)[1]
    return nodeid if "[" in name else name[0]


def test_assign_groups_puts_the_largest_group_first_on_the_least_loaded_worker() -> None:
    """Worked example: groups c (3 items, seen first), a (5), an ungrouped item (its own
    group, 1), b (3), d (1). Largest first: a -> 0 (load 5); c before b (seen first) -> 1 (3);
    b -> 1 (6); the ungrouped item before d (seen first) -> 0 (6); d ties at 6/6 and goes
    to the lower index, 0."""
    nodeids = (["m.py::c1"] + [f"m.py::a{i}" for i in range(5)] + ["m.py::c2", "m.py::t[x]"]
               + [f"m.py::b{i}" for i in range(3)] + ["m.py::d", "m.py::c3"])
    assert assign_groups(nodeids, 2, _group_by_letter) == {"a": 0, "c": 1, "b": 1, "d": 0, "m.py::t[x]": 0}
    assert assign_groups(nodeids, 1, _group_by_letter) == dict.fromkeys(["a", "c", "b", "d", "m.py::t[x]"], 0)
    with pytest.raises(ValueError, match="at least 1"):
        assign_groups(nodeids, 0, _group_by_letter)


@settings(max_examples=200)
@given(sizes=st.lists(st.integers(1, 20), min_size=1, max_size=30), workers=st.integers(1, 6))
def test_assign_groups_gives_each_group_one_worker_and_balances_within_a_group(sizes: list[int],
                                                                                workers: int) -> None:
    nodeids = [f"p::g{g}_{i}" for g, n in enumerate(sizes) for i in range(n)]
    plan = assign_groups(nodeids, workers, lambda nodeid: nodeid.rsplit("::", 1)[1].split("_")[0])
    assert set(plan) == {f"g{g}" for g in range(len(sizes))}
    assert set(plan.values()) <= set(range(workers))
    if len(sizes) >= workers:  # nobody idle while a group waits
        assert set(plan.values()) == set(range(workers))
    loads = [sum(n for g, n in enumerate(sizes) if plan[f"g{g}"] == w) for w in range(workers)]
    assert max(loads) - min(loads) <= max(sizes)


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


@pytest.mark.slow
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
