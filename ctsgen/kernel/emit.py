"""What every emitter of a kernel writes alike: structured control flow in a C-like language.

Loops, ``break``/``continue``, branches, calls, copies and sums, element access, the order of the
run-time words (``P(k)``) and each load's tile of its region are the same text in GLSL and in Slang;
:class:`Emitter` writes them once, and a language's emitter (:mod:`ctsgen.kernel.glsl`,
:mod:`ctsgen.kernel.slang`) says only what it spells differently: matrix loads and stores, the
MulAdd, the barrier, the loop attributes, a matrix's element count, its scalar constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ctsgen.kernel import ir
from ctsgen.kernel.ir import Kernel, Kind, Ref

#: Buffer bindings: A, B and Accumulator inputs, then the stored outputs; binding 0 holds the words.
BINDINGS = {Kind.a: 1, Kind.b: 2, Kind.c: 3}
OUT = 4
BUFFERS = 4


def staged(k: Kernel) -> set[Kind]:
    """The kinds the kernel stages through Workgroup memory (shared loads; an exchange or a probe:
    Accumulators)."""
    out = {s.dst.kind for s, _ in k.walk() if isinstance(s, ir.Load) and s.shared}
    if any(isinstance(s, ir.Exchange) or getattr(s, "probe", None) is not None for s, _ in k.walk()):
        out.add(Kind.c)
    return out


@dataclass
class Emitter:
    """One function's lines (``main`` or a kernel function). A language subclass sets ``SUBGROUP_ID``,
    ``LOOP_ATTRIBUTES``, ``LENGTH``, ``BARRIER`` and implements :meth:`scalar`, :meth:`load`,
    :meth:`muladd`, :meth:`exchange`, :meth:`share`, :meth:`type_name`, :meth:`store_output` and
    :meth:`function`."""

    k: Kernel
    lines: list[str] = field(default_factory=list)

    SUBGROUP_ID: ClassVar[str]
    LOOP_ATTRIBUTES: ClassVar[dict[str, str]]  # an ir.Loop's unroll -> the attribute written before `for`
    LENGTH: ClassVar[str]                      # a matrix's element count, as a method call: ".length()"
    BARRIER: ClassVar[str]                     # the statement of OpControlBarrier (Workgroup, WorkgroupMemory)

    def __post_init__(self) -> None:
        self.plan = self.k.plan
        self.sg = self.SUBGROUP_ID if self.k.subgroups > 1 else "0u"

    # -- the language's own ----------------------------------------------------------------------------
    def scalar(self) -> str:
        """The language's name of the Accumulator's component type."""
        raise NotImplementedError

    def load(self, s: ir.Load, d: int, first: str) -> None:
        """``s`` whose S tiles start at tile ``first`` of its kind's buffer (an expression)."""
        raise NotImplementedError

    def muladd(self, s: ir.MulAdd) -> str:
        raise NotImplementedError

    def exchange(self, s: ir.Exchange, d: int) -> None:
        raise NotImplementedError

    def share(self, value: str, offset: str) -> str:
        """The line storing Accumulator ``value`` to the Workgroup array ``shc`` at element ``offset``."""
        raise NotImplementedError

    def type_name(self, kind: Kind) -> str:
        """The language's name of ``kind``'s matrix type, in a declaration."""
        raise NotImplementedError

    def store_output(self, value: str, offset: str) -> str:
        """The line storing Accumulator ``value`` to the outputs' binding at element ``offset``."""
        raise NotImplementedError

    def function(self, n: int, f: ir.Function) -> None:
        raise NotImplementedError

    @classmethod
    def program(cls, k: Kernel) -> tuple[list[str], list[str]]:
        """(the struct's and the functions' lines, ``main``'s lines): the variables, the body, then every
        Accumulator, array element and Accumulator member stored to its slot (docs/pack-format.md "coopmat-kernel")."""
        functions = cls(k)
        if k.members:  # the local struct's type (GLSL and Slang spell a struct alike)
            fields = " ".join(f"{functions.type_name(Kind(m[0]))} {m};" for m in k.members)
            functions.out(0, f"struct S0 {{ {fields} }};")
        for n, f in enumerate(k.functions):
            functions.function(n, f)
        main = cls(k)
        for kind in Kind:
            names = k.variables(kind)
            if names:
                main.out(1, f"{main.type_name(kind)} {', '.join(names)};")
        if k.array:
            main.out(1, f"{main.type_name(Kind.c)} r0[{k.array}];")
        if k.members:
            main.out(1, "S0 s0;")
        main.block(k.body, 1, ())
        tc = k.c.rows * k.c.cols  # an Accumulator buffer's element is its component
        for j, ref in enumerate(k.stores):
            main.out(1, main.store_output(main.ref(ref), f"P({OUT - 1}u) + ({j * k.subgroups}u + {main.sg}) * {tc}u"))
        return functions.lines, main.lines

    # -- shared ----------------------------------------------------------------------------------------
    def constant(self, value: int) -> str:
        """A scalar constant of the Accumulator's component type (an unsigned one wraps)."""
        component = self.k.c.component
        if component.dtype.kind == "u":
            return f"{self.scalar()}({value % (1 << 8 * component.size)}u)"
        return f"{self.scalar()}({value})"

    def ref(self, r: Ref) -> str:
        if r.index is None:
            return r.var
        if isinstance(r.index, str):
            return f"{r.var}[{r.index} % {self.k.array}u]"
        return f"{r.var}[{r.index}]"

    def word(self, s: ir.Stmt) -> str:
        return f"P({BUFFERS + self.plan[id(s)]}u)"

    def out(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def probe(self, s: ir.If | ir.Break | ir.Continue, probe: Ref, d: int) -> str:
        """Write the read-back of ``probe`` (ctsgen/kernel/ir.py, "probes"); the condition it gives."""
        m = self.k.c
        t = m.rows * m.cols  # shc holds Accumulator components in both languages
        name = f"v{self.plan[id(s)]}"
        slot = self.sg if isinstance(s, ir.If) and s.per_subgroup else "0u"
        self.out(d, self.share(self.ref(probe), f"{self.sg} * {t}u"))
        self.out(d, self.BARRIER)
        self.out(d, f"{self.scalar()} {name} = shc[{slot} * {t}u + {s.at % t}u];")
        self.out(d, self.BARRIER)
        word = self.word(s)
        kind = m.component.dtype.kind
        threshold = word if kind == "u" else f"int({word})" if kind == "i" else f"{self.scalar()}(int({word}))"
        return f"({name} < {threshold})"

    def rotated(self, rot: int) -> str:
        """The subgroup whose tile this subgroup takes: (s + rot) % S."""
        return f"(({self.sg} + {rot}u) % {self.k.subgroups}u)" if self.k.subgroups > 1 else "0u"

    def block(self, body: tuple[ir.Stmt, ...], depth: int, loops: tuple[ir.Loop, ...]) -> None:
        for s in body:
            self.stmt(s, depth, loops)

    def first_tile(self, s: ir.Load, loops: tuple[ir.Loop, ...]) -> str:
        """The first of the S tiles ``s`` reads in this iteration: (base + it) * S, ``it`` the loop
        counters as a mixed-radix number (docs/pack-format.md "coopmat-kernel")."""
        it = "0u"
        for depth, loop in enumerate(loops):
            it = f"({it} * {loop.trips}u + {ir.COUNTERS[depth]})" if depth else ir.COUNTERS[0]
        return f"({self.plan[id(s)]}u + {it}) * {self.k.subgroups}u"

    def stmt(self, s: ir.Stmt, d: int, loops: tuple[ir.Loop, ...]) -> None:
        r = self.ref
        if isinstance(s, ir.Load):
            self.load(s, d, self.first_tile(s, loops))
        elif isinstance(s, ir.MulAdd):
            self.out(d, f"{r(s.dst)} = {self.muladd(s)};")
        elif isinstance(s, (ir.Binary, ir.Copy)):
            expr = r(s.x) if isinstance(s, ir.Copy) else f"{r(s.x)} {'-' if s.minus else '+'} {r(s.y)}"
            self.out(d, f"{r(s.dst)} = {expr};")
        elif isinstance(s, ir.ElementMap):
            x = r(s.dst)
            self.out(d, f"for (int e = 0; e < {x}{self.LENGTH}; ++e) {{ {x}[e] = {x}[e] * {self.constant(s.mul)} "
                        f"+ {self.constant(s.add)}; }}")
        elif isinstance(s, ir.ElementZip):
            x, y, z = r(s.dst), r(s.x), r(s.y)
            self.out(d, f"for (int e = 0; e < {x}{self.LENGTH}; ++e) {{ {x}[e] = {y}[e] "
                        f"{'-' if s.minus else '+'} {z}[e]; }}")
        elif isinstance(s, ir.Exchange):
            self.exchange(s, d)
        elif isinstance(s, ir.Loop):
            i = ir.COUNTERS[len(loops)]
            self.out(d, f"{self.LOOP_ATTRIBUTES.get(s.unroll or '', '')}for (uint {i} = 0u; {i} < {self.word(s)}; {i}++) {{")
            self.block(s.body, d + 1, loops + (s,))
            self.out(d, "}")
        elif isinstance(s, (ir.Break, ir.Continue)):
            cond = self.probe(s, s.probe, d) if s.probe is not None \
                else f"({ir.COUNTERS[len(loops) - 1]} == {self.word(s)})"
            self.out(d, f"if {cond} {s.OP};")
        elif isinstance(s, ir.If):
            cond = (self.probe(s, s.probe, d) if s.probe is not None
                    else f"((({self.word(s)} >> {self.sg}) & 1u) != 0u)" if s.per_subgroup else f"({self.word(s)} != 0u)")
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
            raise TypeError(f"no text for kernel statement {s.OP}")
