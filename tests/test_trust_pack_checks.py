"""Reading a pack checks that it is whole and consistent, in one line each.

Each test here failed before its fix: a manifest cut to fewer cases than its count ran with
exit 0 (a count that is no number, a negative workgroup size too), duplicate cases ran twice, a case path could point outside the pack, and an edited
case.json with an unknown compare rule or short param_words, or a buffer whose binding or dtype
is nonsense, ended in a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ctsgen.cli import main

PACK_COUNT = 5


def _edit_manifest(pack: Path, edit: Callable[[dict], None]) -> None:
    m = json.loads((pack / "manifest.json").read_text())
    edit(m)
    (pack / "manifest.json").write_text(json.dumps(m))


def _edit_first_case(pack: Path, edit: Callable[[dict], None]) -> None:
    path = pack / json.loads((pack / "manifest.json").read_text())["cases"][0]["case"]
    rec = json.loads(path.read_text())
    edit(rec)
    path.write_text(json.dumps(rec))


def _cut(m: dict) -> None:
    del m["cases"][2:]


def _duplicate(m: dict) -> None:
    m["cases"].append(dict(m["cases"][0]))
    m["count"] += 1


def _case_outside(m: dict) -> None:
    m["cases"][0]["case"] = "../../" + m["cases"][0]["case"]


def _spirv_outside(m: dict) -> None:
    rec = next(iter(m["variants"].values()))
    rec["spirv"] = "/etc/" + Path(rec["spirv"]).name


def _first_variant(m: dict) -> dict:
    return next(iter(m["variants"].values()))


def _bad_binding(m: dict) -> None:
    _first_variant(m)["buffers"][0]["binding"] = "a"


def _bad_dtype(m: dict) -> None:
    _first_variant(m)["buffers"][0]["dtype"] = "nonsense"


def _bad_workgroup(m: dict) -> None:
    _first_variant(m)["local_size_x"] = -5


def _count_not_a_number(m: dict) -> None:
    m["count"] = "many"


def _file_outside(rec: dict) -> None:
    key = next(iter(rec["files"]))
    rec["files"][key] = "/etc/passwd"


def _unknown_rule(rec: dict) -> None:
    rec["compare"] = {"rule": "approximately"}


def _short_words(rec: dict) -> None:
    rec["param_words"] = rec["param_words"][:3]


def _words_not_uint32(rec: dict) -> None:
    rec["param_words"][0] = -1


@pytest.mark.parametrize("edit, says", [
    (lambda p: _edit_manifest(p, _cut), "lists 2 cases, but its count says 5 "),
    (lambda p: _edit_manifest(p, _duplicate), "listed twice"),
    (lambda p: _edit_manifest(p, _case_outside), "not inside the pack"),
    (lambda p: _edit_manifest(p, _spirv_outside), "not inside the pack"),
    (lambda p: _edit_first_case(p, _file_outside), "not inside the pack"),
    (lambda p: _edit_first_case(p, _unknown_rule), "unknown compare rule 'approximately'"),
    (lambda p: _edit_first_case(p, _short_words), "3 param_words, but its variant's record holds 28"),
    (lambda p: _edit_first_case(p, _words_not_uint32), "uint32"),
    (lambda p: _edit_manifest(p, _bad_binding), "buffers[0] is not"),
    (lambda p: _edit_manifest(p, _bad_dtype), "buffers[0] is not"),
    (lambda p: _edit_manifest(p, _bad_workgroup), "local_size_x -5"),
    (lambda p: _edit_manifest(p, _count_not_a_number), "its count says 'many'"),
], ids=["cut", "duplicate", "case-outside", "spirv-outside", "file-outside", "unknown-rule", "short-words",
        "negative-word", "binding", "dtype", "workgroup", "count-type"])
def test_an_inconsistent_pack_is_refused_in_one_line(pack: Path, capsys, edit, says: str) -> None:
    edit(pack)
    with pytest.raises(SystemExit) as e:
        main(["run", str(pack), "--quiet"])
    assert e.value.code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("ctsgen: error: ") and " -> " in err[0], err
    assert says in err[0]
    assert not (pack / "results-reference.jsonl").exists()
