"""Strategies for kernels (:mod:`ctsgen.kernel.ir`): valid by construction for a device profile.

A kernel is drawn statement by statement into a growing tree. Each step draws a statement kind from
those its place allows, computed, never filtered: matrix instructions only in control flow uniform
within the subgroup (SPV_KHR_cooperative_matrix: "all the invocations in the 'Scope' instance are
active or none of them are"); ``barrier()`` (shared loads, exchanges) only in workgroup-uniform
control flow (GLSL: barrier() "may only be placed ... in uniform control flow"), so never inside a
per-subgroup branch or a function, and so no probe there (a branch, ``break`` or ``continue`` whose
condition is read back from an Accumulator through Workgroup memory between barriers;
docs/spec-decisions.md "kernel-readback"); ``break``/``continue`` only in a loop; loops nested at most
:data:`ctsgen.kernel.ir.MAX_DEPTH`; Workgroup memory within maxComputeSharedMemorySize; MulAdds within
a build budget (:data:`BUILD_PIECES`). A float kernel stays in its exact domain
(:func:`ctsgen.kernel.evaluate.exact`): a drawn arithmetic statement whose bound would leave it
becomes a load of its destination instead, which lowers every later bound (the bounds are monotone),
so the kernel drawn so far stays valid.

Shrinking moves toward today's straight-line program: fewer statements (each block's length is
drawn first and shrinks to 0), the simplest kinds first (MulAdd, then arithmetic, then control
flow), one subgroup, global memory, row-major, the first (simplest) MulAdd entry; a case's trip
counts shrink to 1 and then 0, branch conditions to the ``then`` side; a probed condition shrinks to the plain word's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile
from ctsgen.kernel import evaluate as kernel_eval
from ctsgen.kernel import glsl as kernel_glsl
from ctsgen.kernel import ir
from ctsgen.kernel.emit import staged
from ctsgen.kernel.ir import Kernel, Kind, Ref
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2 import MAX_SUBGROUPS, profile_key
from ctsgen.ops.khr_addressing import Layout, Pointee, line_length
from ctsgen.strategies.cached import integers, sampled

#: Every construct a family may ask for (:class:`KernelShape`).
CONSTRUCTS = ("loop", "break", "unroll", "branch", "subgroup-branch", "call", "array", "shared", "exchange",
              "element", "readback", "struct")
#: Whether a block has another statement: 0 ends it (five in six go on), and shrinks to 0.
MORE = integers(0, 5)
#: A/B and Accumulator component types a kernel draws (the types every profile here pairs in a MulAdd).
AB_TYPES = (ComponentType.float16, ComponentType.sint8, ComponentType.uint8)
C_TYPES = (ComponentType.float32, ComponentType.float16, ComponentType.sint32, ComponentType.uint32)
#: A kernel's MulAdds cost at most this many 8x8x8 pieces (M*N*K/512 each, times the iterations an
#: [[unroll]] loop copies it, times 5.5 for a float16 Accumulator): lavapipe builds at the first
#: dispatch, and its build time grows faster than linearly past 64 pieces (docs/validation.md,
#: "lavapipe build time").
BUILD_PIECES = 32
F16_ACC_COST = 5.5


@dataclass(frozen=True)
class Entry:
    """One MulAdd signature a kernel is built on: A (M x K), B (K x N), Accumulator (M x N), one
    subgroup's types; ``flexible``: sizes from a flexible-dimensions entry, not a listed size."""

    a: MatrixType
    b: MatrixType
    c: MatrixType
    flexible: bool

    @property
    def pieces(self) -> float:
        cost = self.a.rows * self.b.cols * self.a.cols / 512
        return cost * (F16_ACC_COST if self.c.component is ComponentType.float16 else 1.0)


@dataclass(frozen=True)
class KernelShape:
    """Bounds on a drawn kernel: keyword arguments, as Hypothesis's array strategies take them."""

    constructs: tuple[str, ...] = CONSTRUCTS
    max_block: int = 6          # statements per block (the top level gets twice as many)
    max_trips: int = 4          # a loop's most iterations
    max_subgroups: int = MAX_SUBGROUPS


