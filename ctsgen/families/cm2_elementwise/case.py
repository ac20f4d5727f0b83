"""The cm2-elementwise family's case model: OpCooperativeMatrixPerElementOpNV.

A :class:`PerElementVariant` is the compile-time signature (function,
matrix type); a :class:`PerElementCase` adds the run-time extra operands
(parameter words: W_S the bits of scalar ``s``, W_R0 / W_C0 the selected
row and column) and a data seed. Bindings: 1 source matrix, 2 the matrix
operand of ``affine`` (unused by ``select``), 3 the result (poisoned first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.ops.cm2_elementwise import SMALL, Op, op_allows
from ctsgen.ops import cm2_elementwise as cm2_elementwise_ops
from ctsgen.ops.cm2 import (check_slang_tiles, check_subgroups, requirements_for, subgroups_from_json, subgroups_json,
                            subgroups_label, tiles_extensions)
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.oracle.values import from_bits, random_values, sentinel_bits, to_bits
from ctsgen.templates import render

FAMILY_NAME = "cm2-elementwise"
N_BUFFERS = 3
W_S, W_R0, W_C0 = 0, 1, 2
FAMILY_WORDS = 3


@dataclass(frozen=True)
class PerElementVariant:
    op: Op
    matrix: MatrixType
    #: subgroups per workgroup, each on its own tile (Subgroup scope; ctsgen.ops.cm2.in_subgroups)
    subgroups: int = 1

    def __post_init__(self) -> None:
        why = op_allows(self.op, self.matrix.component, self.matrix.rows, self.matrix.cols) \
            or check_subgroups(self.subgroups, self.matrix)
        if why:
            raise ValueError(f"{self.op.value} on {self.matrix.glsl}: {why}")

    @property
    def id(self) -> str:
        return f"cm2_elementwise.{self.op.value}.{self.matrix.label}{subgroups_label(self.subgroups)}"

    @property
    def local_size_x(self) -> int:
        return self.matrix.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        dt = self.matrix.component.dtype.name
        return (BufferSpec(1, "source", dt), BufferSpec(2, "operand", dt), BufferSpec(3, "result", dt))

    def requirements(self) -> Requirements:
        return requirements_for(["cooperativeMatrixPerElementOperations"], [self.matrix])

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        m = self.matrix
        return render(Path(__file__).parent, "shader.comp.j2", T=m.component.glsl,
                      bfloat16=m.component is ComponentType.bfloat16, tiles=tiles_extensions(self.subgroups),
                      **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): the same bindings, words and function,
        as ``CoopMat.MapElement`` (docs/spec-decisions.md "compiler-routes")."""
        check_slang_tiles(self.subgroups, self.matrix)
        return render(Path(__file__).parent, "shader.slang.j2", T=self.matrix.component.slang, **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        return dict(v=self, m=self.matrix, component=self.matrix.component.name, words=N_BUFFERS + FAMILY_WORDS,
                    H=N_BUFFERS, W=dict(S=W_S, R0=W_R0, C0=W_C0),
                    baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op.value, "matrix": self.matrix.to_json(), **subgroups_json(self.subgroups)}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> PerElementVariant:
        return cls(Op(o["op"]), MatrixType.from_json(o["matrix"]), subgroups_from_json(o))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: apply the function to each case's matrix on host buffers."""
        src, opnd, dst = buffers
        m, n = self.matrix, self.subgroups
        comp = m.component
        for words, (a, b, c) in zip(params, offsets):
            s = from_bits(int(words[W_S]), comp)[()]
            x = src[a:a + n * m.elements].reshape(n, m.rows, m.cols)
            mm = opnd[b:b + n * m.elements].reshape(n, m.rows, m.cols)
            dst[c:c + n * m.elements] = cm2_elementwise_ops.expected_per_element(
                self.op, x, comp, s=s, m=mm, r0=int(words[W_R0]), c0=int(words[W_C0])).ravel()


def _values(component: ComponentType, n: int, seed: int) -> np.ndarray:
    """Small integers for float types (exact arithmetic), anything for integer types."""
    if component.is_float:
        rng = np.random.Generator(np.random.PCG64(seed))
        return rng.integers(-SMALL, SMALL + 1, size=n).astype(component.dtype)
    return random_values(component, n, seed)


@dataclass(frozen=True)
class PerElementCase:
    """One per-element operation: ``s`` (a value of the component type), ``r0``/``c0``
    (select's row and column; may lie outside the matrix), data seed."""

    family: ClassVar[str] = FAMILY_NAME

    shader: PerElementVariant
    s: float | int
    r0: int = 0
    c0: int = 0
    seed: int = 0

    def variant(self) -> PerElementVariant:
        return self.shader

    def params(self) -> np.ndarray:
        comp = self.shader.matrix.component
        w = np.zeros(FAMILY_WORDS, np.uint32)
        w[W_S] = int(to_bits(np.asarray([self.s], dtype=comp.dtype), comp)[0])
        w[W_R0], w[W_C0] = self.r0, self.c0
        return w

    def data(self) -> CaseData:
        m, n = self.shader.matrix, self.shader.subgroups
        comp = m.component
        x = _values(comp, n * m.elements, self.seed)
        mm = _values(comp, n * m.elements, self.seed ^ 0x5A5A5A5A)
        s = np.asarray(self.s, dtype=comp.dtype)[()]
        exp = cm2_elementwise_ops.expected_per_element(self.shader.op, x.reshape(n, m.rows, m.cols), comp, s=s,
                                                       m=mm.reshape(n, m.rows, m.cols), r0=self.r0, c0=self.c0)
        poison = np.full(n * m.elements, from_bits(sentinel_bits(comp), comp), dtype=comp.dtype)
        return CaseData(self.params(), [x, mm, poison], [None, None, exp.ravel()])

    def compare_rule(self) -> CompareRule:
        """Bit for bit; a float function is arithmetic in a shader without
        SignedZeroInfNanPreserve, so the sign of a zero does not count (decision "signed-zero")."""
        return CompareRule("bitwise", signed_zero=False if self.shader.matrix.component.is_float else None)

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(), "s": self.s, "r0": self.r0,
                "c0": self.c0, "seed": self.seed}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> PerElementCase:
        v = PerElementVariant.from_json(o["variant"])
        s = float(o["s"]) if v.matrix.component.is_float else int(o["s"])
        return cls(v, s, int(o["r0"]), int(o["c0"]), int(o["seed"]))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        if buffer != 2:
            return {}
        tile, at = divmod(element, self.shader.matrix.elements)
        row, col = divmod(at, self.shader.matrix.cols)
        return {**({"subgroup": tile} if self.shader.subgroups > 1 else {}), "row": row, "col": col}
