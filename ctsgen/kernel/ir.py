"""The kernel representation: structured statements over named cooperative-matrix variables.

A :class:`Kernel` is the compile-time signature of a shader: its MulAdd entry's three matrix types (A,
B, Accumulator, one subgroup's; ../shared/specs/SPV_KHR_cooperative_matrix.txt
OpCooperativeMatrixMulAddKHR), the subgroups of its workgroup, its variables, its functions and its
body. Run-time words (after the batch's buffer offsets) are read in preorder: one per loop (its trip
count), per ``break``/``continue`` (the iteration it leaves at) and per branch (its condition; for a
branch per subgroup, bit ``s`` is subgroup ``s``'s). Every statement a variant holds is one value; no
field is derived, so a kernel's JSON is its whole signature and its digest names the shader.

Variables: ``a0..`` (A), ``b0..`` (B), ``c0..`` (Accumulator), ``r0`` (an array of ``array``
Accumulators, indexed by a constant or a loop counter modulo its length), ``s0.NAME`` (a member of the
local struct ``s0``, ``members`` its members' names, each named as a variable of its kind: ``a0``,
``c1``); in a function, ``p0..`` are its parameters. Memory, per subgroup ``s`` of ``S``: each load statement owns a *region* of its
matrix kind's buffer (binding 1 A, 2 B, 3 Accumulator), one tile per iteration of the loops around it
and per subgroup: the tile of iteration ``it`` (the counters of the loops around it, outermost first,
as a mixed-radix number of their most trips) is tile ``(base + it) * S + s``. A shared load stages
the ``S`` tiles of that iteration into Workgroup memory with plain per-invocation copies, ``barrier()``,
and subgroup ``s`` loads tile ``(s + rot) % S`` from it; an exchange stores each subgroup's
Accumulator to Workgroup memory and loads back subgroup ``(s + rot) % S``'s between barriers. At the
end every Accumulator variable, then each array element, then each Accumulator member of ``s0``, is
stored to binding 4, slot ``j`` at tile ``j * S + s``.

Probes: a branch, ``break`` or ``continue`` with a ``probe`` (an Accumulator) decides on a value read
back from that matrix (docs/spec-decisions.md "kernel-readback"): every subgroup stores the probe to
its slot of the Workgroup array ``shc`` (as an exchange does), ``barrier()``, every invocation reads
element ``at`` of one slot (the tile in the Accumulator buffer's layout and stride), ``barrier()``;
the condition is ``v < threshold``, the threshold the statement's word converted to the
Accumulator's type from an int32 (an unsigned type: the word itself).
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from ctsgen.model.types import MatrixType
from ctsgen.ops.khr_addressing import Layout, Pointee


class Kind(str, enum.Enum):
    """A variable's matrix type, by its MulAdd role."""

    a = "a"
    b = "b"
    c = "c"


#: Loop counters, outermost first: a kernel nests loops at most this deep.
COUNTERS = ("i0", "i1")
MAX_DEPTH = len(COUNTERS)


@dataclass(frozen=True)
class Ref:
    """A variable, or one element of the array ``r0``: ``index`` a constant or a loop counter."""

    var: str
    index: int | str | None = None

    @property
    def kind(self) -> Kind:
        name = self.var.rsplit(".", 1)[-1]  # a struct member ("s0.a0") has its member's kind
        return Kind(name[0]) if name[0] in "ab" else Kind.c

    def to_json(self) -> Any:
        return self.var if self.index is None else [self.var, self.index]

    @classmethod
    def from_json(cls, o: Any) -> Ref:
        if isinstance(o, str):
            return cls(o)
        var, index = o
        if not isinstance(var, str) or not (isinstance(index, str) and index in COUNTERS
                                            or type(index) is int and index >= 0):
            raise ValueError(f"variable reference {o!r} -> a name, or [name, constant index or loop counter]")
        return cls(var, index)


