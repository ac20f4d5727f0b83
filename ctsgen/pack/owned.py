"""What ``--force`` may replace: the files ctsgen wrote for an output, and nothing else.

A pack's manifest lists every file ``write_pack`` put there: ``manifest.json``, each
variant's ``glsl`` and ``spirv``, each case's ``case.json`` and the arrays its ``files``
names, and ``extra_files`` (a repro's REPORT.md, repro.comp, ...). Anything else in the
directory (a user's NOTES.md, the results of earlier runs) belongs to the user: ``--force``
refuses, naming it, rather than delete it with the old pack. The lock and the temporaries a
writer keeps beside the directory (:mod:`ctsgen.pack.lock`) are not inside it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ctsgen.pack import FORMAT

#: What a repro wrote beside its one-case pack before the manifest listed ``extra_files``.
_REPRO_EXTRAS = ("REPORT.md", "repro.comp", "repro.spv", "debug.comp")


def _manifest(root: Path) -> dict[str, Any] | None:
    try:
        m = json.loads((root / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) and m.get("format") == FORMAT else None


def is_ctsgen_pack(path: Path) -> bool:
    """A directory whose manifest.json says it is a ctsgen pack."""
    return _manifest(Path(path)) is not None


def _strings(obj: object) -> list[str]:
    return [x for x in (obj if isinstance(obj, (list, tuple)) else ()) if isinstance(x, str)]


def owned_files(root: Path) -> set[str]:
    """Paths, relative to ``root`` (with '/'), of the files the manifest of the pack at ``root`` lists
    as written by ctsgen (empty when it is no ctsgen pack)."""
    m = _manifest(root)
    if m is None:
        return set()
    owned = {"manifest.json", *_strings(m.get("extra_files"))}
    if "repro_of" in m:
        owned.update(_REPRO_EXTRAS)
    for rec in (m.get("variants") or {}).values() if isinstance(m.get("variants"), dict) else ():
        if isinstance(rec, dict):
            owned.update(_strings([rec.get("glsl"), rec.get("spirv")]))
    for entry in m.get("cases") or () if isinstance(m.get("cases"), list) else ():
        rel = entry.get("case") if isinstance(entry, dict) else None
        if not isinstance(rel, str):
            continue
        owned.add(rel)
        try:
            files = json.loads((root / rel).read_text()).get("files", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(files, dict):
            owned.update(_strings(list(files.values())))
    return {os.path.normpath(p) for p in owned}


def foreign_files(root: Path) -> list[str]:
    """Files under ``root`` that its manifest does not list (sorted; every file when it is no pack)."""
    owned = owned_files(root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if rel not in owned:
                found.append(rel)
    return found
