"""Whether an existing pack is the one a ``generate`` would write, so running it twice is safe.

``ctsgen generate`` with the same family, count, seed, profile, hazardous
group, cases per variant, ctsgen and Hypothesis versions and toolchain writes a byte-identical
pack; when the pack at ``--out`` was written from exactly those, it is kept
as it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import hypothesis

from ctsgen.version import __version__
from ctsgen.pack.generate import CASES_PER_VARIANT


def generator_record() -> dict[str, str]:
    """The manifest's ``generator``: what drew the pack. Hypothesis draws the cases, so another
    Hypothesis version draws other cases from the same seed."""
    return {"name": "ctsgen", "version": __version__, "hypothesis": hypothesis.__version__}


def request_differences(out: Path, *, family: str, count: int, seed: int, profile: str, hazardous: int,
                        toolchain: dict[str, Any], cases_per_variant: int = CASES_PER_VARIANT,
                        route: str = "glslang") -> str:
    """What differs between the pack at ``out`` and the one asked for ('' when nothing does)."""
    try:
        m = json.loads((Path(out) / "manifest.json").read_text())
        cases, drew = m.get("cases", []), m.get("generator", {})
        have = {
            "family": m.get("families"),
            # the --count asked; packs written before options.count: the cases drawn for it
            "count": m.get("options", {}).get("count", sum(1 for c in cases if c.get("group") != "hazardous")),
            "seed": m.get("seed"),
            "profile": m.get("options", {}).get("profile"),
            "hazardous count": m.get("options", {}).get("hazardous", 0),
            # packs written before the option existed drew the default
            "cases per variant": m.get("options", {}).get("cases_per_variant", CASES_PER_VARIANT),
            "ctsgen version": drew.get("version"),
            "Hypothesis version": drew.get("hypothesis"),
            "toolchain": m.get("toolchain"),
            # packs written before routes were compiled along glslang, the default
            "route": m.get("options", {}).get("route", "glslang"),
        }
    except (OSError, ValueError, AttributeError, TypeError):
        return "its manifest cannot be read"
    now = generator_record()
    want = {"family": [family], "count": count, "seed": seed, "profile": profile, "hazardous count": hazardous,
            "cases per variant": cases_per_variant, "ctsgen version": now["version"], "Hypothesis version": now["hypothesis"], "toolchain": toolchain,
            "route": route}
    return ", ".join(f"{k} {have[k]!r}, asked {want[k]!r}" if k != "toolchain" else "toolchain versions"
                     for k in want if have[k] != want[k])