class Stmt:
    """Base of the statements: ``OP`` is the JSON tag; ``refs`` the variables it names."""

    OP: ClassVar[str]
    TYPES: ClassVar[dict[str, type]] = {}
    #: Fields added after packs were written: left out of the JSON at their default, so an older
    #: kernel's JSON, digest and case names stay as they were.
    OPTIONAL: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        Stmt.TYPES[cls.OP] = cls

    def children(self) -> tuple[tuple[Stmt, ...], ...]:
        return ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.OP}
        for name, value in vars(self).items():
            if name in self.OPTIONAL and value == self.__dataclass_fields__[name].default:  # type: ignore[attr-defined]
                continue
            if isinstance(value, Ref):
                out[name] = value.to_json()
            elif isinstance(value, tuple) and all(isinstance(s, Stmt) for s in value):
                out[name] = [s.to_json() for s in value]
            else:
                out[name] = value
        return out

    @staticmethod
    def from_json(o: dict[str, Any]) -> Stmt:
        cls = Stmt.TYPES.get(o.get("op"))  # type: ignore[arg-type]
        if cls is None:
            raise ValueError(f"kernel statement {o.get('op')!r} -> one of {sorted(Stmt.TYPES)}")
        return cls.load(o)

    @classmethod
    def load(cls, o: dict[str, Any]) -> Stmt:
        """One statement of this class from its JSON: references, nested blocks and plain values."""
        kw: dict[str, Any] = {}
        for name, f in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
            if name not in o:
                continue
            value = o[name]
            kw[name] = (Ref.from_json(value) if f.type in ("Ref", "Ref | None") and value is not None
                        else tuple(Stmt.from_json(s) for s in value) if f.type == "tuple[Stmt, ...]" else value)
        return cls(**kw)


@dataclass(frozen=True)
class Load(Stmt):
    """``dst`` = the tile of its region for this iteration and subgroup (OpCooperativeMatrixLoadKHR);
    ``shared``: staged through Workgroup memory, subgroup s reading subgroup (s + rot) % S's tile."""

    OP: ClassVar[str] = "load"
    dst: Ref
    shared: bool = False
    rot: int = 0


@dataclass(frozen=True)
class MulAdd(Stmt):
    OP: ClassVar[str] = "muladd"
    dst: Ref
    a: Ref
    b: Ref
    c: Ref


@dataclass(frozen=True)
class Binary(Stmt):
    """``dst = x + y`` (``minus``: ``x - y``) of two Accumulators."""

    OP: ClassVar[str] = "binary"
    dst: Ref
    x: Ref
    y: Ref
    minus: bool = False


@dataclass(frozen=True)
class Copy(Stmt):
    OP: ClassVar[str] = "copy"
    dst: Ref
    x: Ref


@dataclass(frozen=True)
class ElementMap(Stmt):
    """``for e < dst.length(): dst[e] = dst[e] * mul + add`` (OpCooperativeMatrixLengthKHR, composite
    access: "The mapping of components to invocations and indexes is implementation-dependent", so
    the same function of every element is the only result defined)."""

    OP: ClassVar[str] = "elementmap"
    dst: Ref
    mul: int = 1
    add: int = 0


@dataclass(frozen=True)
class ElementZip(Stmt):
    """``for e: dst[e] = x[e] +- y[e]`` over three Accumulators of one type: the same
    implementation-dependent mapping on each (docs/spec-decisions.md "kernel-element-access")."""

    OP: ClassVar[str] = "elementzip"
    dst: Ref
    x: Ref
    y: Ref
    minus: bool = False


@dataclass(frozen=True)
class Exchange(Stmt):
    """Each subgroup stores ``var`` to Workgroup memory, ``barrier()``, loads subgroup (s + rot) % S's,
    ``barrier()``."""

    OP: ClassVar[str] = "exchange"
    var: Ref
    rot: int = 1


@dataclass(frozen=True)
class Loop(Stmt):
    """A counted loop, at most ``trips`` iterations; its word is the run-time trip count (dynamically
    uniform). ``unroll``: None, "unroll" or "dont_unroll" (GL_EXT_control_flow_attributes)."""

    OP: ClassVar[str] = "loop"
    body: tuple[Stmt, ...]
    trips: int
    unroll: str | None = None

    def children(self) -> tuple[tuple[Stmt, ...], ...]:
        return (self.body,)


def check_probe(probe: Ref | None, at: Any) -> None:
    """A probe is an Accumulator and ``at`` an element index (module docstring, "probes")."""
    if type(at) is not int or at < 0 or probe is not None and (not isinstance(probe, Ref) or probe.kind is not Kind.c):
        raise ValueError(f"a condition's probe {probe!r} at {at!r} -> an Accumulator variable and an element index >= 0")


