"""Nothing a user owns is lost or silently rewritten.

Each test here failed before the behaviour it pins down was built: --force
replaces only a ctsgen pack, the main job is safe to repeat, concurrent
writers are refused, stale temporaries of dead processes are removed,
results files survive crashes and are never confused with other files,
pack arrays are checked against what their case needs, and the fuzz
database is checked before fuzzing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ctsgen.cli import main

REPO = Path(__file__).resolve().parents[1]
COUNT = PACK_COUNT = 6


def generate(out: Path, *extra: str, count: int = COUNT, seed: int = 1) -> int:
    return main(["generate", "--count", str(count), "--seed", str(seed), "--out", str(out), *extra])


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def fails_with(capsys, argv: list[str]) -> str:
    """Run the CLI; it must exit 2 with one ``ctsgen: error: ... -> ...`` line on stderr."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("ctsgen: error: ") and " -> " in err[0], err
    return err[0]


# -- --force and the main job ---------------------------------------------------

def test_force_refuses_a_directory_that_is_not_a_pack(tmp_path, capsys, session_spirv_cache):
    w = tmp_path / "w"
    w.mkdir()
    (w / "thesis.tex").write_text("x")
    line = fails_with(capsys, ["generate", "--count", "3", "--out", str(w), "--force"])
    assert "not a ctsgen pack" in line and str(w) in line
    assert (w / "thesis.tex").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w"]


def test_force_refuses_a_plain_file_and_leaves_nothing_behind(tmp_path, capsys, session_spirv_cache):
    f = tmp_path / "notes.txt"
    f.write_text("mine")
    line = fails_with(capsys, ["generate", "--count", "3", "--out", str(f), "--force"])
    assert "not a ctsgen pack" in line
    assert f.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"], "no .NAME.old-<pid> left behind"


