"""Every fault is one line: bad input of any kind ends with exit 2 and
``ctsgen: error: <what is wrong> -> <what would make it right>`` on stderr, never a traceback,
and exit 1 stays reserved for test failures and regressions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.cli import main

REPO = Path(__file__).resolve().parents[1]
PACK_COUNT, PACK_SEED = 4, 3
PROFILE = REPO / "ctsgen" / "device" / "profiles" / "nvidia-h100-driver580.txt"


def one_error_line(capsys, argv: list[str]) -> str:
    """``argv`` must end with exit 2 and exactly one error line (and no traceback)."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    captured = capsys.readouterr()
    err = [ln for ln in captured.err.replace("\r", "\n").splitlines()
           if ln.strip() and not ln.startswith(("drawing cells [", "writing cases [", "running ["))]
    assert code == 2, (argv, code, captured.err)
    assert len(err) == 1 and err[0].startswith("ctsgen: error: ") and " -> " in err[0], (argv, err)
    assert "Traceback" not in captured.err + captured.out
    return err[0]


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A plain file: any path below it can be neither read nor written (root ignores modes)."""
    f = tmp_path / "a-file"
    f.write_text("x")
    return f


# -- report ------------------------------------------------------------------------

@pytest.mark.parametrize("content", [None, b"{not json\n", b"\x00\xff\xfe\x80binary\x00" * 4,
                                     b"name,NotAStatus,detail\n"])
def test_report_with_a_bad_file_exits_2(tmp_path, pack, capsys, content):
    assert main(["run", str(pack), "--quiet"]) == 0
    good = pack / "results-reference.jsonl"
    bad = tmp_path / "bad.jsonl"
    if content is not None:
        bad.write_bytes(content)
    line = one_error_line(capsys, ["report", str(good), str(bad)])
    assert str(bad) in line
    line = one_error_line(capsys, ["report", str(bad), str(good)])


# -- outputs that cannot be written ---------------------------------------------------

def test_unwritable_outputs(pack, blocker, capsys, session_spirv_cache):
    one_error_line(capsys, ["generate", "--count", "2", "--out", str(blocker / "out")])
    one_error_line(capsys, ["run", str(pack), "--quiet", "--results", str(blocker / "r.jsonl")])
    one_error_line(capsys, ["coverage", str(pack), "--plot", str(blocker / "c.png")])
    case = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    one_error_line(capsys, ["repro", str(pack), case, "--out", str(blocker / "r")])


# -- numbers out of range ----------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["generate", "--count", "-5"], ["generate", "--count", "0"], ["generate", "--hazardous-count", "-1"],
    ["fuzz", "--max-examples", "0"], ["run", "--batch-size", "0"], ["fuzz", "--workers", "0"],
    ["fuzz", "--time", "-5"], ["fuzz", "--time", "nan"], ["run", "--timeout", "0"], ["fuzz", "--max-batch", "0"],
    ["bench", "mutation", "--seeds", "0"], ["generate", "--count", "lots"], ["run", "--show-failures", "-1"],
])
def test_numbers_out_of_range(capsys, argv):
    line = one_error_line(capsys, argv)
    assert argv[-2] in line


# -- files given as input ------------------------------------------------------------------------

def test_fuzz_database_on_an_unreachable_redis(capsys):
    one_error_line(capsys, ["fuzz", "--max-examples", "3", "--database", "redis://127.0.0.1:1"])


@pytest.mark.parametrize("kind", ["truncated", "binary", "granularity-0", "missing", "empty"])
def test_bad_profiles(tmp_path, capsys, kind):
    text = PROFILE.read_text()
    path = tmp_path / "profile.txt"
    if kind == "truncated":
        path.write_text(text[: len(text) // 2].rsplit("\n", 1)[0] + "\n")
    elif kind == "binary":
        path.write_bytes(os.urandom(2000))
    elif kind == "empty":
        path.write_text("")
    elif kind == "granularity-0":
        path.write_text(text.replace("'MGranularity': 16", "'MGranularity': 0", 1))
    line = one_error_line(capsys, ["generate", "--count", "2", "--out", str(tmp_path / "o"),
                                   "--profile", str(path)])
    assert str(path) in line
    assert not (tmp_path / "o").exists()


def test_repro_with_a_missing_results_file(pack, tmp_path, capsys):
    case = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    line = one_error_line(capsys, ["repro", str(pack), case, "--out", str(tmp_path / "r"),
                                   "--results", str(tmp_path / "nope.jsonl")])
    assert "nope.jsonl" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("backend", ["no_such_module_xyz:Backend", "nonsense", "os:NoSuchClass"])
def test_backend_loading_errors_exit_2(pack, capsys, backend):
    line = one_error_line(capsys, ["run", str(pack), "--quiet", "--backend", backend])
    assert backend in line


def test_coverage_into_a_closed_pipe_ends_quietly(pristine):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    p = subprocess.run(f"{sys.executable} -m ctsgen coverage {pristine} | head -1", shell=True,
                       capture_output=True, text=True, env=env)
    assert p.stdout.count("\n") == 1
    assert p.stderr == ""


SHORT_BACKEND = textwrap.dedent('''
    from ctsgen.backends.reference import ReferenceBackend

    class ShortBackend(ReferenceBackend):
        name = "short-buffers"

        def run(self, dispatch, timeout_s):
            out = super().run(dispatch, timeout_s)
            return [out[0]] + [b[: b.size // 2] for b in out[1:]]
''')


def test_a_backend_returning_short_buffers_is_an_error_naming_it(pack, tmp_path, monkeypatch, capsys):
    (tmp_path / "short_backend_mod.py").write_text(SHORT_BACKEND)
    monkeypatch.syspath_prepend(str(tmp_path))
    line = one_error_line(capsys, ["run", str(pack), "--quiet", "--isolation", "none",
                                   "--backend", "short_backend_mod:ShortBackend"])
    assert "short-buffers" in line and "elements for buffer" in line and "given" in line


# -- the CLI, fuzzed -------------------------------------------------------------------------

BAD_NUMBERS = st.sampled_from(["-1", "0", "-0.5", "x", "", "1e400", "nan", "--", "0x10"])
NUMERIC = {"generate": ["--count", "--hazardous-count", "--cases-per-variant", "--jobs"], "run": ["--batch-size", "--timeout", "--show-failures"],
           "fuzz": ["--max-examples", "--time", "--max-batch", "--min-batch", "--workers", "--timeout",
                    "--shrink-time", "--device"],
           "bench mutation": ["--seeds", "--max-examples", "--reference-budget"]}


@st.composite
def bad_invocations(draw: st.DrawFn, paths: dict[str, Path]) -> list[str]:
    """A command with one bad argument: a number out of range or not a number, an unknown choice or
    option, or a path that is missing, a directory, a plain file where a directory is needed, or binary."""
    kind = draw(st.sampled_from(["number", "option", "path"]))
    if kind == "number":
        command = draw(st.sampled_from(sorted(NUMERIC)))
        flag = draw(st.sampled_from(NUMERIC[command]))
        value = draw(BAD_NUMBERS)
        if flag in ("--hazardous-count", "--show-failures", "--shrink-time", "--reference-budget",
                    "--device") and value in ("0",):
            value = "-1"
        return [*command.split(), flag, value] if value != "--" else [*command.split(), flag]
    if kind == "option":
        return draw(st.sampled_from([
            ["generate", "--family", "no-such-family", "--count", "2"], ["fuzz", "--family", "nope"],
            ["run", "--isolation", "sometimes"], ["frobnicate"], ["generate", "--no-such-flag"],
            ["fuzz", "--expect-deviation", "no-such-mutant", "--max-examples", "1", "--database", "none"],
            ["run", "--expect-deviation", "no-such-mutant", "--quiet"],
            ["bench", "mutation", "--mutant", "no-such-mutant"], ["bench"], [],
            ["fuzz", "--workers", "2", "--devices", "a,b"], ["generate", "--count", "2", "--out", ""],
            ["coverage", "--plot", "."],
        ]))
    bad = draw(st.sampled_from(["missing", "dir", "under-file", "binary"]))
    path = str(paths[bad])
    return draw(st.sampled_from([
        ["run", path, "--quiet"], ["coverage", path], ["report", path, path], ["repro", path, "x", "--out",
                                                                              str(paths["missing"])],
        ["generate", "--count", "2", "--profile", path, "--out", str(paths["missing"])],
    ]))


def test_the_cli_fuzzed_with_bad_arguments(tmp_path_factory, capsys):
    root = tmp_path_factory.mktemp("fuzzcli")
    (root / "a-dir").mkdir()
    (root / "a-file").write_text("x")
    (root / "binary").write_bytes(bytes(range(256)) * 8)
    paths = {"missing": root / "missing", "dir": root / "a-dir", "under-file": root / "a-file" / "x",
             "binary": root / "binary"}

    @settings(max_examples=60, deadline=None, database=None)
    @given(bad_invocations(paths))
    def check(argv: list[str]) -> None:
        one_error_line(capsys, argv)
        assert not paths["missing"].exists()

    cwd = os.getcwd()
    os.chdir(root)
    try:
        check()
    finally:
        os.chdir(cwd)
