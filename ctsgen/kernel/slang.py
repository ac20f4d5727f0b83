"""A kernel as Slang (``linalg.CoopMat``): the statements of :mod:`ctsgen.kernel.ir`, a second emitter.

The same :class:`~ctsgen.kernel.ir.Kernel` that :mod:`ctsgen.kernel.glsl` writes as GLSL, written
for the Slang compiler (the ``slang`` route, docs/spec-decisions.md "compiler-routes"): the same
bindings (0 the parameter words, 1-3 the A, B and Accumulator tiles, 4 the stored outputs), words,
memory regions, tiles, shared arrays, barriers, loops and their unroll attributes, branches,
functions with ``in``/``out``/``inout`` matrices, the Accumulator array, element access and
exchange, so the two modules of one kernel must give the same result on one device.

Where Slang says a thing differently:

* ``CoopMat.Load``/``Store`` take a buffer or Workgroup array of the matrix's own component type,
  so every offset and stride here counts components, and a kernel's vector pointee (``f16vec4``,
  ``uvec4`` in the GLSL) is the same bytes read in components;
* an ``in`` parameter is immutable in Slang: one the function writes is copied to a local first
  (GLSL's ``in`` is a copy already);
* ``gl_WorkGroupID.x`` and ``gl_LocalInvocationIndex`` are ``main``'s ``SV_GroupID`` and
  ``SV_GroupIndex``, kept in static globals for :func:`P`; ``gl_SubgroupID`` is
  ``WaveGetWaveIndex()`` (SPIR-V's SubgroupId); ``barrier()`` is
  ``GroupMemoryBarrierWithGroupSync()`` (the same OpControlBarrier).
"""

from __future__ import annotations

from typing import ClassVar

from ctsgen.kernel import emit, ir
from ctsgen.kernel.emit import BINDINGS, BUFFERS, OUT, staged
from ctsgen.kernel.ir import Kernel, Kind, Ref
from ctsgen.model.types import ComponentType, MatrixType, Scope
from ctsgen.ops.khr_addressing import line_length
from ctsgen.templates import SHARED_DIR, render

#: The component types a kernel may hold (each spelled in Slang as ``ComponentType.slang``).
SCALARS = (ComponentType.float16, ComponentType.float32, ComponentType.sint8, ComponentType.uint8,
           ComponentType.sint32, ComponentType.uint32)

_USES = {Kind.a: "MatrixA", Kind.b: "MatrixB", Kind.c: "MatrixAccumulator"}
_ALIASES = {Kind.a: "MA", Kind.b: "MB", Kind.c: "MC"}


def scalar(component: ComponentType) -> str:
    if component not in SCALARS:
        raise ValueError(f"no Slang scalar for a kernel of {component.name} components -> kernels hold "
                         f"{', '.join(t.name for t in SCALARS)}")
    return component.slang


def matrix(m: MatrixType, kind: Kind) -> str:
    scope = "Subgroup" if m.scope is Scope.Subgroup else "Workgroup"
    return f"CoopMat<{scalar(m.component)}, MemoryScope.{scope}, {m.rows}, {m.cols}, CoopMatMatrixUse::{_USES[kind]}>"


def tile(k: Kernel, kind: Kind) -> int:
    """Components of one tile."""
    m = k.matrix(kind)
    return m.rows * m.cols


def stride(k: Kernel, kind: Kind) -> int:
    m = k.matrix(kind)
    return line_length(k.layouts["abc".index(kind.value)], m.rows, m.cols)


def written(body: tuple[ir.Stmt, ...]) -> set[str]:
    """Names a block may write: destinations, exchanged variables and every argument of a call (an
    ``in`` one too: copying a parameter that is only read is harmless)."""
    out: set[str] = set()

    def go(block: tuple[ir.Stmt, ...]) -> None:
        for s in block:
            for name in ("dst", "var"):
                ref = getattr(s, name, None)
                if isinstance(ref, Ref):
                    out.add(ref.var)
            if isinstance(s, ir.Call):
                out.update(a.var for a in s.args)
            for child in s.children():
                go(child)
    go(body)
    return out


