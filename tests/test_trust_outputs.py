"""``ctsgen run`` writes only the files it owns, all of them or none, checked before any case runs.

Each test here failed before its fix: a baseline that was also an output was replaced by the
run it fed (the next run red); a user's ``mine.txt`` and ``mine/results.csv`` beside
``--results mine.jsonl``, and a ``--csv-dir`` folder's files, were overwritten; ``out/n.a.jsonl``
and ``out/n.b.jsonl`` shared one CSV folder; a reader of stdout that went away left results.csv
judging the previous run; ``--results .hidden.jsonl`` ended in a traceback; ``--results noext``
and ``--csv-dir FILE`` failed only after the whole run; ``--device 99`` was ignored on the
reference backend.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

import ctsgen.results.deqp_csv

from ctsgen.cli import main
from ctsgen.results.deqp_csv import read_rows
from one_line_errors import fails_with, held_by_another_process

PACK_COUNT = 4


def run(pack: Path, *extra: str) -> int:
    return main(["run", str(pack), "--quiet", *extra])


def first_case(pack: Path) -> str:
    return json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]


def statuses(csv: Path) -> dict[str, str]:
    return {name: status.value for _, name, status in read_rows(csv)}


def refused_before_any_case(pack: Path, capsys, argv: list[str]) -> str:
    """``argv`` is refused in one line, exit 2, with no results file written: no case ran."""
    line = fails_with(capsys, ["run", str(pack), "--quiet", *argv])
    assert not list(pack.glob("results-*.jsonl*")), "a case ran before the refusal"
    return line


# -- item 1: a baseline is never replaced by the run it feeds -------------------------------

def test_a_users_baseline_in_the_csv_folder_is_kept(pack: Path, tmp_path: Path, capsys) -> None:
    ci = tmp_path / "ci"
    ci.mkdir()
    baseline = ci / "failures.csv"
    baseline.write_text(f"{first_case(pack)},Fail\n")
    line = refused_before_any_case(pack, capsys, ["--baseline", str(baseline), "--csv-dir", str(ci)])
    assert str(baseline) in line and "--baseline" in line
    assert baseline.read_text() == f"{first_case(pack)},Fail\n"


def test_the_default_failures_csv_given_as_baseline_is_kept(pack: Path, capsys) -> None:
    assert run(pack) == 0
    own = pack / "results-reference" / "failures.csv"
    own.write_text(f"{first_case(pack)},Fail\n")  # an edit: now the user's file, and the baseline
    jsonl = (pack / "results-reference.jsonl").read_bytes()
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--baseline", str(own)])
    assert "--baseline" in line and "failures.csv" in line
    assert own.read_text() == f"{first_case(pack)},Fail\n"
    assert (pack / "results-reference.jsonl").read_bytes() == jsonl  # no case ran


def test_ctsgens_own_failures_csv_as_baseline_of_the_run_that_writes_it_is_refused(pack: Path, capsys) -> None:
    assert run(pack) == 0
    own = pack / "results-reference" / "failures.csv"
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--baseline", str(own)])
    assert "is also the failures.csv this run writes" in line and "docs/ci.md" in line


def test_deqp_runners_loop_last_run_as_baseline_new_run_elsewhere_works(pack: Path, tmp_path: Path) -> None:
    last, new = tmp_path / "last", tmp_path / "new"
    last.mkdir()
    (last / "failures.csv").write_text(f"{first_case(pack)},Fail\n")
    assert run(pack, "--baseline", str(last / "failures.csv"), "--csv-dir", str(new)) == 0
    assert (last / "failures.csv").read_text() == f"{first_case(pack)},Fail\n"
    assert statuses(new / "failures.csv") == {first_case(pack): "UnexpectedPass"}


def test_the_csv_files_are_replaced_together_or_not_at_all(pack: Path, monkeypatch) -> None:
    assert run(pack) == 0
    folder = pack / "results-reference"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def stopped(rows):
        raise KeyboardInterrupt  # a Ctrl-C while the second file is formatted

    monkeypatch.setattr("ctsgen.results.deqp_csv.format_failures", stopped)
    baseline = pack.parent / "expected.csv"
    baseline.write_text(f"{first_case(pack)},Fail\n")
    with pytest.raises(SystemExit):
        run(pack, "--baseline", str(baseline))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # no temporaries either


# -- item 2: files beside the results are the user's -----------------------------------------

def test_a_users_txt_and_folder_beside_the_results_are_kept(pack: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "mine.txt").write_text("notes\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "results.csv").write_text("x\n")
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(tmp_path / "mine.jsonl")])
    assert "mine.txt" in line
    assert (tmp_path / "mine.txt").read_text() == "notes\n" and not (tmp_path / "mine.jsonl").exists()
    (tmp_path / "mine.txt").unlink()
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(tmp_path / "mine.jsonl")])
    assert str(tmp_path / "mine" / "results.csv") in line
    assert (tmp_path / "mine" / "results.csv").read_text() == "x\n" and not (tmp_path / "mine.jsonl").exists()


@pytest.mark.parametrize("name", ["results.csv", "failures.csv"])
def test_a_csv_dir_holding_a_users_file_is_refused(pack: Path, tmp_path: Path, capsys, name: str) -> None:
    user = tmp_path / "userdir"
    user.mkdir()
    (user / name).write_text("mine,Fail\n")
    line = refused_before_any_case(pack, capsys, ["--csv-dir", str(user)])
    assert str(user / name) in line and "--csv-dir" in line
    assert (user / name).read_text() == "mine,Fail\n"


def test_an_empty_csv_dir_and_ctsgens_own_files_are_written(pack: Path, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    assert run(pack, "--csv-dir", str(folder)) == 0
    assert run(pack, "--csv-dir", str(folder)) == 0  # its own files, replaced
    assert len(statuses(folder / "results.csv")) == PACK_COUNT
    (folder / "results.csv").write_text("edited\n")  # changed by the user: theirs now
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--csv-dir", str(folder)])
    assert "changed since" in line and (folder / "results.csv").read_text() == "edited\n"


def test_two_results_files_with_one_first_stem_keep_their_own_csv_folders(pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run(pack, "--results", str(out / "n.a.jsonl")) == 0
    assert run(pack, "--results", str(out / "n.b.jsonl"), "--include", first_case(pack)) == 0
    assert len(statuses(out / "n.a" / "results.csv")) == PACK_COUNT
    assert list(statuses(out / "n.b" / "results.csv")) == [first_case(pack)]


# -- item 10: every file in place before anything is printed -----------------------------

class ClosedPipe:
    """A stdout whose reader went away (``ctsgen run ... | head -1``)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.fd