def entries(profile: DeviceProfile) -> tuple[Entry, ...]:
    """The profile's Subgroup-scope MulAdd entries ctsgen's kernels model, simplest first: each listed
    VK_KHR_cooperative_matrix size, and each flexible-dimensions entry at 1 to 3 granules a side
    (within cooperativeMatrixFlexibleDimensionsMaxDimension), no SaturatingAccumulation, within half
    the build budget."""
    key = profile_key(profile)
    if key not in _ENTRIES:
        _ENTRIES[key] = _entries(profile)
    return _ENTRIES[key]


_ENTRIES: dict[tuple, tuple[Entry, ...]] = {}


def _entries(profile: DeviceProfile) -> tuple[Entry, ...]:
    out: dict[Entry, None] = {}
    wg = profile.subgroup_size

    def add(types: list[ComponentType | None], m: int, n: int, k: int, flexible: bool) -> None:
        a, b, c, r = types
        if a not in AB_TYPES or b is not a or c not in C_TYPES or r is not c:
            return
        e = Entry(MatrixType(a, Scope.Subgroup, m, k, MatrixUse.A, wg), MatrixType(b, Scope.Subgroup, k, n, MatrixUse.B, wg),
                  MatrixType(c, Scope.Subgroup, m, n, MatrixUse.Accumulator, wg), flexible)
        if e.pieces <= BUILD_PIECES / 2:
            out[e] = None

    if profile.has_feature("cooperativeMatrix"):
        for e in profile.coopmat_khr:
            if e["scope"] == Scope.Subgroup.value and not e["saturatingAccumulation"]:
                add(_types(e), e["MSize"], e["NSize"], e["KSize"], False)
        if profile.has_feature("cooperativeMatrixFlexibleDimensions"):
            limit = profile.flexible_max_dimension
            for e in profile.flexible_dimensions:
                if e["scope"] != Scope.Subgroup.value or e["saturatingAccumulation"]:
                    continue
                g = (e["MGranularity"], e["NGranularity"], e["KGranularity"])
                for km in range(1, 4):
                    for kn in range(1, 4):
                        for kk in range(1, 4):
                            m, n, k = g[0] * km, g[1] * kn, g[2] * kk
                            if max(m, n, k) <= limit:
                                add(_types(e), m, n, k, True)
    return tuple(sorted(out, key=lambda e: (e.flexible, e.pieces, e.c.component.name != "float32",
                                            e.a.component.name, e.a.rows, e.b.cols, e.a.cols)))


def _types(e: dict[str, Any]) -> list[ComponentType | None]:
    return [ComponentType.from_vk(e[k]) for k in ("AType", "BType", "CType", "ResultType")]


# -- the tree being drawn -------------------------------------------------------------------------------

class Block(list):  # type: ignore[type-arg]
    """A block being drawn: statements, and the compound ones as :class:`Open`."""


@dataclass
class Open:
    """A loop or branch whose blocks are still being drawn."""

    make: Callable[..., ir.Stmt]
    blocks: tuple[Block, ...]


def freeze(block: Block) -> tuple[ir.Stmt, ...]:
    return tuple(s.make(*[freeze(b) for b in s.blocks]) if isinstance(s, Open) else s for s in block)


@dataclass
class Place:
    """Where the next statement goes: its block, the loops around it, and what its place allows."""

    block: Block
    loops: tuple[int, ...]        # each enclosing loop's most trips, outermost first
    unrolled: int                 # copies an enclosing [[unroll]] makes of a statement here
    per_subgroup: bool            # inside a per-subgroup branch
    loop_body: bool               # directly in a loop's body (where break and continue go)