def test_force_replaces_a_ctsgen_pack(pristine, tmp_path, session_spirv_cache):
    out = tmp_path / "out"
    shutil.copytree(pristine, out)
    assert generate(out, "--force", seed=2, count=3) == 0
    assert len(json.loads((out / "manifest.json").read_text())["cases"]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_generate_twice_reuses_an_identical_pack(pristine, tmp_path, capsys, session_spirv_cache):
    out = tmp_path / "out"
    shutil.copytree(pristine, out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert generate(out) == 0  # same family, count, seed, profile: nothing to do
    assert "up to date" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_generate_with_other_options_over_a_pack_needs_force(pristine, tmp_path, capsys, session_spirv_cache):
    out = tmp_path / "out"
    shutil.copytree(pristine, out)
    before = tree(out)
    line = fails_with(capsys, ["generate", "--count", str(COUNT), "--seed", "7", "--out", str(out)])
    assert "--force" in line and "seed" in line
    assert tree(out) == before


#: What each README main-job command gets added to keep this test small; the command itself is run as written.
SMALL = {"generate": ["--count", "4"], "run": ["--quiet"], "fuzz": ["--max-examples", "30"]}


def _readme_main_job() -> list[tuple[list[str], int]]:
    """The commands of the README's "The main job" block, each with the exit status its comment
    promises: "(exit N)" at the end of the comment, else 0."""
    readme = (REPO / "README.md").read_text()
    block = readme[readme.index("## The main job"):].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        command, _, comment = line.partition("#")
        expected = re.search(r"\(exit (\d+)\)\s*$", comment)
        commands.append((command.split(), int(expected.group(1)) if expected else 0))
    return commands


@pytest.mark.slow
def test_readme_main_job_runs_twice_as_written(tmp_path, session_spirv_cache):
    """The README's main job, run twice in a row in a fresh directory, works both times: each
    command exits as its comment says (with a small --count or --max-examples added)."""
    commands = _readme_main_job()
    assert [argv[:2] for argv, _ in commands][:2] == [["ctsgen", "generate"], ["ctsgen", "run"]]
    assert any(argv[:2] == ["ctsgen", "fuzz"] for argv, _ in commands)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(2):
        for argv, expected in commands:
            assert argv[0] == "ctsgen" and "--force" not in argv, argv
            full = [sys.executable, "-m", "ctsgen", *argv[1:], *SMALL.get(argv[1], [])]
            p = subprocess.run(full, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            assert p.returncode == expected, (argv, p.returncode, p.stderr[-2000:])


def test_default_out_depends_on_the_family(tmp_path, monkeypatch, capsys, session_spirv_cache):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--family", "cm2-convert", "--count", "2"]) == 0
    assert (tmp_path / "generated" / "cm2-convert" / "manifest.json").exists()
    assert not (tmp_path / "generated" / "tensor-layout").exists()


# -- concurrency, temporaries, signals -----------------------------------------------------

def test_a_second_writer_to_the_same_out_is_refused(tmp_path, capsys, session_spirv_cache):
    out = tmp_path / "out"
    holder = subprocess.Popen(  # another process writing `out`, as a concurrent generate would
        [sys.executable, "-c", "import sys, time\nfrom ctsgen.pack.lock import out_lock\n"
         f"with out_lock({str(out)!r}):\n    print('held', flush=True)\n    sys.stdin.read()"],
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        line = fails_with(capsys, ["generate", "--count", "3", "--out", str(out)])
    finally:
        holder.communicate("")
    assert "another ctsgen" in line
    assert not out.exists()
    assert generate(out, count=3) == 0  # the lock is released
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "the lock file is removed"


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path, session_spirv_cache):
    out = tmp_path / "out"
    stale = tmp_path / f".out.tmp-{_dead_pid()}-abc"
    (stale / "cases").mkdir(parents=True)
    (stale / "cases" / "big.npy").write_bytes(b"\0" * 1000)
    old = tmp_path / f".out.old-{_dead_pid()}"
    old.mkdir()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        mine = tmp_path / f".out.tmp-{live.pid}-xyz"
        mine.mkdir()
        assert generate(out, count=3) == 0
        assert not stale.exists() and not old.exists()
        assert mine.exists(), "a live process's temporary is not touched"
    finally:
        live.kill()
        live.wait()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_generating_ends_with_one_line(tmp_path, sig, spirv_cache_dir):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO), "CTSGEN_CACHE_DIR": str(spirv_cache_dir)}
    p = subprocess.Popen([sys.executable, "-m", "ctsgen", "generate", "--count", "400", "--out", str(out)],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         # as from a terminal: a CI runner's background job inherits SIGINT ignored,
                         # and Python then installs no KeyboardInterrupt handler
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not any(x.name.startswith(".out.tmp-") for x in tmp_path.iterdir()):
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.05)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.strip() and "[" not in ln]
    assert "Traceback" not in err
    assert lines == ["ctsgen: interrupted; nothing was written to " + str(out)], err
    assert p.returncode == 128 + sig
    assert sorted(x.name for x in tmp_path.iterdir()) == [], "no temporary left behind"


def test_pack_directories_follow_the_umask(tmp_path, session_spirv_cache):
    old = os.umask(0o022)
    try:
        assert generate(tmp_path / "out", count=2) == 0
    finally:
        os.umask(old)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755


# -- results files -----------------------------------------------------------------

def test_results_refuses_a_file_that_is_not_a_results_file(pack, capsys):
    manifest = pack / "manifest.json"
    before = manifest.read_bytes()
    for extra in ([], ["--resume"]):
        line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(manifest), *extra])
        assert "not a ctsgen results file" in line
        assert manifest.read_bytes() == before


def test_resume_refuses_a_results_file_that_is_not_utf8(pack, tmp_path, capsys):
    bad = tmp_path / "r.jsonl"
    bad.write_bytes(b"\xff\xfe\x00garbage\x80\n")
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(bad), "--resume"])
    assert str(bad) in line
    assert bad.read_bytes() == b"\xff\xfe\x00garbage\x80\n"


def test_a_crashing_run_keeps_the_earlier_results(pack, monkeypatch):
    import ctsgen.cli.run as run_mod  # ctsgen run runs a pack through run_with_retries, bound there

    assert main(["run", str(pack), "--quiet"]) == 0
    results = pack / "results-reference.jsonl"
    before = results.read_bytes()
    real = run_mod.run_with_retries

    def crash(pack_, backend, fh, *a, **k):
        fh.out.write('{"name": "x", "status": "Pass", "detail": ""}\n')
        fh.out.flush()
        raise RuntimeError("injected crash")
    monkeypatch.setattr(run_mod, "run_with_retries", crash)
    with pytest.raises(RuntimeError):
        main(["run", str(pack), "--quiet"])
    assert results.read_bytes() == before
    monkeypatch.setattr(run_mod, "run_with_retries", real)
    assert main(["run", str(pack), "--quiet"]) == 0


