"""What a shipped repro (docs/repros/*) documents: the failure its REPORT.md observed ("Observed:
**Fail**: DETAIL", as `ctsgen repro` writes it) and whether it is lavapipe's (its REPORT.md or
README.md names lavapipe), for tests/test_repros.py and the lavapipe tier's replay."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAVAPIPE_PROFILE = REPO / "ctsgen" / "device" / "profiles" / "mesa-lavapipe-26.2.6.txt"
_OBSERVED = re.compile(r"^Observed: \*\*Fail\*\*: (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Repro:
    path: Path
    #: the observed failure's detail: "192 of 384 elements of 'result' differ" ('' where REPORT.md has none)
    detail: str
    lavapipe: bool


def repros() -> list[Repro]:
    out = []
    for report in sorted((REPO / "docs" / "repros").glob("*/REPORT.md")):
        docs = [p.read_text(encoding="utf-8") for p in (report, report.parent / "README.md") if p.exists()]
        found = _OBSERVED.search(docs[0])
        out.append(Repro(report.parent, found.group(1).strip() if found else "",
                         any("lavapipe" in d.lower() for d in docs)))
    return out


def lavapipe_repros() -> list[Repro]:
    return [r for r in repros() if r.lavapipe]
