"""``generate --force`` checks what it replaces at the moment it replaces it, and deletes only its own files.

Ownership was checked before the new pack was compiled and written: a NOTES.md written, and a
``ctsgen run`` of the old pack, while ``generate --count 40 --out p6 --force`` worked were both
deleted with the old pack. These tests failed before the fix. The race is made deterministic by
doing the user's part inside the writer (its function is wrapped), not by sleeping.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ctsgen.pack.write
from ctsgen.cli import main
from one_line_errors import fails_with

PACK_COUNT = 4


def manifest(pack: Path) -> bytes:
    return (pack / "manifest.json").read_bytes()


def while_writing(monkeypatch: pytest.MonkeyPatch, act) -> None:
    """Do ``act()`` while ``generate`` writes its new pack (after its last check of the output)."""
    write = ctsgen.pack.write._write_into

    def writing(*args, **kwargs):
        act()
        return write(*args, **kwargs)

    monkeypatch.setattr(ctsgen.pack.write, "_write_into", writing)


def test_files_written_into_the_pack_while_generate_works_are_kept(pack: Path, monkeypatch, capsys) -> None:
    before = manifest(pack)

    def user() -> None:
        (pack / "NOTES.md").write_text("mine")
        assert main(["run", str(pack), "--quiet"]) == 0

    while_writing(monkeypatch, user)
    line = fails_with(capsys, ["generate", "--count", "2", "--seed", "5", "--out", str(pack), "--force"])
    assert "appeared while the new pack was made" in line and str(pack) in line
    assert (pack / "NOTES.md").read_text() == "mine"
    assert len(json.loads((pack / "results-reference.jsonl").read_text().splitlines()[-1])) > 0
    assert (pack / "results-reference" / "results.csv").exists()
    assert manifest(pack) == before  # the old pack, as it was
    assert not list(pack.parent.glob(f".{pack.name}.*"))  # no temporaries or old copies left


def test_a_file_that_appears_after_the_last_check_moves_into_the_new_pack(pack: Path, monkeypatch) -> None:
    check = ctsgen.pack.write.foreign_files

    def late(root: Path) -> list[str]:  # the check of the old pack moved aside passes, then a file lands in it
        found = check(root)
        if ".old-" in root.name:
            (root / "LATE.md").write_text("mine")
        return found

    monkeypatch.setattr(ctsgen.pack.write, "foreign_files", late)
    assert main(["generate", "--count", "2", "--seed", "5", "--out", str(pack), "--force"]) == 0
    assert len(json.loads(manifest(pack))["cases"]) == 2
    assert (pack / "LATE.md").read_text() == "mine"
    assert not list(pack.parent.glob(f".{pack.name}.*"))
