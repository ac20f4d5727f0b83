"""docs/pack-format.md names every field a pack holds: each key of every family's manifest.json and
case.json, at any depth, appears in the document as code (a re-implementation reads the format
there, not in the code). Keys that are ids, not fields, are left out: variant ids (the manifest's
``variants``), buffer names (``files``, ``elements``), bindings (``bufferAlign``) and program node
names in ``state`` (``v3``, ``layout v3``, ``pointer v3``; coopvec-program's ``c3``, node 3's control word)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctsgen.cli import main
from ctsgen.families import families

DOC = Path(__file__).resolve().parents[1] / "docs" / "pack-format.md"
#: objects whose keys are ids: the manifest's variants, a case's files and elements, bufferAlign's bindings
ID_KEYED = ("manifest.variants", "case.files", "case.elements", ".bufferAlign")
#: program node names in a case's state
NODE_ID = re.compile(r"^(?:(?:layout|pointer) )?v\d+$|^c\d+$")  # vN: a program node; cN: its control word


def doc_names(text: str) -> set[str]:
    """Every word written as code in ``text``: in `spans` and in fenced blocks."""
    fenced = re.findall(r"```.*?```", text, flags=re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return {word for code in fenced + spans for word in re.split(r"[^A-Za-z0-9_]+", code) if word}


def field_paths(obj: Any, path: str, out: dict[str, set[str]]) -> dict[str, set[str]]:
    """``out``: each field name in ``obj`` -> the paths it was met at."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if path.endswith(ID_KEYED) or NODE_ID.match(key):
                field_paths(value, f"{path}.*", out)
                continue
            out.setdefault(key, set()).add(path)
            field_paths(value, f"{path}.{key}", out)
    elif isinstance(obj, list):
        for value in obj:
            field_paths(value, f"{path}[]", out)
    return out


def undocumented(pack: Path, names: set[str]) -> dict[str, list[str]]:
    manifest = json.loads((pack / "manifest.json").read_text())
    found = field_paths(manifest, "manifest", {})
    for entry in manifest["cases"]:
        field_paths(json.loads((pack / entry["case"]).read_text()), "case", found)
    return {key: sorted(paths) for key, paths in found.items() if key not in names}


@pytest.fixture(scope="module")
def packs(tmp_path_factory, spirv_cache_dir) -> dict[str, Path]:
    """A small pack of every family (the reference profile runs them all), hazardous groups included."""
    root = tmp_path_factory.mktemp("every-family")
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
        for family in sorted(families()):
            out[family] = root / family
            assert main(["generate", "--family", family, "--count", "8", "--seed", "3", "--profile", "reference",
                         "--include-hazardous", "--hazardous-count", "2", "--out", str(out[family])]) == 0
    return out


@pytest.mark.slow
def test_every_field_of_every_familys_pack_is_named_in_the_format_doc(packs: dict[str, Path]) -> None:
    names = doc_names(DOC.read_text())
    missing = {family: gap for family, pack in packs.items() if (gap := undocumented(pack, names))}
    assert not missing, f"fields of a pack that docs/pack-format.md does not name -> document them: {missing}"


def test_the_check_finds_a_field_the_doc_does_not_name(tmp_path: Path) -> None:
    (tmp_path / "cases" / "c").mkdir(parents=True)
    manifest = {"format": "ctsgen-pack", "variants": {"some.variant.id": {"signature": {"newWord": 1}}},
                "cases": [{"name": "c", "case": "cases/c/case.json"}]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    case = {"parameters": {"nodes": [{"mystery": 2}]}, "files": {"output.initial": "x"},
            "state": {"layout v3": {"LDim": 1}, "v4": {"s": 1}}}
    (tmp_path / "cases" / "c" / "case.json").write_text(json.dumps(case))
    names = doc_names(DOC.read_text())
    assert undocumented(tmp_path, names) == {"newWord": ["manifest.variants.*.signature"],
                                             "mystery": ["case.parameters.nodes[]"]}
    assert {"output", "initial", "some", "v3", "v4"} & set(undocumented(tmp_path, set())) == set()
