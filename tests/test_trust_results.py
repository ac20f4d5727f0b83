"""Results that say what they judged, runs that cannot lose or borrow each other's verdicts,
and ``ctsgen report`` that passes only what it should.

Each test here failed before its fix: a results file had no header, so ``--resume`` took
another backend's or another pack's verdicts; ``report`` passed new failures, empty files and
files of different packs; two runs on one results path interfered; and a closed stdout left
the ``.txt`` disagreeing with the ``.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import hypothesis
import pytest

import ctsgen
from ctsgen.cli import main
from ctsgen.results.results_file import load_results
from one_line_errors import held_by_another_process

REPO = Path(__file__).resolve().parents[1]
PACK_COUNT = 6


def fails_with(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 2) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == code
    err = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if ln.startswith("ctsgen")]
    assert len(err) == 1 and err[0].startswith("ctsgen: error: ") and " -> " in err[0], err
    return err[0]


def run(pack: Path, *extra: str) -> int:
    return main(["run", str(pack), "--quiet", *extra])


def lines(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines()]


# -- the header -----------------------------------------------------------------------

def test_every_results_file_begins_with_a_header_saying_what_it_judged(pack: Path) -> None:
    assert run(pack, "--expect-deviation", "repeat-c-remainder") == 0
    header, *records = lines(pack / "results-reference.jsonl")
    assert header == {
        "format": "ctsgen-results", "format_version": 1,
        "pack": {"manifest_sha256": hashlib.sha256((pack / "manifest.json").read_bytes()).hexdigest()},
        "backend": "reference",
        "device": {"name": "ctsgen reference backend", "driver_version": None, "driver_version_name": None},
        "generator": {"ctsgen": ctsgen.__version__, "hypothesis": hypothesis.__version__},
        "options": {"expect_deviation": ["repeat-c-remainder"], "numerics": None, "explain_deviation": []}}
    assert len(records) == PACK_COUNT and all("name" in r for r in records)
    txt = load_results(pack / "results-reference.txt")  # the CTS-style text carries it too
    assert txt.header == header and len(txt.verdicts) == PACK_COUNT


@pytest.mark.parametrize("change", [["--backend", "mutant:repeat-c-remainder"],
                                    ["--expect-deviation", "repeat-c-remainder"]])
def test_resume_refuses_a_file_whose_header_differs(pack: Path, capsys, change: list[str]) -> None:
    assert run(pack) == 0
    before = (pack / "results-reference.jsonl").read_bytes(), (pack / "results-reference.txt").read_bytes()
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--resume", *change,
                               "--results", str(pack / "results-reference.jsonl")])
    assert "judged something else" in line and ("backend" in line or "expect_deviation" in line)
    assert ((pack / "results-reference.jsonl").read_bytes(), (pack / "results-reference.txt").read_bytes()) == before


def test_resume_refuses_another_packs_results(pack: Path, tmp_path: Path, capsys) -> None:
    other = tmp_path / "other"
    assert main(["generate", "--count", "3", "--seed", "9", "--out", str(other)]) == 0
    assert run(other) == 0
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--resume",
                               "--results", str(other / "results-reference.jsonl")])
    assert "pack.manifest_sha256" in line


def test_resume_refuses_a_results_file_without_a_header(pack: Path, capsys) -> None:
    assert run(pack) == 0
    path = pack / "results-reference.jsonl"
    path.write_text("".join(ln + "\n" for ln in path.read_text().splitlines()[1:]))
    assert "no header" in fails_with(capsys, ["run", str(pack), "--quiet", "--resume"])


# -- one run per results path, and files that always agree ------------------------------

def test_a_second_run_on_the_same_results_path_is_refused_at_once(pack: Path, capsys) -> None:
    results = pack / "results-reference.jsonl"
    with held_by_another_process(results, "--results"):
        line = fails_with(capsys, ["run", str(pack), "--quiet"])
        assert "another ctsgen process" in line and "--results" in line
    assert not results.exists()
    assert run(pack) == 0  # the lock went with its holder


def test_a_closed_stdout_leaves_both_results_files_complete_and_agreeing(pack: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # every print of the run meets a closed pipe
    try:
        p = subprocess.run([sys.executable, "-m", "ctsgen", "run", str(pack), "--quiet"], cwd=REPO, stdout=write,
                           stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    assert "Traceback" not in p.stderr
    jsonl, txt = load_results(pack / "results-reference.jsonl"), load_results(pack / "results-reference.txt")
    assert len(jsonl.verdicts) == PACK_COUNT and txt == jsonl
    assert not list(pack.glob(".results-reference*"))  # no temporaries, no lock left


# -- ctsgen report ---------------------------------------------------------------------

def _with_verdict(src: Path, dst: Path, name: str | None, status: str, drop: int = 0) -> Path:
    """A copy of results ``src`` with case ``name`` given ``status`` and the last ``drop`` cases left out."""
    header, *records = lines(src)
    records = records[:len(records) - drop]
    for r in records:
        if r["name"] == name:
            r["status"] = status
    dst.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    return dst


def test_report_counts_a_new_failing_case_as_a_regression(pack: Path, tmp_path: Path, capsys) -> None:
    assert run(pack) == 0
    full = pack / "results-reference.jsonl"
    last = lines(full)[-1]["name"]
    baseline = _with_verdict(full, tmp_path / "a.jsonl", None, "Pass", drop=1)
    later = _with_verdict(full, tmp_path / "b.jsonl", last, "Fail")
    assert main(["report", str(baseline), str(later)]) == 1
    out = capsys.readouterr().out
    assert "1 regressions" in out and f"{last}: (not in A) -> Fail" in out
    assert out.count("backend reference, device ctsgen reference backend") == 2  # both headers shown
    assert main(["report", str(later), str(later)]) == 0


@pytest.mark.parametrize("content", ["", "header only"])
def test_report_refuses_a_file_without_cases(pack: Path, tmp_path: Path, capsys, content: str) -> None:
    assert run(pack) == 0
    empty = tmp_path / "empty.jsonl"
    empty.write_text("" if not content else (pack / "results-reference.jsonl").read_text().splitlines()[0] + "\n")
    assert "no case" in fails_with(capsys, ["report", str(empty), str(pack / "results-reference.jsonl")])
    assert "no case" in fails_with(capsys, ["report", str(pack / "results-reference.jsonl"), str(empty)])


def test_report_refuses_results_of_different_packs(pack: Path, tmp_path: Path, capsys) -> None:
    other = tmp_path / "other"
    assert main(["generate", "--count", "3", "--seed", "9", "--out", str(other)]) == 0
    assert run(pack) == 0 and run(other) == 0
    a, b = pack / "results-reference.jsonl", other / "results-reference.jsonl"
    assert "different packs" in fails_with(capsys, ["report", str(a), str(b)])
    # without headers (CTS text of an older ctsgen): no case in common is the same refusal
    for src in (a, b):
        src.with_suffix(".old.txt").write_text("".join(ln + "\n" for ln in src.with_suffix(".txt").read_text()
                                                       .splitlines() if not ln.startswith("#")))
    assert "no case in common" in fails_with(capsys, ["report", str(a.with_suffix(".old.txt")),
                                                      str(b.with_suffix(".old.txt"))])


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_run_refuses_a_results_path_that_is_no_regular_file(pack: Path, tmp_path: Path, capsys, kind: str) -> None:
    """A run renames its results over the path: over /dev/null (as root) that replaced the device."""
    target = tmp_path / "r.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/null")
    assert "device, pipe or socket" in fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(target)])
    assert target.is_fifo() if kind == "fifo" else target.is_symlink()
    assert Path("/dev/null").is_char_device()


@pytest.mark.parametrize("bad", ['{"name": 5, "status": "Pass"}', '{"name": "x", "status": "Bogus"}'])
def test_a_record_that_is_no_case_verdict_is_one_line_in_report_and_resume(pack: Path, tmp_path: Path, capsys,
                                                                           bad: str) -> None:
    """A name that is no string ended report and --resume in a TypeError traceback; a bad record
    in the middle was silently dropped by --resume, as if it were a torn last line."""
    assert run(pack) == 0
    path = tmp_path / "r.jsonl"
    header, first, *rest = (pack / "results-reference.jsonl").read_text().splitlines()
    path.write_text("\n".join([header, first, bad, *rest]) + "\n")
    before = path.read_bytes()
    assert ":3: not a ctsgen result record" in fails_with(capsys, ["report", str(path), str(pack / "results-reference.jsonl")])
    fails_with(capsys, ["run", str(pack), "--quiet", "--resume", "--results", str(path)])
    assert path.read_bytes() == before
