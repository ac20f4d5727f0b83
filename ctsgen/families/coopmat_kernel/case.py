"""The coopmat-kernel family's case model: a kernel (ctsgen.kernel) through the KHR route.

A :class:`KernelVariant` is a :class:`~ctsgen.kernel.ir.Kernel` and whether its sizes come from a
flexible-dimensions entry (then VK_NV_cooperative_matrix2 and cooperativeMatrixFlexibleDimensions are
needed). A :class:`KernelCase` adds the run-time words (trip counts, break/continue iterations,
conditions; ``ctsgen.kernel.ir`` says their order) and a data seed.

Bindings: 1 A tiles, 2 B tiles, 3 Accumulator tiles (each load's region, one tile per iteration and
subgroup), 4 the stored Accumulators (sentinel first; every element is written). Data: float kernels
draw integers in [-2, 2] (the exact domain, docs/spec-decisions.md "kernel-exact-domain"), integer
kernels any value of the type (integer results wrap: exact). The verdict is bit for bit; a float
kernel's zero may carry either sign (decision "signed-zero": no SignedZeroInfNanPreserve).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ctsgen.core.family import CaseData, CompareRule, case_name
from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.kernel import evaluate as kernel_eval
from ctsgen.kernel import glsl as kernel_glsl
from ctsgen.kernel import slang as kernel_slang
from ctsgen.kernel.ir import Kernel, Kind
from ctsgen.model.types import MatrixType
from ctsgen.ops.cm2 import in_subgroups
from ctsgen.ops.khr_addressing import Layout
from ctsgen.oracle.values import from_bits, sentinel_bits

FAMILY_NAME = "coopmat-kernel"
EXTENSION = "VK_KHR_cooperative_matrix"
FEATURE = "cooperativeMatrix"
FLEXIBLE = ("VK_NV_cooperative_matrix2", "cooperativeMatrixFlexibleDimensions")


@dataclass(frozen=True)
class KernelVariant:
    kernel: Kernel
    flexible: bool = False

    @property
    def id(self) -> str:
        """``coopmat_kernel.A x B + C MxNxK[.subgroupsS].DIGEST``."""
        k = self.kernel
        sg = f".subgroups{k.subgroups}" if k.subgroups > 1 else ""
        return (f"coopmat_kernel.{k.a.component.name}.{k.c.component.name}."
                f"{k.a.rows}x{k.b.cols}x{k.a.cols}{sg}.k{k.digest}")

    @property
    def local_size_x(self) -> int:
        return self.kernel.c.workgroup_size * self.kernel.subgroups

    def buffers(self) -> tuple[BufferSpec, ...]:
        k = self.kernel
        return (BufferSpec(1, "a", k.a.component.dtype.name), BufferSpec(2, "b", k.b.component.dtype.name),
                BufferSpec(3, "c", k.c.component.dtype.name), BufferSpec(4, "out", k.c.component.dtype.name))

    def matrices(self) -> tuple[MatrixType, ...]:
        """Each matrix type as the workgroup runs it (one subgroup's, scaled to the subgroups)."""
        k = self.kernel
        return tuple(in_subgroups(m, k.subgroups) for m in (k.a, k.b, k.c))

    def requirements(self) -> Requirements:
        exts, feats = [EXTENSION], [FEATURE]
        if self.flexible:
            exts.append(FLEXIBLE[0])
            feats.append(FLEXIBLE[1])
        return Requirements(extensions=tuple(exts), features=tuple(feats), matrices=self.matrices())

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        return kernel_glsl.glsl(self.kernel, None if baked is None else [int(w) for w in baked])

    def slang(self, baked: Sequence[int] | None = None) -> str:
        """The same kernel in Slang, for the ``slang`` route (docs/spec-decisions.md "compiler-routes")."""
        return kernel_slang.slang(self.kernel, None if baked is None else [int(w) for w in baked])

    def to_json(self) -> dict[str, Any]:
        out = {"kernel": self.kernel.to_json()}
        if self.flexible:
            out["flexible"] = True
        return out

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> KernelVariant:
        return cls(Kernel.from_json(o["kernel"]), bool(o.get("flexible", False)))

    def tile_components(self, kind: Kind) -> int:
        m = self.kernel.matrix(kind)
        return m.rows * m.cols

    def extents(self) -> tuple[int, int, int, int]:
        """Components each binding holds for one case: its regions' tiles, and one tile per stored
        value and subgroup."""
        k = self.kernel
        ra, rb, rc = k.regions
        return (ra * k.subgroups * self.tile_components(Kind.a), rb * k.subgroups * self.tile_components(Kind.b),
                rc * k.subgroups * self.tile_components(Kind.c),
                len(k.stores) * k.subgroups * self.tile_components(Kind.c))

    def run(self, words: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """The output binding of one case: every stored value at its slot (the layout of binding 3)."""
        k = self.kernel
        values = kernel_eval.evaluate(k, kernel_eval.Memory(a, b, c, words))
        tiles = np.stack(values)  # slots x S x rows x cols
        if k.layouts[2] is Layout.ColumnMajor:
            tiles = tiles.transpose(0, 1, 3, 2)
        return tiles.astype(k.c.component.dtype).ravel()  # exact values, in the type's range

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: each case's kernel on its own region of each buffer."""
        ext = self.extents()
        for words, base in zip(params, offsets):
            regions = [buffers[j][int(base[j]):int(base[j]) + ext[j]] for j in range(4)]
            regions[3][:] = self.run(words, *regions[:3])


@dataclass(frozen=True)
class KernelCase:
    """One run of a kernel: its run-time ``words`` and a data ``seed``."""

    family: ClassVar[str] = FAMILY_NAME

    shader: KernelVariant
    words: tuple[int, ...]
    seed: int = 0

    def __post_init__(self) -> None:
        if len(self.words) != self.shader.kernel.words:
            raise ValueError(f"a kernel of {self.shader.kernel.words} run-time words was given {len(self.words)}")
        if any(type(w) is not int or not 0 <= w < 2**32 for w in self.words):
            raise ValueError(f"kernel words {self.words} -> unsigned 32-bit integers")

    def variant(self) -> KernelVariant:
        return self.shader

    def params(self) -> np.ndarray:
        return np.array(self.words, np.uint32)

    @cached_property
    def inputs(self) -> list[np.ndarray]:
        """The A, B and Accumulator input components, drawn from ``seed``."""
        rng = np.random.default_rng(self.seed)
        k = self.shader.kernel
        out = []
        for n, m in zip(self.shader.extents()[:3], (k.a, k.b, k.c)):
            t = m.component
            if t.is_float:
                vals = rng.integers(-kernel_eval.SMALL, kernel_eval.SMALL + 1, n)
            else:
                info = np.iinfo(t.dtype)
                vals = rng.integers(int(info.min), int(info.max), n, endpoint=True)
            out.append(vals.astype(t.dtype))
        return out

    def data(self) -> CaseData:
        k = self.shader.kernel
        a, b, c = self.inputs
        expected = self.shader.run(self.params(), a, b, c)
        res = k.c.component
        poison = np.full(expected.size, from_bits(sentinel_bits(res), res), dtype=res.dtype)
        return CaseData(self.params(), [a, b, c, poison], [None, None, None, expected])

    def compare_rule(self) -> CompareRule:
        """Bit for bit; a float kernel's zeros by value (no SignedZeroInfNanPreserve)."""
        return CompareRule("bitwise", signed_zero=False) if self.shader.kernel.c.component.is_float \
            else CompareRule("bitwise")

    def to_json(self) -> dict[str, Any]:
        return {"family": FAMILY_NAME, "variant": self.shader.to_json(), "words": list(self.words), "seed": self.seed}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> KernelCase:
        return cls(KernelVariant.from_json(o["variant"]), tuple(int(w) for w in o["words"]), int(o["seed"]))

    def name(self) -> str:
        return case_name(self.shader.id, self.to_json())

    def locate(self, buffer: int, element: int) -> dict[str, Any]:
        """For the output binding: which stored value (slot), subgroup, row and column it holds."""
        if buffer != 3:
            return {}
        k = self.shader.kernel
        n = self.shader.tile_components(Kind.c)
        slot, s = divmod(element // n, k.subgroups)
        within = element % n
        line = k.c.cols if k.layouts[2] is Layout.RowMajor else k.c.rows
        major, minor = divmod(within, line)
        row, col = (major, minor) if k.layouts[2] is Layout.RowMajor else (minor, major)
        if slot >= len(k.stores):
            return {}
        return {"value": k.stores[slot].to_json(), "subgroup": s, "row": row, "col": col}

