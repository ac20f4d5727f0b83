"""A kernel as GLSL (GL_KHR_cooperative_matrix): the statements of :mod:`ctsgen.kernel.ir`, one emitter.

Run-time words: ``P(0..3)`` are the batch's element offsets of the case's data in bindings 1-4 (A,
B, Accumulator inputs, outputs); the kernel's own words follow in preorder (``ctsgen.kernel.evaluate.plan``).
A and B bindings are declared with their pointee type over the host's component array, so offsets
and strides count pointee elements (SPV_KHR_cooperative_matrix: Stride "in units of elements of the
pointer's type"); the batch aligns each case's data to 16 bytes, so the division of ``P(k)`` is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctsgen.kernel import ir
from ctsgen.kernel.evaluate import plan
from ctsgen.kernel.ir import Kernel, Kind, Ref
from ctsgen.model.types import ComponentType
from ctsgen.ops.khr_addressing import Pointee, line_length
from ctsgen.templates import SHARED_DIR, render

#: Buffer bindings: A, B and Accumulator inputs, then the stored outputs.
BINDINGS = {Kind.a: 1, Kind.b: 2, Kind.c: 3}
OUT = 4
BUFFERS = 4


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
    staged = {s.dst.kind for s, _ in k.walk() if isinstance(s, ir.Load) and s.shared}
    staged |= {Kind.c for s, _ in k.walk() if isinstance(s, ir.Exchange)}
    return sum(k.subgroups * tile(k, kind) * pointee(k, kind).size for kind in staged)


def constant(component: ComponentType, value: int) -> str:
    """A scalar constant of the Accumulator's component type (an unsigned one wraps)."""
    if component.dtype.kind == "u":
        return f"{component.glsl}({value % (1 << 8 * component.size)}u)"
    return f"{component.glsl}({value})"


