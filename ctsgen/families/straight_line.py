"""What the program families (cm2-program, coopvec-program) share: a straight-line program is a
tuple of nodes, written one node a line, round-tripped through JSON, and named by a digest of
that JSON (the shader variant's id)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar, Self


class StraightLine:
    """Mixin for a frozen dataclass whose one field is ``nodes`` (each with ``line(index)`` and
    ``to_json()``); ``NODE`` is the family's node class, whose ``from_json`` reads one back."""

    nodes: tuple[Any, ...]
    NODE: ClassVar[Any]

    def lines(self) -> list[str]:
        return [n.line(i) for i, n in enumerate(self.nodes)]

    def to_json(self) -> list[dict[str, Any]]:
        return [n.to_json() for n in self.nodes]

    @classmethod
    def from_json(cls, o: list[dict[str, Any]]) -> Self:
        return cls(tuple(cls.NODE.from_json(x) for x in o))  # type: ignore[call-arg]

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:10]