class Emitter(emit.Emitter):
    """Slang's spelling of a kernel's statements (linalg.CoopMat)."""

    SUBGROUP_ID: ClassVar[str] = "WaveGetWaveIndex()"
    LOOP_ATTRIBUTES: ClassVar[dict[str, str]] = {"unroll": "[unroll] ", "dont_unroll": "[loop] "}
    LENGTH: ClassVar[str] = ".GetLength()"
    BARRIER: ClassVar[str] = "GroupMemoryBarrierWithGroupSync();"

    def scalar(self) -> str:
        return scalar(self.k.c.component)

    def layout(self, kind: Kind) -> str:
        return f"CoopMatMatrixLayout::{self.k.layouts['abc'.index(kind.value)].value}"

    def matrix_load(self, kind: Kind, source: str, offset: str) -> str:
        return f"{_ALIASES[kind]}.Load<{self.layout(kind)}>({source}, {offset}, {stride(self.k, kind)}u)"

    def type_name(self, kind: Kind) -> str:
        return _ALIASES[kind]

    def store_output(self, value: str, offset: str) -> str:
        return self.store(value, Kind.c, "bufout", offset)

    def share(self, value: str, offset: str) -> str:
        return self.store(value, Kind.c, "shc", offset)

    def store(self, x: str, kind: Kind, target: str, offset: str) -> str:
        return f"{x}.Store<{self.layout(kind)}>({target}, {offset}, {stride(self.k, kind)}u);"

    def muladd(self, s: ir.MulAdd) -> str:
        r = self.ref
        return f"coopMatMulAdd<{scalar(self.k.c.component)}, false>({r(s.a)}, {r(s.b)}, {r(s.c)})"

    def exchange(self, s: ir.Exchange, d: int) -> None:
        t, v = tile(self.k, Kind.c), self.ref(s.var)
        self.out(d, self.share(v, f"{self.sg} * {t}u"))
        self.out(d, "GroupMemoryBarrierWithGroupSync();")
        self.out(d, f"{v} = {self.matrix_load(Kind.c, 'shc', f'{self.rotated(s.rot)} * {t}u')};")
        self.out(d, "GroupMemoryBarrierWithGroupSync();")

    def load(self, s: ir.Load, d: int, first: str) -> None:
        kind = s.dst.kind
        t, S = tile(self.k, kind), self.k.subgroups
        base = f"P({BINDINGS[kind] - 1}u)"
        buf = f"buf{kind.value}"
        if not s.shared:
            self.out(d, f"{self.ref(s.dst)} = {self.matrix_load(kind, buf, f'{base} + ({first} + {self.sg}) * {t}u')};")
            return
        sh = f"sh{kind.value}"
        self.out(d, f"for (uint e = localIndex; e < {S * t}u; e += {self.k.c.workgroup_size * S}u) "
                    f"{{ {sh}[e] = {buf}[{base} + {first} * {t}u + e]; }}")
        self.out(d, "GroupMemoryBarrierWithGroupSync();")
        self.out(d, f"{self.ref(s.dst)} = {self.matrix_load(kind, sh, f'{self.rotated(s.rot)} * {t}u')};")
        self.out(d, "GroupMemoryBarrierWithGroupSync();")

    def function(self, n: int, f: ir.Function) -> None:
        copied = {f"p{j}" for j, q in enumerate(f.quals) if q == "in"} & written(f.body)
        params = ", ".join(f"{'' if q == 'in' else q + ' '}{_ALIASES[kind]} p{j}{'_in' if f'p{j}' in copied else ''}"
                           for j, (kind, q) in enumerate(zip(f.kinds, f.quals)))
        self.out(0, f"{'MC' if f.ret else 'void'} f{n}({params})")
        self.out(0, "{")
        for name in sorted(copied):
            self.out(1, f"var {name} = {name}_in;")
        self.block(f.body, 1, ())
        if f.ret:
            self.out(1, f"return {f.ret};")
        self.out(0, "}")


def slang(k: Kernel, baked: list[int] | None = None) -> str:
    """The kernel's compute shader in Slang (``baked``: one case's whole parameter record, a
    standalone repro)."""
    functions, main = Emitter.program(k)
    shared = [f"groupshared {scalar(k.matrix(kind).component)} sh{kind.value}[{k.subgroups * tile(k, kind)}];"
              for kind in Kind if kind in staged(k)]
    return render(SHARED_DIR, "kernel.slang.j2", k=k, local_size=k.c.workgroup_size * k.subgroups,
                  words=BUFFERS + k.words, baked=baked, bindings=BINDINGS, out_binding=OUT,
                  types={kind: scalar(k.matrix(kind).component) for kind in Kind},
                  aliases={kind: (_ALIASES[kind], matrix(k.matrix(kind), kind)) for kind in Kind},
                  shared=shared, functions=functions, main=main)
