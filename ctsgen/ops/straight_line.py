"""What the program families (cm2-program, coopvec-program) share: a straight-line program is a
tuple of nodes, written one node a line, round-tripped through JSON, and named by a digest of
that JSON (the shader variant's id); each node reads its run-time words from the parameter
buffer, one block after another in program order; a case's run of it walks the nodes over the
host buffers.

A program is immutable, so what is derived from its nodes alone (the digest, each node's first
word) is computed once per program (``functools.cached_property``, stored in the instance's
``__dict__``, which a frozen dataclass allows) rather than once per case or per word read."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Self

import numpy as np


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

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:10]

    def words_of(self, node: Any) -> int:
        """Run-time words node ``node`` reads (the family says)."""
        raise NotImplementedError

    @cached_property
    def word_bases(self) -> tuple[int, ...]:
        """First run-time word of each node (after the buffer offsets)."""
        out, k = [], 0
        for n in self.nodes:
            out.append(k)
            k += self.words_of(n)
        return tuple(out)

    @cached_property
    def words(self) -> int:
        return sum(self.words_of(n) for n in self.nodes)


@dataclass
class ProgramRun:
    """One case's evaluation of a program: its family words, the whole host buffers with this
    case's element offset into each, and the values computed so far (``values[i]``: node i's;
    None for a store). A family's oracle subclasses it with its own accessors."""

    program: Any  # the family's StraightLine program
    words: np.ndarray
    buffers: list[np.ndarray]
    offsets: np.ndarray
    values: list[np.ndarray | None] = field(default_factory=list)

    def word(self, i: int, k: int) -> int:
        """Word k of node i's block."""
        return int(self.words[self.program.word_bases[i] + k])