@dataclass
class Emitter:
    k: Kernel
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.plan = plan(self.k)
        self.sg = "gl_SubgroupID" if self.k.subgroups > 1 else "0u"

    def ref(self, r: Ref) -> str:
        if r.index is None:
            return r.var
        if isinstance(r.index, str):
            return f"{r.var}[{r.index} % {self.k.array}u]"
        return f"{r.var}[{r.index}]"

    def type(self, kind: Kind) -> str:
        return self.k.matrix(kind).glsl

    def word(self, s: ir.Stmt) -> str:
        return f"P({BUFFERS + self.plan[id(s)]}u)"

    def out(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def access(self, kind: Kind) -> str:
        layout = self.k.layouts["abc".index(kind.value)]
        return f"{stride(self.k, kind)}u, {layout.glsl}"

    def block(self, body: tuple[ir.Stmt, ...], depth: int, loops: tuple[ir.Loop, ...]) -> None:
        for s in body:
            self.stmt(s, depth, loops)

    def stmt(self, s: ir.Stmt, d: int, loops: tuple[ir.Loop, ...]) -> None:
        r = self.ref
        if isinstance(s, ir.Load):
            self.load(s, d, loops)
        elif isinstance(s, ir.MulAdd):
            self.out(d, f"{r(s.dst)} = coopMatMulAdd({r(s.a)}, {r(s.b)}, {r(s.c)});")
        elif isinstance(s, (ir.Binary, ir.Copy)):
            expr = r(s.x) if isinstance(s, ir.Copy) else f"{r(s.x)} {'-' if s.minus else '+'} {r(s.y)}"
            self.out(d, f"{r(s.dst)} = {expr};")
        elif isinstance(s, ir.ElementMap):
            c = self.k.c.component
            x = r(s.dst)
            self.out(d, f"for (int e = 0; e < {x}.length(); ++e) {{ {x}[e] = {x}[e] * {constant(c, s.mul)} "
                        f"+ {constant(c, s.add)}; }}")
        elif isinstance(s, ir.ElementZip):
            x, y, z = r(s.dst), r(s.x), r(s.y)
            self.out(d, f"for (int e = 0; e < {x}.length(); ++e) {{ {x}[e] = {y}[e] {'-' if s.minus else '+'} {z}[e]; }}")
        elif isinstance(s, ir.Exchange):
            t = tile(self.k, Kind.c)
            self.out(d, f"coopMatStore({r(s.var)}, shc, {self.sg} * {t}u, {self.access(Kind.c)});")
            self.out(d, "barrier();")
            self.out(d, f"coopMatLoad({r(s.var)}, shc, {self.rotated(s.rot)} * {t}u, {self.access(Kind.c)});")
            self.out(d, "barrier();")
        elif isinstance(s, ir.Loop):
            i = ir.COUNTERS[len(loops)]
            attr = f"[[{s.unroll}]] " if s.unroll else ""
            self.out(d, f"{attr}for (uint {i} = 0u; {i} < {self.word(s)}; {i}++) {{")
            self.block(s.body, d + 1, loops + (s,))
            self.out(d, "}")
        elif isinstance(s, (ir.Break, ir.Continue)):
            self.out(d, f"if ({ir.COUNTERS[len(loops) - 1]} == {self.word(s)}) {s.OP};")
        elif isinstance(s, ir.If):
            cond = (f"((({self.word(s)} >> {self.sg}) & 1u) != 0u)" if s.per_subgroup else f"({self.word(s)} != 0u)")
            self.out(d, f"if {cond} {{")
            self.block(s.then, d + 1, loops)
            if s.orelse:
                self.out(d, "} else {")
                self.block(s.orelse, d + 1, loops)
            self.out(d, "}")
        elif isinstance(s, ir.Call):
            call = f"f{s.fn}({', '.join(r(a) for a in s.args)})"
            self.out(d, f"{r(s.dst)} = {call};" if s.dst is not None else f"{call};")
        else:  # pragma: no cover - every statement type is handled above
            raise TypeError(f"no GLSL for kernel statement {s.OP}")

    def rotated(self, rot: int) -> str:
        return f"(({self.sg} + {rot}u) % {self.k.subgroups}u)" if self.k.subgroups > 1 else "0u"

    def load(self, s: ir.Load, d: int, loops: tuple[ir.Loop, ...]) -> None:
        kind = s.dst.kind
        n, t, S = per(self.k, kind), tile(self.k, kind), self.k.subgroups
        it = "0u"
        for depth, loop in enumerate(loops):
            it = f"({it} * {loop.trips}u + {ir.COUNTERS[depth]})" if depth else ir.COUNTERS[0]
        base = f"P({BINDINGS[kind] - 1}u){f' / {n}u' if n > 1 else ''}"
        first = f"({self.plan[id(s)]}u + {it}) * {S}u"
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

    def function(self, k: int, f: ir.Function) -> None:
        params = ", ".join(f"{q} {self.type(kind)} p{j}" for j, (kind, q) in enumerate(zip(f.kinds, f.quals)))
        self.out(0, f"{self.type(Kind.c) if f.ret else 'void'} f{k}({params})")
        self.out(0, "{")
        self.block(f.body, 1, ())
        if f.ret:
            self.out(1, f"return {f.ret};")
        self.out(0, "}")


def glsl(k: Kernel, baked: list[int] | None = None) -> str:
    """The kernel's compute shader (``baked``: one case's whole parameter record, a standalone repro)."""
    functions = Emitter(k)
    for n, f in enumerate(k.functions):
        functions.function(n, f)
    main = Emitter(k)
    for kind in Kind:
        names = k.variables(kind)
        if names:
            main.out(1, f"{main.type(kind)} {', '.join(names)};")
    if k.array:
        main.out(1, f"{main.type(Kind.c)} r0[{k.array}];")
    main.block(k.body, 1, ())
    tc, sg = tile(k, Kind.c), main.sg
    for j, ref in enumerate(k.stores):
        main.out(1, f"coopMatStore({main.ref(ref)}, bufout.x, P({OUT - 1}u) + ({j * k.subgroups}u + {sg}) * {tc}u, "
                    f"{main.access(Kind.c)});")
    staged = {s.dst.kind for s, _ in k.walk() if isinstance(s, ir.Load) and s.shared}
    if any(isinstance(s, ir.Exchange) for s, _ in k.walk()):
        staged.add(Kind.c)
    shared = [f"shared {pointee(k, kind).glsl} sh{kind.value}[{k.subgroups * tile(k, kind)}];"
              for kind in Kind if kind in staged]
    types = {kind: pointee(k, kind).glsl for kind in Kind}
    extensions = ["GL_KHR_shader_subgroup_basic"] if k.subgroups > 1 else []
    if any(isinstance(s, ir.Loop) and s.unroll for s, _ in k.walk()):
        extensions.append("GL_EXT_control_flow_attributes")
    return render(SHARED_DIR, "kernel.comp.j2", k=k, local_size=k.c.workgroup_size * k.subgroups, extensions=extensions,
                  words=BUFFERS + k.words, baked=baked, types=types, out_type=k.c.component.glsl,
                  shared=shared, functions=functions.lines, main=main.lines)

