"""The cm2-reduce family's case model: OpCooperativeMatrixReduceNV on Accumulator matrices.

A :class:`ReduceVariant` is the compile-time signature (reduce mode, combine
function, source and result matrix types); a :class:`ReduceCase` adds the
data (a seed). The shader loads the source row-major from binding 1,
reduces, and stores the result row-major to binding 2, which starts
poisoned so an unwritten element is visible. No run-time family words.
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
from ctsgen.ops.cm2 import (check_slang_tiles, check_subgroups, requirements_for, subgroups_from_json,
                            subgroups_json, subgroups_label, tiles_extensions)
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, domain_size, result_shape, sum_is_meaningful
from ctsgen.ops import cm2_reduce as cm2_reduce_ops
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.oracle.values import from_bits, random_values, sentinel_bits
from ctsgen.templates import render
from ctsgen.oracle.models import h100

FAMILY_NAME = "cm2-reduce"
N_BUFFERS = 2  # binding 1: source matrix, binding 2: result matrix
FAMILY_WORDS = 0

#: Float sums draw values k * 2^-q, |k| <= 2^q: every partial sum stays on that
#: grid (no subnormal a device could flush) and rounds only when it grows.
SUM_GRID_BITS = {ComponentType.float16: 8, ComponentType.float32: 20}
#: Float products: +-1 with at most this many +-2 and this many +-1/2 per matrix,
#: so every partial product is an exact power of two within 2^+-10.
PRODUCT_SCALED = 10
#: ReduceCase.values
VALUES = ("grid", "random")


@dataclass(frozen=True)
class ReduceVariant:
    """``coopMatReduceNV(result, source, mode, combineOp)`` with fixed types."""

    mode: ReduceMode
    combine: Combine
    source: MatrixType
    result: MatrixType
    #: subgroups per workgroup, each reducing its own tile (Subgroup scope; ctsgen.ops.cm2.in_subgroups)
    subgroups: int = 1

    def __post_init__(self) -> None:
        s, r = self.source, self.result
        why = check_subgroups(self.subgroups, s)
        if why:
            raise ValueError(why)
        if s.use is not MatrixUse.Accumulator or r.use is not MatrixUse.Accumulator:
            raise ValueError("reductions take and return Accumulator matrices (SPV_NV_cooperative_matrix2)")
        if (s.component, s.scope, s.workgroup_size) != (r.component, r.scope, r.workgroup_size):
            raise ValueError("source and result of a reduction share component type and scope")
        why = result_shape(self.mode, s.rows, s.cols, r.rows, r.cols)
        if why:
            raise ValueError(why)
        if self.combine is Combine.xor and s.component.is_float:
            raise ValueError("the xor combine function is for integer components")
        if self.combine is Combine.sum and not sum_is_meaningful(self.mode, s.rows, s.cols, s.component):
            raise ValueError(f"a float sum over {domain_size(self.mode, s.rows, s.cols)} terms has no useful "
                             "error bound; reduce a smaller matrix")

    @property
    def id(self) -> str:
        r = self.result
        return (f"cm2_reduce.{self.mode.snake}.{self.combine.value}.{self.source.label}"
                f".to_{r.rows}x{r.cols}{subgroups_label(self.subgroups)}")

    @property
    def local_size_x(self) -> int:
        return self.source.workgroup_size

    def buffers(self) -> tuple[BufferSpec, ...]:
        dt = self.source.component.dtype.name
        return (BufferSpec(1, "source", dt), BufferSpec(2, "result", dt))

    def requirements(self) -> Requirements:
        return requirements_for(["cooperativeMatrixReductions"], [self.source, self.result])

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        return render(Path(__file__).parent, "shader.comp.j2", T=self.source.component.glsl,
                      extensions=["GL_NV_cooperative_matrix2", *tiles_extensions(self.subgroups)],
                      **self._context(baked))

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same shader in Slang (the ``slang`` route): the same bindings and tiles, and
        ``ReduceRow``/``ReduceColumn``/``ReduceRowAndColumn``/``Reduce2x2`` with the same CombineFunc
        (docs/spec-decisions.md "compiler-routes")."""
        check_slang_tiles(self.subgroups, self.source, self.result)
        return render(Path(__file__).parent, "shader.slang.j2", T=self.source.component.slang, **self._context(baked))

    def _context(self, baked: Sequence[int] | None) -> dict[str, Any]:
        return dict(v=self, src=self.source, dst=self.result, words=N_BUFFERS + FAMILY_WORDS,
                    baked=None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode.name, "combine": self.combine.value,
                "source": self.source.to_json(), "result": self.result.to_json(), **subgroups_json(self.subgroups)}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ReduceVariant:
        return cls(ReduceMode[o["mode"]], Combine(o["combine"]), MatrixType.from_json(o["source"]),
                   MatrixType.from_json(o["result"]), subgroups_from_json(o))

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: reduce each tile of each case's source on host buffers."""
        src, dst = buffers
        s, r, n = self.source, self.result, self.subgroups
        for in_off, out_off in offsets:
            m = src[in_off:in_off + n * s.elements].reshape(n, s.rows, s.cols)
            out, _ = cm2_reduce_ops.expected_reduce(m, self.mode, self.combine, s.component, r.rows, r.cols)
            dst[out_off:out_off + n * r.elements] = out.ravel()