@dataclass(frozen=True)
class Break(Stmt):
    """``if (counter == word) break;`` of the innermost loop: a dynamically uniform condition. With a
    ``probe`` (an Accumulator): ``if (v < threshold) break;``, ``v`` read back from the matrix
    (module docstring, "probes", always subgroup 0's slot here: the loop stays workgroup-uniform)."""

    OP: ClassVar[str] = "break"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("probe", "at")
    probe: Ref | None = None
    at: int = 0

    def __post_init__(self) -> None:
        check_probe(self.probe, self.at)


@dataclass(frozen=True)
class Continue(Stmt):
    """As :class:`Break`, to the next iteration."""

    OP: ClassVar[str] = "continue"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("probe", "at")
    probe: Ref | None = None
    at: int = 0

    def __post_init__(self) -> None:
        check_probe(self.probe, self.at)


@dataclass(frozen=True)
class If(Stmt):
    """``if (word != 0)`` (uniform), or ``per_subgroup``: ``if ((word >> gl_SubgroupID & 1) != 0)``,
    uniform within each subgroup, the Scope of the matrices (SPV_KHR_cooperative_matrix: "all the
    invocations in the 'Scope' instance are active or none of them are"). With a ``probe`` (an
    Accumulator): ``if (v < threshold)``, ``v`` read back from the matrix (module docstring, "probes"): element
    ``at`` of subgroup 0's slot (the whole workgroup's value), or of its own (``per_subgroup``)."""

    OP: ClassVar[str] = "if"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("probe", "at")
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()
    per_subgroup: bool = False
    probe: Ref | None = None
    at: int = 0

    def __post_init__(self) -> None:
        check_probe(self.probe, self.at)

    def children(self) -> tuple[tuple[Stmt, ...], ...]:
        return (self.then, self.orelse)


@dataclass(frozen=True)
class Call(Stmt):
    """``dst = f(args)`` (``dst`` None: a call for its ``out``/``inout`` parameters)."""

    OP: ClassVar[str] = "call"
    fn: int
    args: tuple[Any, ...]
    dst: Ref | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.OP, "fn": self.fn, "args": [r.to_json() for r in self.args]}
        if self.dst is not None:
            out["dst"] = self.dst.to_json()
        return out

    @classmethod
    def load(cls, o: dict[str, Any]) -> Call:
        return cls(int(o["fn"]), tuple(Ref.from_json(r) for r in o["args"]),
                    None if o.get("dst") is None else Ref.from_json(o["dst"]))


@dataclass(frozen=True)
class Function:
    """A function over matrices: parameter ``pK`` of kind ``kinds[K]`` and qualifier ``quals[K]``
    (``in``, ``inout``, ``out``); its body's statements name only its parameters; it returns
    parameter ``ret`` (an Accumulator) or nothing."""

    kinds: tuple[Kind, ...]
    quals: tuple[str, ...]
    body: tuple[Stmt, ...]
    ret: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kinds": [k.value for k in self.kinds], "quals": list(self.quals),
                "body": [s.to_json() for s in self.body], "ret": self.ret}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> Function:
        return cls(tuple(Kind(k) for k in o["kinds"]), tuple(str(q) for q in o["quals"]),
                   tuple(Stmt.from_json(s) for s in o["body"]), o.get("ret"))


#: Statements that end in a word of their own, in preorder (the others read none).
WORDED = (Loop, Break, Continue, If)