def test_a_closed_stdout_leaves_the_csv_files_judging_this_run(pack: Path, tmp_path: Path, monkeypatch) -> None:
    assert run(pack) == 0
    baseline = tmp_path / "expected.csv"
    baseline.write_text(f"{first_case(pack)},Fail\n")
    fd = os.open(tmp_path / "stdout", os.O_WRONLY | os.O_CREAT)
    try:
        monkeypatch.setattr("sys.stdout", ClosedPipe(fd))
        with pytest.raises(SystemExit) as e:
            run(pack, "--baseline", str(baseline))
        monkeypatch.undo()
    finally:
        os.close(fd)
    assert e.value.code == 141
    assert statuses(pack / "results-reference" / "results.csv")[first_case(pack)] == "UnexpectedPass"
    assert statuses(pack / "results-reference" / "failures.csv") == {first_case(pack): "UnexpectedPass"}


# -- items 15 and 16: every output path checked before any case runs --------------------

def test_a_hidden_results_name_gets_its_csv_folder(pack: Path, tmp_path: Path) -> None:
    assert run(pack, "--results", str(tmp_path / ".hidden.jsonl")) == 0
    assert len(statuses(tmp_path / ".hidden" / "results.csv")) == PACK_COUNT


def test_a_results_name_without_an_extension_is_refused_before_any_case(pack: Path, tmp_path: Path,
                                                                         capsys) -> None:
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(tmp_path / "noext")])
    assert "extension" in line and not (tmp_path / "noext").exists()


