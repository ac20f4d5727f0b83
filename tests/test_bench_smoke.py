"""The maintained benches still run: each Python bench once, as a subprocess with the smallest
budget on the reference backend, and each device script parsed by bash with every repository path
it names present. bench/README.md is their index: every script under bench/ has a row there. Every
bench path README.md and docs/ cite exists, or is cited at the commit that still has it."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DEVICE_SCRIPTS = sorted((BENCH / "device").glob("*.sh"))
#: how the docs cite a file removed from the tree: at the commit that still has it
AT_COMMIT = re.compile(r"at commit [0-9a-f]{7}|git show [0-9a-f]{7}")
#: a repository path as the device scripts and the docs write one (not the tail of another path, such as
#: .ctsgen/bench/mutation.md; no shell variables)
REPO_PATH = re.compile(r"(?<![\w./-])(?:bench|docs|expectations|ctsgen|tests)/[A-Za-z0-9_./-]*[A-Za-z0-9_/-]")


def _bench(script: str, *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, str(BENCH / script), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.slow
def test_naive_loop_prints_a_rate_and_fails_nothing_on_the_reference(tmp_path: Path) -> None:
    out = _ok(_bench("naive_loop.py", "--backend", "reference", "--family", "tensor-layout", "--time", "1",
                     cwd=tmp_path))
    m = re.search(r"(\d+) cases in ([\d.]+)s = ([\d.]+) cases/s \((\d+) failed", out)
    assert m, out
    cases, wall, rate, failed = int(m[1]), float(m[2]), float(m[3]), int(m[4])
    assert cases > 0 and wall >= 1.0 and rate > 0
    assert failed == 0  # the reference backend is the oracle's own semantics: any failure is a broken loop


@pytest.mark.slow
def test_khr_route_agreement_finds_both_routes_agree_on_the_reference(tmp_path: Path) -> None:
    out = _ok(_bench("khr_route_agreement.py", "--count", "2", "--seed", "4", cwd=tmp_path))
    for family in ("cm2-gemm", "cm2-program"):
        assert f"{family} on ctsgen reference backend: 2 pairs, both routes Pass in 2, bitwise equal outputs in 2" \
            in out, out


@pytest.mark.slow
def test_throughput_writes_both_rates_and_the_stage_table(tmp_path: Path) -> None:
    out_dir = tmp_path / "tp"
    _ok(_bench("throughput.py", "--backend", "reference", "--family", "tensor-layout", "--time", "1",
               "--out", str(out_dir), cwd=tmp_path))
    result = json.loads((out_dir / "throughput.json").read_text())
    (row,) = result["families"]
    assert row["family"] == "tensor-layout" and row["failure"] is None
    assert row["naive_cases"] > 0 and row["naive_cases_per_s"] > 0
    assert row["fuzz_cases"] >= row["fuzz_examples"] > 0 and row["fuzz_cases_per_s"] > 0
    assert sum(row["stages_s"].values()) > 0
    assert "| tensor-layout |" in (out_dir / "throughput.md").read_text()


@pytest.mark.slow
@pytest.mark.slow
def test_stage_costs_prints_a_row_of_cpu_milliseconds_per_case(tmp_path: Path) -> None:
    out = _ok(_bench("stage_costs.py", "--family", "cm2-reduce", "--examples", "2", "--repeat", "1",
                     "--out", str(tmp_path), cwd=tmp_path, timeout=300))
    row = next(line for line in out.splitlines() if line.startswith("| cm2-reduce |"))
    cases, cpu, draw, oracle = (float(x) for x in row.strip("| ").split("|")[1:])
    assert cases > 0 and cpu >= draw > 0 and oracle > 0
    assert (tmp_path / "stage_costs.md").read_text().count("| cm2-reduce |") == 1


def test_mutant_kill_budgets_prints_a_kill_and_the_documented_budget(tmp_path: Path) -> None:
    out = _ok(_bench("mutant_kill_budgets.py", "--seeds", "1", "--max-examples", "200", "--family", "tensor-layout",
                     "--mutant", "repeat-as-clamp-to-edge", cwd=tmp_path))
    m = re.search(r"\| repeat-as-clamp-to-edge \| \[(\d+)\] \| (\d+) \| (\d+) \|", out)
    assert m, out
    examples, budget = int(m[1]), int(m[3])
    assert 1 <= examples <= 200  # killed within the budget given
    assert budget == max(150, math.ceil(10 * examples / 50) * 50)  # the rule its docstring and tests cite


@pytest.mark.slow
def test_mutation_seconds_prints_seconds_examples_and_a_repro_size(tmp_path: Path) -> None:
    out = _ok(_bench("mutation_seconds.py", "--mutant", "repeat-as-clamp-to-edge", "--seeds", "0",
                     "--max-examples", "200", cwd=tmp_path))
    m = re.search(r"\| repeat-as-clamp-to-edge \| ([\d.]+) \| (\d+) \| ([\d.]+) \| (\d+) \|", out)
    assert m, out
    seconds, examples, median, size = float(m[1]), int(m[2]), float(m[3]), int(m[4])
    assert seconds > 0 and median == seconds  # one seed: its seconds are the median
    assert 1 <= examples <= 200 and size > 0


@pytest.mark.slow
def test_the_report_screenshot_writes_the_report_and_an_image_or_names_the_missing_browser(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    subprocess.run([sys.executable, "-m", "ctsgen", "campaign", "start", str(camp), "--family", "tensor-layout",
                    "--time", "2", "--workers", "1"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                   check=True)
    proc = _bench("campaign_report_screenshot.py", str(camp), str(tmp_path / "shot.png"), cwd=tmp_path)
    assert (camp / "report" / "report.md").is_file() and (camp / "report" / "report.html").is_file()
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        assert proc.returncode == 0 and (tmp_path / "shot.png").stat().st_size > 0, proc.stderr
    else:
        assert proc.returncode == 1 and proc.stderr.strip() == "chromium is not installed -> apt-get install -y chromium"


@pytest.mark.slow
def test_route_costs_prints_a_cost_row_per_route_and_an_instruction_row(tmp_path: Path) -> None:
    out = _ok(_bench("route_costs.py", "--count", "2", "--repeat", "1", "--cost-families", "coopmat-khr",
                     "--count-families", "coopmat-khr", "decode-vector", cwd=tmp_path, timeout=300))
    for route in ("glslang", "glslang-O1", "slang", "opt-O", "opt-Os", "opt-loops"):
        assert re.search(rf"^\| coopmat-khr \| {route} \| 2 \| [0-9.]+ \| [0-9.]+ \|", out, re.M), route
    # one count a route, and "refused" where a route cannot take the family (decode-vector's module is a
    # rewrite of glslang's: no Slang source, and the spirv-opt routes refuse its decode-vector capability)
    assert re.search(r"^\| coopmat-khr \| 2 \| \d+ \| \d+ \| \d+ \| \d+ \| \d+ \| \d+ \|$", out, re.M), out
    assert re.search(r"^\| decode-vector \| 2 \| \d+ \| refused \| refused \| refused \| refused \| refused \|$",
                     out, re.M), out


def test_pack_identity_finds_a_record_identical_and_names_a_tampered_file(tmp_path: Path) -> None:
    args = ("--count", "5", "--seeds", "0", "--family", "tensor-layout")
    for name in ("a", "b"):
        _ok(_bench("pack_identity.py", "record", str(tmp_path / name), *args, cwd=tmp_path))
    manifest = (tmp_path / "a" / "SHA256SUMS").read_text().splitlines()
    paths = [line.split("  ", 1)[1] for line in manifest]
    assert "tensor-layout-0/manifest.json" in paths
    assert any(p.startswith("verdicts/tensor-layout-0.reference") for p in paths)
    assert any(p.startswith("verdicts/tensor-layout-0.mutant-") for p in paths)

    same = _bench("pack_identity.py", "compare", str(tmp_path / "a"), str(tmp_path / "a"), cwd=tmp_path)
    assert same.returncode == 0, same.stdout
    assert f"{len(paths)} files in 2 packs: 0 changed, 0 missing, 0 extra" in same.stdout

    # Two records of the same code: the packs are byte-identical; the verdict files differ only in
    # the wall-clock durations that `ctsgen run` records (JSON lines' duration_s, results.csv's third column).
    again = _bench("pack_identity.py", "compare", str(tmp_path / "a"), str(tmp_path / "b"), cwd=tmp_path)
    changed = re.findall(r"^changed: (.+)$", again.stdout, re.M)
    assert not [p for p in changed if not p.startswith("verdicts/")], again.stdout
    for path in changed:
        a, b = ((tmp_path / side / path).read_text().splitlines() for side in ("a", "b"))
        assert [_without_duration(path, line) for line in a] == [_without_duration(path, line) for line in b], path

    tampered = tmp_path / "c"
    shutil.copytree(tmp_path / "a", tampered)
    case_json = next(p for p in paths if p.endswith("case.json"))
    (tampered / case_json).write_text((tampered / case_json).read_text() + " ")
    digest = hashlib.sha256((tampered / case_json).read_bytes()).hexdigest()
    (tampered / "SHA256SUMS").write_text("".join(f"{digest if p == case_json else line.split()[0]}  {p}\n"
                                                 for line, p in zip(manifest, paths) if p != paths[-1]))
    differ = _bench("pack_identity.py", "compare", str(tmp_path / "a"), str(tampered), cwd=tmp_path)
    assert differ.returncode == 1, differ.stdout
    assert f"changed: {case_json}" in differ.stdout
    assert f"only in {tmp_path / 'a'}: {paths[-1]}" in differ.stdout  # the line left out: a missing file


@pytest.mark.slow
def test_draw_identity_finds_two_records_identical_and_names_a_changed_batch(tmp_path: Path) -> None:
    args = ("--examples", "3", "--seeds", "0", "--family", "cm2-reduce")
    for name in ("a", "b"):
        _ok(_bench("draw_identity.py", "record", str(tmp_path / name), *args, cwd=tmp_path))
    batches = json.loads((tmp_path / "a" / "cm2-reduce-0.json").read_text())
    assert len(batches) == 3 and all(b["cases"] and len(b["names"]) == len(b["cases"]) for b in batches)
    assert all(len(b["choices"]) == len(b["spans"]) == 16 for b in batches)

    same = _bench("draw_identity.py", "compare", str(tmp_path / "a"), str(tmp_path / "b"), cwd=tmp_path)
    assert same.returncode == 0 and "1 files: 0 differ" in same.stdout, same.stdout

    batches[-1]["spans"] = "0" * 16  # the same cases drawn with another span structure
    (tmp_path / "b" / "cm2-reduce-0.json").write_text(json.dumps(batches, sort_keys=True) + "\n")
    differ = _bench("draw_identity.py", "compare", str(tmp_path / "a"), str(tmp_path / "b"), cwd=tmp_path)
    assert differ.returncode == 1 and "changed: cm2-reduce-0.json" in differ.stdout, differ.stdout


@pytest.mark.slow
def test_draw_identity_stops_quietly_on_a_closed_pipe_and_names_a_folder_it_cannot_make(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = str(BENCH / "draw_identity.py")
    piped = subprocess.run(f"'{sys.executable}' '{script}' record '{tmp_path / 'r'}' --examples 2 --seeds 1 2 "
                           "--family cm2-reduce | head -1", shell=True, cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
    assert piped.stdout.startswith("cm2-reduce-1: 2 batches") and "Traceback" not in piped.stderr, piped.stderr
    (tmp_path / "file").write_text("")
    proc = _bench("draw_identity.py", "record", str(tmp_path / "file"), "--examples", "2", "--family", "cm2-reduce",
                  cwd=tmp_path)
    assert proc.returncode == 2 and "choose a folder you can write" in proc.stderr and "Traceback" not in proc.stderr


def _without_duration(path: str, line: str) -> str:
    if path.endswith(".jsonl"):
        record = json.loads(line)
        record.pop("duration_s", None)
        return json.dumps(record, sort_keys=True)
    if path.endswith(".csv"):
        return ",".join(line.split(",")[:2])
    return line


@pytest.mark.parametrize("script", DEVICE_SCRIPTS, ids=lambda p: p.name)
def test_device_script_parses_and_names_only_paths_that_exist(script: Path) -> None:
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    missing = sorted({p for p in REPO_PATH.findall(script.read_text()) if not (ROOT / p).exists()})
    assert not missing, f"{script.name} names {missing}: restore them or change the script"


def test_the_bench_readme_indexes_every_script_and_names_only_paths_that_exist() -> None:
    readme = (BENCH / "README.md").read_text()
    scripts = sorted(p.relative_to(ROOT).as_posix() for p in [*BENCH.glob("*.py"), *BENCH.glob("device/*")])
    assert [s for s in scripts if f"`{s}`" not in readme] == []
    retired = readme.split("## Retired scripts", 1)[1] if "## Retired scripts" in readme else ""
    current = readme.removesuffix(retired)
    assert [p for p in REPO_PATH.findall(current) if not (ROOT / p).exists()] == []


def test_every_bench_path_the_docs_cite_exists_or_names_its_commit() -> None:
    """docs/validation.md backs every GPU claim with a command and its output, and other pages (the
    results' READMEs too) cite benches; a bench script or result removed from the tree is cited "at
    commit <hash>", where ``git show`` still finds it."""
    dangling = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(BENCH.glob("results/**/README.md"))]:
        for paragraph in re.split(r"\n\s*\n", page.read_text()):
            for path in REPO_PATH.findall(paragraph):
                present = (ROOT / path).exists() or any(ROOT.glob(path + ".*"))  # "run1-local8.{log,jsonl.gz}"
                if path.startswith("bench/") and not present and not AT_COMMIT.search(paragraph):
                    dangling.append(f"{page.relative_to(ROOT)}: {path}")
    assert dangling == []


def _tracked_results() -> list[str]:
    """bench/results' files as git tracks them (what a clone has), or as they lie where there is no git."""
    listed = subprocess.run(["git", "ls-files", "bench/results"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout.strip():
        return listed.stdout.split()
    return [p.relative_to(ROOT).as_posix() for p in (BENCH / "results").rglob("*") if p.is_file()]


def test_every_results_folder_has_a_readme_indexed_and_no_script() -> None:
    """bench/results holds summaries beside the commands that made them (bench/README.md, "Results"):
    raw outputs are cited at a commit, scripts are benches or retired."""
    files = _tracked_results()
    folders = sorted({f.split("/")[2] for f in files if f.count("/") >= 3})
    readme = (BENCH / "README.md").read_text()
    assert [d for d in folders if f"bench/results/{d}/README.md" not in files] == []
    assert [d for d in folders if f"(results/{d}/README.md)" not in readme] == []
    assert [f for f in files if f.endswith((".py", ".sh"))] == []
    assert len(files) <= 100, f"{len(files)} files in bench/results -> cite raw outputs at a commit instead"
