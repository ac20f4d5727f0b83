"""``--force`` replaces only what ctsgen wrote for that output; anything else makes it refuse.

Each test here failed before its fix: ``generate --force`` and ``repro --force`` deleted a
user's NOTES.md and the results of earlier runs, a repro into its own source pack turned it
into a one-case pack, and ``generate --out / --force`` ended in a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctsgen.cli import main
from one_line_errors import fails_with

PACK_COUNT = 4


def _names(pack: Path) -> list[str]:
    return [c["name"] for c in json.loads((pack / "manifest.json").read_text())["cases"]]


@pytest.mark.parametrize("mine", ["NOTES.md", "results-reference.jsonl", "cases/extra.txt"])
def test_generate_force_refuses_a_pack_holding_a_file_ctsgen_did_not_write(pack: Path, capsys, mine: str) -> None:
    (pack / mine).write_text("mine")
    line = fails_with(capsys, ["generate", "--count", "2", "--seed", "5", "--out", str(pack), "--force"])
    assert str(pack / mine) in line
    assert (pack / mine).read_text() == "mine" and len(_names(pack)) == PACK_COUNT


def test_generate_force_still_replaces_a_pack_of_only_its_own_files(pack: Path) -> None:
    assert main(["generate", "--count", "2", "--seed", "5", "--out", str(pack), "--force"]) == 0
    assert len(_names(pack)) == 2


def test_repro_force_replaces_its_own_repro_but_not_a_users_file(pack: Path, tmp_path: Path, capsys) -> None:
    case = _names(pack)[0]
    out = tmp_path / "repro"
    assert main(["repro", str(pack), case, "--out", str(out)]) == 0
    assert main(["repro", str(pack), case, "--out", str(out), "--force"]) == 0  # its own files only
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["extra_files"] == ["REPORT.md", "repro.comp", "repro.spv"]
    (out / "NOTES.md").write_text("mine")
    line = fails_with(capsys, ["repro", str(pack), case, "--out", str(out), "--force"])
    assert str(out / "NOTES.md") in line and (out / "NOTES.md").read_text() == "mine"


@pytest.mark.parametrize("where", [".", "cases"])
def test_repro_into_its_own_source_pack_is_refused(pack: Path, capsys, where: str) -> None:
    before = _names(pack)
    line = fails_with(capsys, ["repro", str(pack), before[0], "--out", str(pack / where), "--force"])
    assert "source pack" in line
    assert _names(pack) == before


def test_generate_into_the_filesystem_root_is_one_line(capsys) -> None:
    line = fails_with(capsys, ["generate", "--count", "1", "--out", "/", "--force"])
    assert "root" in line