def test_a_csv_dir_that_is_a_file_is_refused_before_any_case(pack: Path, tmp_path: Path, capsys) -> None:
    file = tmp_path / "FILE"
    file.write_text("mine\n")
    line = refused_before_any_case(pack, capsys, ["--csv-dir", str(file)])
    assert "not a folder" in line and file.read_text() == "mine\n"


# -- item 17: --device on a backend that cannot select one ---------------------------------

def test_device_on_the_reference_backend_is_refused(pack: Path, capsys) -> None:
    line = refused_before_any_case(pack, capsys, ["--device", "99"])
    assert "--device 99" in line and "reference" in line
    assert run(pack, "--device", "0") == 0  # its one device


# -- the hostile pass: probes that found something ------------------------------------------

def test_a_second_run_into_the_same_csv_folder_is_refused_at_once(pack: Path, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "ci"
    with held_by_another_process(folder, "--csv-dir"):
        line = refused_before_any_case(pack, capsys, ["--csv-dir", str(folder)])
        assert "another ctsgen process" in line and "--csv-dir" in line
    assert run(pack, "--csv-dir", str(folder)) == 0


def test_a_dangling_link_as_csv_dir_is_refused_before_any_case(pack: Path, tmp_path: Path, capsys) -> None:
    link = tmp_path / "ci"
    link.symlink_to(tmp_path / "gone")
    assert "not a folder" in refused_before_any_case(pack, capsys, ["--csv-dir", str(link)])


def test_a_results_csv_read_as_caselist_is_read_before_it_is_replaced(pack: Path) -> None:
    assert run(pack, "--include", first_case(pack)) == 0
    own = pack / "results-reference" / "results.csv"
    assert run(pack, "--caselist", str(own)) == 0
    assert list(statuses(own)) == [first_case(pack)]


def test_a_binary_file_where_the_cts_text_goes_is_kept(pack: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "r.txt").write_bytes(b"\xff\xfe\x00binary")
    line = fails_with(capsys, ["run", str(pack), "--quiet", "--results", str(tmp_path / "r.jsonl")])
    assert str(tmp_path / "r.txt") in line and (tmp_path / "r.txt").read_bytes() == b"\xff\xfe\x00binary"


def test_the_filesystem_root_as_csv_dir_is_refused_naming_the_option(pack: Path, capsys) -> None:
    line = refused_before_any_case(pack, capsys, ["--csv-dir", "/"])
    assert "filesystem root" in line and "--csv-dir ./" in line


def test_a_stop_signal_while_the_files_are_renamed_lands_after_them_all(pack: Path, tmp_path: Path,
                                                                        monkeypatch, capsys) -> None:
    assert run(pack) == 0
    baseline = tmp_path / "expected.csv"
    baseline.write_text(f"{first_case(pack)},Fail\n")
    real = ctsgen.results.deqp_csv.format_failures

    def sigterm_then_format(rows):  # SIGTERM after the results file is renamed, before the CSV files are
        os.kill(os.getpid(), signal.SIGTERM)
        return real(rows)

    monkeypatch.setattr(ctsgen.results.deqp_csv, "format_failures", sigterm_then_format)
    with pytest.raises(SystemExit) as e:
        run(pack, "--baseline", str(baseline))
    assert e.value.code == 128 + signal.SIGTERM
    assert "the run had ended" in capsys.readouterr().err
    assert statuses(pack / "results-reference" / "results.csv")[first_case(pack)] == "UnexpectedPass"
    assert statuses(pack / "results-reference" / "failures.csv") == {first_case(pack): "UnexpectedPass"}


def test_device_on_the_reference_backend_is_refused_by_fuzz_too(tmp_path: Path, capsys) -> None:
    line = fails_with(capsys, ["fuzz", "--backend", "reference", "--device", "1", "--time", "1",
                               "--database", "none", "--repro-dir", str(tmp_path / "r")])
    assert "--device 1" in line and not (tmp_path / "r").exists()