def source_values(combine: Combine, component: ComponentType, n: int, seed: int, values: str = "grid"
                  ) -> np.ndarray:
    """The source data for a combine function (see SUM_GRID_BITS, PRODUCT_SCALED); float sums with
    ``values="random"``: full significands, random signs, magnitudes 2^-3..2 (the partial sums
    round, so the combine order shows; the any-order bound holds for any data)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    if values == "random":
        sign = np.where(rng.integers(0, 2, size=n) == 1, -1.0, 1.0)
        return (sign * np.exp2(rng.uniform(-3, 1, size=n))).astype(component.dtype)
    if not component.is_float:
        v = random_values(component, n, seed)
        if combine is Combine.product:  # odd values: a wrapped product never collapses to 0
            v = from_bits(v.view(component.bits_dtype) | 1, component)
        return v
    if combine is Combine.sum:
        q = SUM_GRID_BITS[component]
        return (rng.integers(-(2**q), 2**q + 1, size=n) * 2.0**-q).astype(component.dtype)
    if combine is Combine.product:
        v = rng.choice([-1.0, 1.0], size=n)
        pos = rng.permutation(n)[:2 * PRODUCT_SCALED]
        v[pos[:PRODUCT_SCALED]] *= 2.0
        v[pos[PRODUCT_SCALED:]] *= 0.5
        return v.astype(component.dtype)
    return random_values(component, n, seed)


@dataclass(frozen=True)
class ReduceCase:
    """One reduction of seeded data (see :func:`source_values`)."""

    family: ClassVar[str] = FAMILY_NAME

    shader: ReduceVariant
    seed: int = 0
    #: ``grid`` (see SUM_GRID_BITS) or ``random`` (float sums only; see :func:`source_values`)
    values: str = "grid"

    def __post_init__(self) -> None:
        if self.values not in VALUES:
            raise ValueError(f"ReduceCase values {self.values!r} -> use one of {', '.join(VALUES)}")
        if self.values == "random" and not self._tolerance():
            raise ValueError("ReduceCase values 'random' is for float sums (other combines are compared "
                             "bit for bit on exact data) -> use values 'grid'")

    def variant(self) -> ReduceVariant:
        return self.shader

    def source(self) -> np.ndarray:
        """Every subgroup's tile, one after another (one tile's data, for one subgroup, is what it was)."""
        s = self.shader.source
        return source_values(self.shader.combine, s.component, self.shader.subgroups * s.elements, self.seed,
                             self.values)

    def data(self) -> CaseData:
        v, s, r = self.shader, self.shader.source, self.shader.result
        src = self.source()
        exp, tol = cm2_reduce_ops.expected_reduce(src.reshape(v.subgroups, s.rows, s.cols), v.mode, v.combine,
                                                  s.component, r.rows, r.cols)
        poison = np.full(v.subgroups * r.elements, from_bits(sentinel_bits(s.component), s.component), dtype=s.component.dtype)
        tolerance = [None, tol.ravel()] if self._tolerance() else None
        return CaseData(np.zeros(FAMILY_WORDS, np.uint32), [src, poison], [None, exp.ravel()], tolerance)

    def _tolerance(self) -> bool:
        return self.shader.source.component.is_float and self.shader.combine is Combine.sum

    def compare_rule(self) -> CompareRule:
        """Float max/min/products bit for bit, but the sign of a zero does not count: combining
        is float arithmetic in a shader without SignedZeroInfNanPreserve (decision "signed-zero")."""
        if self._tolerance():
            return CompareRule("tolerance")
        return CompareRule("bitwise", signed_zero=False if self.shader.source.component.is_float else None)

    def to_json(self) -> dict[str, Any]:
        out = {"family": FAMILY_NAME, "variant": self.shader.to_json(), "seed": self.seed}
        if self.values != "grid":  # grid cases keep the names they had
            out["values"] = self.values
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> ReduceCase:
        return cls(ReduceVariant.from_json(o["variant"]), int(o["seed"]), o.get("values", "grid"))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """Result element -> (subgroup, row, col) and the source elements combined into it."""
        if buffer != 1:
            return {}
        r, s, mode = self.shader.result, self.shader.source, self.shader.mode
        tile, at = divmod(element, r.elements)
        row, col = divmod(at, r.cols)
        dom = {ReduceMode.Row: f"source row {row}", ReduceMode.Column: f"source column {col}",
               ReduceMode.RowColumn: "the whole source",
               ReduceMode.Block2x2: f"source rows {2 * row}..{2 * row + 1}, columns {2 * col}..{2 * col + 1}"}
        where = {"subgroup": tile} if self.shader.subgroups > 1 else {}
        return {**where, "row": row, "col": col, "combines": dom[mode], "sourceShape": [s.rows, s.cols]}


#: Invocations per subgroup on the device the model describes (NVIDIA: 32).
H100_SUBGROUP = 32


def h100_model(case: ReduceCase, params: Any) -> list[np.ndarray | None] | None:
    """A float sum's result under a device model: by default the accumulator fragment's order
    (ctsgen.oracle.models.h100.reduce_fragment), or one of reduce_sum's orders over each result's
    terms (a mutant). None for other combines (exact) and for a workgroup shape whose subgroup
    grid the model has not measured (not modelled: no ModelMismatch can come from it)."""
    v, s, r = case.shader, case.shader.source, case.shader.result
    if not case._tolerance():
        return None
    tiles = case.source().reshape(v.subgroups, s.rows, s.cols)
    if params.reduce_order == "fragment":
        subgroups = 1 if s.scope is Scope.Subgroup else s.workgroup_size // H100_SUBGROUP
        # each subgroup reduces its own tile: the fragment model per tile (a loop over tiles, not elements)
        reds = [h100.reduce_fragment(src, v.mode.snake, s.component, subgroups, params) for src in tiles]
        if any(red is None for red in reds):
            return None
        red = np.stack(reds)
    else:
        red = h100.reduce_sum(cm2_reduce_ops.reduction_domains(tiles, v.mode), s.component, params)
    shape = (v.subgroups, r.rows, r.cols)
    return [None, np.broadcast_to(red.astype(s.component.dtype).reshape(v.subgroups, *red.shape[-2:]),
                                  shape).ravel().copy()]
