"""A kernel as GLSL (GL_KHR_cooperative_matrix): the statements of :mod:`ctsgen.kernel.ir`, one emitter.

Run-time words: ``P(0..3)`` are the batch's element offsets of the case's data in bindings 1-4 (A,
B, Accumulator inputs, outputs); the kernel's own words follow in preorder (``Kernel.plan``, ctsgen/kernel/ir.py).
A and B bindings are declared with their pointee type over the host's component array, so offsets
and strides count pointee elements (SPV_KHR_cooperative_matrix: Stride "in units of elements of the
pointer's type"); the batch aligns each case's data to 16 bytes, so the division of ``P(k)`` is exact.
"""

from __future__ import annotations

from typing import ClassVar

from ctsgen.kernel import emit, ir
from ctsgen.kernel.emit import BINDINGS, BUFFERS, staged
from ctsgen.kernel.ir import Kernel, Kind
from ctsgen.ops.khr_addressing import Pointee, line_length
from ctsgen.templates import SHARED_DIR, render


def pointee(k: Kernel, kind: Kind) -> Pointee:
    m = k.matrix(kind)
    own = Pointee.of(m.component)
    return own if kind is Kind.c else (k.pointees[0 if kind is Kind.a else 1] or own)


def per(k: Kernel, kind: Kind) -> int:
    """Components of ``kind``'s type per element of its buffer's (and shared array's) pointee."""
    return pointee(k, kind).size // k.matrix(kind).component.size


def tile(k: Kernel, kind: Kind) -> int:
    """Pointee elements of one tile."""
    m = k.matrix(kind)
    return m.rows * m.cols // per(k, kind)


def stride(k: Kernel, kind: Kind) -> int:
    m = k.matrix(kind)
    return line_length(k.layouts["abc".index(kind.value)], m.rows, m.cols) // per(k, kind)


def shared_bytes(k: Kernel) -> int:
    """Workgroup memory the kernel declares: one tile per subgroup for each kind it stages."""
    return sum(k.subgroups * tile(k, kind) * pointee(k, kind).size for kind in staged(k))


class Emitter(emit.Emitter):
    """GLSL's spelling of a kernel's statements (GL_KHR_cooperative_matrix, GL_EXT_control_flow_attributes)."""

    SUBGROUP_ID: ClassVar[str] = "gl_SubgroupID"
    LOOP_ATTRIBUTES: ClassVar[dict[str, str]] = {"unroll": "[[unroll]] ", "dont_unroll": "[[dont_unroll]] "}
    LENGTH: ClassVar[str] = ".length()"
    BARRIER: ClassVar[str] = "barrier();"

    def scalar(self) -> str:
        return self.k.c.component.glsl

    def type_name(self, kind: Kind) -> str:
        return self.k.matrix(kind).glsl

    def store_output(self, value: str, offset: str) -> str:
        return f"coopMatStore({value}, bufout.x, {offset}, {self.access(Kind.c)});"

    def access(self, kind: Kind) -> str:
        layout = self.k.layouts["abc".index(kind.value)]
        return f"{stride(self.k, kind)}u, {layout.glsl}"

    def share(self, value: str, offset: str) -> str:
        return f"coopMatStore({value}, shc, {offset}, {self.access(Kind.c)});"

    def muladd(self, s: ir.MulAdd) -> str:
        r = self.ref
        return f"coopMatMulAdd({r(s.a)}, {r(s.b)}, {r(s.c)})"

    def exchange(self, s: ir.Exchange, d: int) -> None:
        t, v = tile(self.k, Kind.c), self.ref(s.var)
        self.out(d, self.share(v, f"{self.sg} * {t}u"))
        self.out(d, "barrier();")
        self.out(d, f"coopMatLoad({v}, shc, {self.rotated(s.rot)} * {t}u, {self.access(Kind.c)});")
        self.out(d, "barrier();")

    def load(self, s: ir.Load, d: int, first: str) -> None:
        kind = s.dst.kind
        n, t, S = per(self.k, kind), tile(self.k, kind), self.k.subgroups
        base = f"P({BINDINGS[kind] - 1}u){f' / {n}u' if n > 1 else ''}"
        buf = f"buf{kind.value}.x"
        if not s.shared:
            self.out(d, f"coopMatLoad({self.ref(s.dst)}, {buf}, {base} + ({first} + {self.sg}) * {t}u, "
                        f"{self.access(kind)});")
            return
        sh = f"sh{kind.value}"
        self.out(d, f"for (uint e = gl_LocalInvocationIndex; e < {S * t}u; e += gl_WorkGroupSize.x) "
                    f"{{ {sh}[e] = {buf}[{base} + {first} * {t}u + e]; }}")
        self.out(d, "barrier();")
        self.out(d, f"coopMatLoad({self.ref(s.dst)}, {sh}, {self.rotated(s.rot)} * {t}u, {self.access(kind)});")
        self.out(d, "barrier();")

    def function(self, n: int, f: ir.Function) -> None:
        params = ", ".join(f"{q} {self.type_name(kind)} p{j}" for j, (kind, q) in enumerate(zip(f.kinds, f.quals)))
        self.out(0, f"{self.type_name(Kind.c) if f.ret else 'void'} f{n}({params})")
        self.out(0, "{")
        self.block(f.body, 1, ())
        if f.ret:
            self.out(1, f"return {f.ret};")
        self.out(0, "}")


def glsl(k: Kernel, baked: list[int] | None = None) -> str:
    """The kernel's compute shader (``baked``: one case's whole parameter record, a standalone repro)."""
    functions, main = Emitter.program(k)
    shared = [f"shared {pointee(k, kind).glsl} sh{kind.value}[{k.subgroups * tile(k, kind)}];"
              for kind in Kind if kind in staged(k)]
    types = {kind: pointee(k, kind).glsl for kind in Kind}
    extensions = ["GL_KHR_shader_subgroup_basic"] if k.subgroups > 1 else []
    if any(isinstance(s, ir.Loop) and s.unroll for s, _ in k.walk()):
        extensions.append("GL_EXT_control_flow_attributes")
    return render(SHARED_DIR, "kernel.comp.j2", k=k, local_size=k.c.workgroup_size * k.subgroups, extensions=extensions,
                  words=BUFFERS + k.words, baked=baked, types=types, out_type=k.c.component.glsl,
                  shared=shared, functions=functions, main=main)