def _array(pack: Path, suffix: str) -> Path:
    m = json.loads((pack / "manifest.json").read_text())
    entry = next(c for c in m["cases"] if ".load." in c["variant"])
    return pack / Path(entry["case"]).parent / f"output{suffix}"


@pytest.mark.parametrize("which", ["initial", "both-halved"])
def test_pack_arrays_of_the_wrong_size_are_refused(pack, capsys, which):
    assert main(["run", str(pack), "--quiet"]) == 0
    before = (pack / "results-reference.jsonl").read_bytes()
    paths = [_array(pack, ".initial.npy")] + ([_array(pack, ".expected.npy")] if which == "both-halved" else [])
    size = np.load(paths[0]).size
    for path in paths:
        arr = np.load(path).reshape(-1)
        np.save(path, arr[: arr.size // 2])
    line = fails_with(capsys, ["run", str(pack), "--quiet"])
    assert str(paths[0]) in line and f"{size} elements" in line
    assert (pack / "results-reference.jsonl").read_bytes() == before


def test_random_bytes_npy_is_not_called_pickled_data(pack, capsys):
    path = _array(pack, ".initial.npy")
    path.write_bytes(os.urandom(300))
    line = fails_with(capsys, ["run", str(pack), "--quiet"])
    assert "pickle" not in line and str(path) in line and "not a .npy array" in line


# -- fuzz database, bench output ------------------------------------------------------------

def test_fuzz_database_that_cannot_be_written_is_refused_before_fuzzing(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    line = fails_with(capsys, ["fuzz", "--max-examples", "5", "--database", str(blocker / "db")])
    assert str(blocker / "db") in line and "--database" in line


def test_fuzz_repro_dir_that_cannot_be_written_is_refused_before_fuzzing(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    line = fails_with(capsys, ["fuzz", "--max-examples", "5", "--database", "none",
                               "--repro-dir", str(blocker / "r")])
    assert "--repro-dir" in line


def test_bench_mutation_defaults_do_not_touch_tracked_docs():
    from ctsgen.cli import build_parser

    args = build_parser().parse_args(["bench", "mutation"])
    for path in (args.out, args.plot):
        assert Path(path).parts[0] == ".ctsgen", path


def test_resume_continues_an_interrupted_run_from_its_partial_results(pack, monkeypatch, capsys):
    import ctsgen.cli.run as run_mod  # ctsgen run runs a pack through run_with_retries, bound there

    first = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    real = run_mod.run_with_retries

    def interrupted(pack_, backend, fh, *a, **k):
        fh.out.write(json.dumps({"name": first, "status": "Pass", "detail": ""}) + "\n")
        fh.out.flush()
        raise KeyboardInterrupt
    monkeypatch.setattr(run_mod, "run_with_retries", interrupted)
    with pytest.raises(SystemExit) as e:
        main(["run", str(pack), "--quiet"])
    assert e.value.code == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ctsgen: interrupted;") and "--resume" in err[0]
    partial = pack / "results-reference.jsonl.partial"
    assert partial.exists() and not (pack / "results-reference.jsonl").exists()
    monkeypatch.setattr(run_mod, "run_with_retries", real)
    assert main(["run", str(pack), "--quiet", "--resume"]) == 0
    header, *records = (pack / "results-reference.jsonl").read_text().splitlines()
    assert json.loads(header)["format"] == "ctsgen-results"
    names = [json.loads(ln)["name"] for ln in records]
    assert len(names) == len(set(names)) == COUNT and names[0] == first
    assert not partial.exists()


def test_a_pack_drawn_by_another_hypothesis_is_not_kept_as_up_to_date(pristine, tmp_path, capsys,
                                                                        session_spirv_cache):
    """Hypothesis draws the cases: another version draws another pack from the same seed."""
    out = tmp_path / "out"
    shutil.copytree(pristine, out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["generator"]["hypothesis"] = "6.0.0"
    (out / "manifest.json").write_text(json.dumps(manifest))
    before = tree(out)
    line = fails_with(capsys, ["generate", "--count", str(COUNT), "--seed", "1", "--out", str(out)])
    assert "Hypothesis version '6.0.0'" in line and "--force" in line
    assert tree(out) == before