class Builder:
    """The draw of one kernel (module docstring)."""

    def __init__(self, draw: st.DrawFn, profile: DeviceProfile, shape: KernelShape) -> None:
        self.draw, self.profile, self.shape = draw, profile, shape
        self.allowed = set(shape.constructs)
        es = entries(profile)
        self.entry = draw(sampled(es))
        self.S = draw(integers(1, max(1, min(shape.max_subgroups,
                                             profile.subgroup_workgroup_limit() // self.entry.c.workgroup_size))))
        self.counts = (1 + draw(integers(0, 1)), 1 + draw(integers(0, 1)), 1 + draw(integers(0, 3)))
        self.array = draw(sampled((0, 2, 3, 4))) if "array" in self.allowed else 0
        self.members = self.struct() if "struct" in self.allowed else ()
        self.layouts = tuple(draw(sampled((Layout.RowMajor, Layout.ColumnMajor))) for _ in range(3))
        self.pointees = tuple(draw(sampled(pointee_choices(m, lay)))
                              for m, lay in ((self.entry.a, self.layouts[0]), (self.entry.b, self.layouts[1])))
        self.exact_float = self.entry.c.component.is_float
        self.cost = 0.0
        self.functions: list[ir.Function] = []
        self.root = Block()
        self.force_probe = False  # the readback stratum's last statement: a probed branch

    def struct(self, least: int = 0) -> tuple[str, ...]:
        """The local struct's members: none (shrinks there), one or two matrices of any kind, each
        named as a variable of its kind (GLSL_KHR_cooperative_matrix and Slang both take cooperative
        matrices as members of a local struct: docs/spec-decisions.md "kernel-structs")."""
        names: list[str] = []
        for _ in range(self.draw(integers(least, 2))):
            kind = self.draw(sampled((Kind.c, Kind.a, Kind.b)))
            names.append(f"{kind.value}{sum(n[0] == kind.value for n in names)}")
        return tuple(names)

    # -- the kernel so far ----------------------------------------------------------------------------
    def kernel(self, root: Block | None = None) -> Kernel:
        e = self.entry
        return Kernel(e.a, e.b, e.c, self.S, self.counts, self.array, self.layouts,  # type: ignore[arg-type]
                      self.pointees, tuple(self.functions), freeze(self.root if root is None else root), self.members)

    def fits(self, s: ir.Stmt | Open) -> bool:
        """Whether the kernel with ``s`` just added stays exact and within Workgroup memory. Only what
        ``s`` can change is checked: a load, an exchange or an empty loop or branch lowers or keeps
        every bound, and only a shared load or an exchange declares Workgroup memory."""
        if isinstance(s, (ir.Load, ir.Exchange)) and (isinstance(s, ir.Exchange) or s.shared):
            return kernel_glsl.shared_bytes(self.kernel()) <= \
                self.profile.properties.get("maxComputeSharedMemorySize", 16384)
        if isinstance(s, (Open, ir.Load, ir.Exchange)) or not self.exact_float:
            return True
        return kernel_eval.exact(self.kernel())

    def probe(self, place: Place) -> tuple[Ref | None, int]:
        """A probe for a condition here, or none: only in workgroup-uniform control flow (its read-back
        has barriers), and only where Accumulator staging fits in Workgroup memory. Drawn as a boolean
        first, which shrinks to False: the plain word's condition."""
        if "readback" not in self.allowed or place.per_subgroup or not (self.force_probe or self.draw(st.booleans())):
            return None, 0
        k = self.kernel()
        extra = 0 if Kind.c in staged(k) else \
            self.S * kernel_glsl.tile(k, Kind.c) * kernel_glsl.pointee(k, Kind.c).size
        if kernel_glsl.shared_bytes(k) + extra > self.profile.properties.get("maxComputeSharedMemorySize", 16384):
            return None, 0
        return self.ref(Kind.c, place), self.draw(integers(0, self.entry.c.rows * self.entry.c.cols - 1))

    def put(self, place: Place, s: ir.Stmt | Open, fallback: ir.Stmt | None) -> None:
        """Append ``s``; where the kernel would leave its exact domain or Workgroup memory, ``fallback``
        (or nothing) instead."""
        place.block.append(s)
        if not self.fits(s):
            place.block.pop()
            if fallback is not None:
                place.block.append(fallback)

    # -- references -----------------------------------------------------------------------------------
    def refs(self, kind: Kind, place: Place) -> tuple[Ref, ...]:
        out = [Ref(f"{kind.value}{k}") for k in range(self.counts["abc".index(kind.value)])]
        out += [Ref(f"s0.{m}") for m in self.members if m[0] == kind.value]
        if kind is Kind.c and self.array:
            out += [Ref("r0", k) for k in range(self.array)]
            out += [Ref("r0", ir.COUNTERS[d]) for d in range(len(place.loops))]
        return tuple(out)

    def ref(self, kind: Kind, place: Place) -> Ref:
        return self.draw(sampled(self.refs(kind, place)))

    # -- statements -----------------------------------------------------------------------------------
    def kinds(self, place: Place) -> tuple[str, ...]:
        """The statement kinds this place allows, simplest first."""
        a = self.allowed
        muladd_fits = self.cost + self.entry.pieces * place.unrolled <= BUILD_PIECES
        out = ["muladd"] if muladd_fits else []
        out += ["binary", "copy", "load"]
        if "element" in a:
            out += ["elementmap", "elementzip"]
        uniform = not place.per_subgroup
        if "shared" in a and uniform:
            out.append("shared")
        if "exchange" in a and uniform:
            out.append("exchange")
        if "loop" in a and len(place.loops) < ir.MAX_DEPTH:
            out.append("loop")
        if place.loop_body and "break" in a:
            out += ["break", "continue"]
        if "branch" in a:
            out.append("if")
        if "subgroup-branch" in a and self.S > 1:
            out.append("if-subgroup")
        if "call" in a and muladd_fits:
            out.append("call")
        return tuple(out)

    def block(self, place: Place, most: int) -> None:
        """Up to ``most`` statements, each after a draw that says another follows (0 of 0..5 ends the
        block): deleting one statement's span of choices deletes that statement, so Hypothesis's
        shrinker removes statements one by one, as it removes a list's elements."""
        for _ in range(most):
            if not self.draw(MORE):
                return
            self.statement(place)

    def statement(self, place: Place) -> None:
        self.make(self.draw(sampled(self.kinds(place))), place)

    def make(self, kind: str, place: Place) -> None:
        d = self.draw
        dst = self.ref(Kind.c, place)
        if kind == "muladd":
            self.cost += self.entry.pieces * place.unrolled
            self.put(place, ir.MulAdd(dst, self.ref(Kind.a, place), self.ref(Kind.b, place), self.ref(Kind.c, place)),
                     ir.Load(dst))
        elif kind in ("binary", "elementzip"):
            cls = ir.Binary if kind == "binary" else ir.ElementZip
            self.put(place, cls(dst, self.ref(Kind.c, place), self.ref(Kind.c, place), d(st.booleans())), ir.Load(dst))
        elif kind == "copy":
            self.put(place, ir.Copy(dst, self.ref(Kind.c, place)), None)
        elif kind == "load":
            target = self.ref(d(sampled((Kind.c, Kind.a, Kind.b))), place)
            self.put(place, ir.Load(target), None)
        elif kind == "elementmap":
            muls = (1, 2, -1) if self.entry.c.component.dtype.kind != "u" else (1, 2, 3)
            self.put(place, ir.ElementMap(dst, d(sampled(muls)), d(sampled((1, 0, -1)))), ir.Load(dst))
        elif kind == "shared":
            target = self.ref(d(sampled((Kind.a, Kind.b))), place)
            self.put(place, ir.Load(target, True, d(integers(0, self.S - 1))), None)
        elif kind == "exchange":
            self.put(place, ir.Exchange(dst, d(integers(0, self.S - 1))), None)
        elif kind in ("break", "continue"):
            probe, at = self.probe(place)
            self.put(place, (ir.Break if kind == "break" else ir.Continue)(probe, at), None)
        elif kind == "loop":
            self.loop(place)
        elif kind in ("if", "if-subgroup"):
            self.branch(place, kind == "if-subgroup")
        else:
            self.call(place, dst)

    def loop(self, place: Place) -> None:
        trips = self.draw(integers(1, self.shape.max_trips))
        unroll = self.draw(sampled((None, "dont_unroll", "unroll"))) if "unroll" in self.allowed else None
        body = Block()
        place.block.append(Open(lambda b: ir.Loop(b, trips, unroll), (body,)))  # empty: no bound moves
        self.block(Place(body, place.loops + (trips,), place.unrolled * (trips if unroll == "unroll" else 1),
                         place.per_subgroup, True), self.shape.max_block)

    def branch(self, place: Place, per_subgroup: bool) -> None:
        then, orelse = Block(), Block()
        probe, at = self.probe(place)
        place.block.append(Open(lambda t, e: ir.If(t, e, per_subgroup, probe, at), (then, orelse)))
        for b in (then, orelse):
            self.block(Place(b, place.loops, place.unrolled, place.per_subgroup or per_subgroup, False),
                       max(1, self.shape.max_block // 2))

    def call(self, place: Place, dst: Ref) -> None:
        """A call of a new function or of one drawn before (functions are called more than once)."""
        d = self.draw
        n = len(self.functions)
        fn = d(integers(0, n)) if n < 2 else d(integers(0, n - 1))
        if fn == n:
            self.functions.append(self.function())
        f = self.functions[fn]
        args: list[Ref] = []
        written: set[str] = set()  # GLSL leaves the order of two copy-backs to one variable unspecified
        for kind, qual in zip(f.kinds, f.quals):
            pool = self.refs(kind, place)
            if qual != "in":  # a function writes back at most as many parameters as there are variables
                pool = tuple(r for r in pool if r.var not in written)
            ref = self.draw(sampled(pool))
            args.append(ref)
            if qual != "in":
                written.add(ref.var)
        result = dst if f.ret is not None and dst.var not in written else None
        self.cost += self.entry.pieces * place.unrolled * sum(isinstance(s, ir.MulAdd) for s in f.body)
        self.put(place, ir.Call(fn, tuple(args), result), None)

    def function(self) -> ir.Function:
        """(in A, in B, in/inout C, out/inout C): a MulAdd into the fourth (written first, as an ``out``
        parameter must be), then up to two more statements over the parameters; it returns one of
        its Accumulators or nothing."""
        d = self.draw
        two = self.counts[2] + (1 if self.array else 0) + sum(m[0] == "c" for m in self.members) > 1  # variables a call can write back to
        quals = ("in", "in", d(sampled(("inout", "in"))) if two else "in", d(sampled(("out", "inout"))))
        p = [Ref(f"p{k}") for k in range(4)]
        body: list[ir.Stmt] = [ir.MulAdd(p[3], p[0], p[1], p[2])]
        for _ in range(d(integers(0, 2))):
            op = d(sampled(("muladd", "map", "add")))
            target = d(sampled((p[2], p[3])))
            body.append(ir.MulAdd(target, p[0], p[1], target) if op == "muladd"
                        else ir.ElementMap(target, d(sampled((1, 2))), d(sampled((0, 1))))
                        if op == "map" and "element" in self.allowed
                        else ir.Binary(target, p[2], p[3]))
        return ir.Function((Kind.a, Kind.b, Kind.c, Kind.c), quals, tuple(body), d(sampled((None, "p3", "p2"))))

    def build(self, ensure: str | None = None) -> Kernel:
        """The kernel; ``ensure``: one of :data:`ENSURED`, whose statement ends the kernel where the
        drawn one holds none (a stratum of a pack)."""
        top = Place(self.root, (), 1, False, False)
        if ensure == "struct" and not self.members:
            self.members = self.struct(least=1)
        for kind in Kind:  # every variable defined before any use
            for ref in self.refs(kind, top):
                self.root.append(ir.Load(ref))
        self.block(top, 2 * self.shape.max_block)
        if ensure is not None and not any(ENSURED[ensure](s) for s, _ in self.kernel().walk()):
            self.force_probe = ensure == "readback"
            self.make({"branch": "if", "element": "elementmap", "readback": "if"}.get(ensure, ensure), top)
        return self.kernel()


def pointee_choices(m: MatrixType, layout: Layout) -> tuple[Pointee | None, ...]:
    """The component itself, or a vector over a line's bytes (f16vec4, uvec4) where a line holds a
    whole number of them: strides and tile offsets in pointee elements stay whole."""
    line = line_length(layout, m.rows, m.cols) * m.component.size
    out: list[Pointee | None] = [None]
    if m.component is ComponentType.float16 and line % 8 == 0:
        out.append(Pointee("float16", 4))
    if line % 16 == 0:
        out.append(Pointee("uint32", 4))
    return tuple(out)


#: The constructs a stratum may ensure, by the statement that holds each.
ENSURED: dict[str, Callable[[ir.Stmt], bool]] = {
    "loop": lambda s: isinstance(s, ir.Loop), "branch": lambda s: isinstance(s, ir.If),
    "call": lambda s: isinstance(s, ir.Call), "shared": lambda s: isinstance(s, ir.Load) and s.shared,
    "exchange": lambda s: isinstance(s, ir.Exchange),
    "element": lambda s: isinstance(s, (ir.ElementMap, ir.ElementZip)),
    "readback": lambda s: getattr(s, "probe", None) is not None,
    "struct": lambda s: any(r.var.startswith("s0.") for r in refs_of(s))}


def refs_of(s: ir.Stmt) -> list[Ref]:
    """The variables a statement names (its own, not its blocks')."""
    return [v for v in vars(s).values() if isinstance(v, Ref)] + [r for r in getattr(s, "args", ()) if isinstance(r, Ref)]


@st.composite
def kernels(draw: st.DrawFn, profile: DeviceProfile, shape: KernelShape = KernelShape(), *,
            ensure: str | None = None) -> Kernel:
    """A kernel valid on ``profile`` within ``shape`` (module docstring), holding ``ensure``."""
    return Builder(draw, profile, shape).build(ensure)


# -- a case's run-time words ----------------------------------------------------------------------------

def trip_count(most: int) -> st.SearchStrategy[int]:
    """0..most, shrinking to 1 (one iteration: the straight-line program), then to 0."""
    return integers(0, most).map(lambda t: 1 if t == 0 else 0 if t == 1 else t)


def threshold(c: ComponentType) -> st.SearchStrategy[int]:
    """A probe's threshold word, drawn where both sides are reachable: a float Accumulator holds small
    integers (inputs in [-2, 2]; sums spread around 0), so -3..3 as an int32; an integer one any value
    of its type, so the whole int32 range (an unsigned type's shrinks to its middle, 2^31, not to 0,
    below which no value lies)."""
    if c.is_float:
        return integers(-3, 3).map(lambda v: v & 0xFFFFFFFF)
    shift = 1 << 31 if c.dtype.kind == "u" else 0
    return integers(-(1 << 31), (1 << 31) - 1).map(lambda v: (v + shift) & 0xFFFFFFFF)


def words(kernel: Kernel) -> st.SearchStrategy[tuple[int, ...]]:
    """One word per worded statement in preorder: a trip count, the iteration a break/continue leaves at
    (its loop's most trips: never), a condition (per subgroup: one bit a subgroup), a probe's threshold."""
    parts: list[st.SearchStrategy[int]] = []
    for s, loops in kernel.walk():
        if getattr(s, "probe", None) is not None:
            parts.append(threshold(kernel.c.component))
        elif isinstance(s, ir.Loop):
            parts.append(trip_count(s.trips))
        elif isinstance(s, (ir.Break, ir.Continue)):
            parts.append(integers(0, loops[-1].trips))
        elif isinstance(s, ir.If):
            parts.append(integers(0, (1 << kernel.subgroups) - 1) if s.per_subgroup
                         else integers(0, 1).map(lambda b: 1 - b))
    return st.tuples(*parts)