@dataclass(frozen=True)
class Kernel:
    """The whole compile-time signature (module docstring)."""

    a: MatrixType
    b: MatrixType
    c: MatrixType
    subgroups: int
    counts: tuple[int, int, int]          # A, B, Accumulator variables
    array: int                            # length of the Accumulator array r0 (0: none)
    layouts: tuple[Layout, Layout, Layout]  # each buffer's MemoryLayout (A, B, Accumulator)
    pointees: tuple[Pointee | None, Pointee | None]  # A's and B's buffer and shared array element
    functions: tuple[Function, ...]
    body: tuple[Stmt, ...]
    members: tuple[str, ...] = ()         # the local struct s0's members (none: no struct)

    def matrix(self, kind: Kind) -> MatrixType:
        return {Kind.a: self.a, Kind.b: self.b, Kind.c: self.c}[kind]

    def variables(self, kind: Kind) -> list[str]:
        return [f"{kind.value}{k}" for k in range(self.counts["abc".index(kind.value)])]

    def fields(self, kind: Kind) -> list[str]:
        """The struct's members of ``kind``, as references name them (``s0.c0``)."""
        return [f"s0.{m}" for m in self.members if m[0] == kind.value]

    @cached_property
    def stores(self) -> tuple[Ref, ...]:
        """The values stored at the end, slot by slot: every Accumulator, then each array element, then
        each Accumulator member of the struct."""
        return tuple([Ref(v) for v in self.variables(Kind.c)] + [Ref("r0", k) for k in range(self.array)]
                     + [Ref(v) for v in self.fields(Kind.c)])

    def walk(self) -> Iterator[tuple[Stmt, tuple[Loop, ...]]]:
        """Every statement of the body in preorder, with the loops around it (outermost first)."""
        def go(block: tuple[Stmt, ...], loops: tuple[Loop, ...]) -> Iterator[tuple[Stmt, tuple[Loop, ...]]]:
            for s in block:
                yield s, loops
                for child in s.children():
                    yield from go(child, loops + ((s,) if isinstance(s, Loop) else ()))
        return go(self.body, ())

    @cached_property
    def _layout(self) -> tuple[dict[int, int], int, tuple[int, int, int]]:
        """One preorder walk: each statement's place (by identity) in the words or in its kind's
        buffer, the words, and each buffer's tiles per subgroup."""
        plan: dict[int, int] = {}
        words = 0
        base = [0, 0, 0]
        for s, loops in self.walk():
            if id(s) in plan:
                raise ValueError("a kernel statement object appears twice in the body -> build each statement anew")
            if isinstance(s, WORDED):
                plan[id(s)] = words
                words += 1
            elif isinstance(s, Load):
                k = "abc".index(s.dst.kind.value)
                plan[id(s)] = base[k]
                base[k] += tiles_of(loops)
        return plan, words, (base[0], base[1], base[2])

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without the cached layout: the plan is keyed by the statements' identities,
        which a copy does not keep (a worker process would look up ids of the sender's objects)."""
        return {k: v for k, v in self.__dict__.items() if k != "_layout"}

    @property
    def plan(self) -> dict[int, int]:
        """Each worded statement's word and each load's first tile (per subgroup) of its region, by the
        statement's identity, in preorder (docs/pack-format.md "coopmat-kernel"). Computed once a kernel."""
        return self._layout[0]

    @property
    def words(self) -> int:
        return self._layout[1]

    @property
    def regions(self) -> tuple[int, int, int]:
        """Tiles per subgroup each buffer's loads read (A, B, Accumulator)."""
        return self._layout[2]

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a.to_json(), "b": self.b.to_json(), "c": self.c.to_json(), "subgroups": self.subgroups,
                "counts": list(self.counts), "array": self.array, "layouts": [x.value for x in self.layouts],
                "pointees": [None if p is None else p.to_json() for p in self.pointees],
                "functions": [f.to_json() for f in self.functions], "body": [s.to_json() for s in self.body],
                **({"members": list(self.members)} if self.members else {})}  # absent in older packs

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> Kernel:
        return cls(MatrixType.from_json(o["a"]), MatrixType.from_json(o["b"]), MatrixType.from_json(o["c"]),
                   int(o["subgroups"]), tuple(int(n) for n in o["counts"]), int(o["array"]),  # type: ignore[arg-type]
                   tuple(Layout(x) for x in o["layouts"]),  # type: ignore[arg-type]
                   tuple(None if p is None else Pointee.from_json(p) for p in o["pointees"]),  # type: ignore[arg-type]
                   tuple(Function.from_json(f) for f in o["functions"]), tuple(Stmt.from_json(s) for s in o["body"]),
                   members(o.get("members", ())))

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:10]


def members(o: Any) -> tuple[str, ...]:
    """A struct's member names from JSON: distinct, each a kind's letter and an index (``a0``, ``c1``)."""
    names = tuple(o)
    if len(set(names)) != len(names) or not all(isinstance(n, str) and len(n) >= 2 and n[0] in "abc"
                                                and n[1:].isdigit() for n in names):
        raise ValueError(f"struct members {o!r} -> distinct names of a kind's letter and an index, like 'c0'")
    return names


def tiles_of(loops: tuple[Loop, ...]) -> int:
    """Iterations of the loops around a statement, at their most trips (1 outside every loop)."""
    n = 1
    for loop in loops:
        n *= loop.trips
    return max(n, 1)
