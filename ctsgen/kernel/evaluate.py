"""What a kernel computes: one case's evaluation, vectorised over its workgroup's subgroups.

Every value is an array with a leading subgroup axis (``S x rows x cols``; the array ``r0``:
``length x S x rows x cols``), so one numpy operation computes a statement for every subgroup;
Python loops only over a loop's iterations and a batch's cases, never over elements. Values are
exact: float64 for float kernels (every value an integer within :data:`EXACT` of the Accumulator's
type, :func:`bounds`), int64 for integer ones, wrapped to the Accumulator's width after each
operation (SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR without SaturatingAccumulation:
"the resulting value will equal the low-order N bits of the correct result R"; OpIAdd, OpISub,
OpIMul wrap likewise).

The rules, each a function of this module, looked up here at call time, so a mutant replaces one
(``ctsgen.kernel.evaluate:NAME``, docs/architecture.md "Adding a family", mutant targets):

* :func:`carried`: a loop's carried values at the start of the next iteration are the values the
  last iteration ended with (a phi at the loop header);
* :func:`merge`: after a branch each subgroup has the values of the side its condition chose;
* :func:`visible`: after ``barrier()`` a reader sees what was written before it (Vulkan memory model,
  "Availability and visibility": OpControlBarrier with Workgroup scope and WorkgroupMemory semantics
  makes the writes of every invocation of the workgroup available and visible to all of them);
* :func:`read_back`: a plain read of Workgroup memory after ``barrier()`` sees what was written before
  it (the same rule as :func:`visible`, for an invocation's scalar load rather than a matrix load);
* :func:`shared_tile`: subgroup ``s`` loads the tile at its own offset ((s + rot) % S);
* :func:`array_store`: a store to one array element changes that element alone;
* :func:`writeback`: an ``inout`` or ``out`` parameter's final value is the caller's after the call;
* ``khr_muladd.accumulator_after`` (ctsgen/ops/khr_muladd.py, shared with cm2-program): a MulAdd leaves its C
  operand as it was;
* :func:`zip_operand`: two matrices of one type share one element mapping
  (docs/spec-decisions.md "kernel-element-access").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ctsgen.kernel import ir
from ctsgen.kernel.ir import Kernel, Kind, Ref
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.ops import khr_muladd
from ctsgen.ops.khr_addressing import Layout

#: Largest magnitude every float Accumulator type holds exactly as an integer (2^(significand + 1)).
EXACT = {ComponentType.float16: 2**11, ComponentType.float32: 2**24}
#: Float data (A, B and Accumulator inputs) are integers in [-SMALL, SMALL].
SMALL = 2

Env = dict[str, np.ndarray]


def carried(first: Env, current: Env) -> Env:
    """The values the next iteration starts with: ``first`` is what the first iteration ended with,
    ``current`` what this one did."""
    return current


def merge(mask: np.ndarray, then: np.ndarray, orelse: np.ndarray) -> np.ndarray:
    """A value after a branch: ``mask`` (S x 1 x 1) true where a subgroup took the ``then`` side."""
    return np.where(mask, then, orelse)


def visible(written: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Workgroup memory as the reader sees it after ``barrier()``: what was ``written`` before it."""
    return written


def read_back(written: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Workgroup memory as one invocation's plain load of a probe's element sees it after the
    ``barrier()`` that follows the matrix store (docs/spec-decisions.md "kernel-readback"): what was
    ``written``."""
    return written


def shared_tile(shared: np.ndarray, rot: int) -> np.ndarray:
    """What each subgroup loads from Workgroup memory holding one tile per subgroup (S x rows x
    cols): subgroup s the tile at offset (s + rot) % S."""
    return np.roll(shared, -rot, axis=0)


def array_store(array: np.ndarray, k: np.ndarray, value: np.ndarray) -> np.ndarray:
    """The array after ``array[k] = value`` (``k``: a constant or a dynamically uniform loop counter,
    the same for every subgroup)."""
    out = array.copy()
    out[int(k)] = value
    return out


def writeback(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The caller's argument after a call whose ``inout``/``out`` parameter ended as ``after``."""
    return after


def zip_operand(y: np.ndarray) -> np.ndarray:
    """The second operand of an element-wise loop over two matrices, as the first's mapping sees it."""
    return y


@dataclass
class Memory:
    """One case's inputs (components of each kind's type, from the case's own offset) and its
    run-time words."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    words: np.ndarray


class Evaluation:
    """One case of ``kernel`` on ``memory``: :meth:`run` gives the stored values, slot by slot."""

    def __init__(self, kernel: Kernel, memory: Memory) -> None:
        self.k = kernel
        self.mem = memory
        self.S = kernel.subgroups
        self.integer = not kernel.c.component.is_float
        self.plan = kernel.plan

    # -- values ---------------------------------------------------------------------------------
    def wrap(self, x: np.ndarray) -> np.ndarray:
        """An Accumulator value at its type's precision (integers: the low-order bits)."""
        if not self.integer:
            return x
        bits = 8 * self.k.c.component.size
        if self.k.c.component.dtype.kind == "u":
            return x & ((1 << bits) - 1)
        half = 1 << (bits - 1)
        return ((x + half) & ((1 << bits) - 1)) - half

    def zero(self, m: MatrixType) -> np.ndarray:
        return np.zeros((self.S, m.rows, m.cols), np.int64 if self.integer else np.float64)

    def read(self, env: Env, ref: Ref, counters: dict[str, int]) -> np.ndarray:
        if ref.index is None:
            return env[ref.var]
        return env[ref.var][self.index(env, ref, counters)]

    def index(self, env: Env, ref: Ref, counters: dict[str, int]) -> int:
        n = env[ref.var].shape[0]
        return (counters[ref.index] if isinstance(ref.index, str) else int(ref.index)) % n

    def write(self, env: Env, ref: Ref, value: np.ndarray, counters: dict[str, int]) -> None:
        if ref.index is None:
            env[ref.var] = value
        else:
            env[ref.var] = array_store(env[ref.var], np.int64(self.index(env, ref, counters)), value)

    # -- memory ---------------------------------------------------------------------------------
    def tiles(self, kind: Kind, first: int) -> np.ndarray:
        """The S tiles from tile ``first`` of ``kind``'s buffer, as matrices (S x rows x cols)."""
        m = self.k.matrix(kind)
        mem = getattr(self.mem, kind.value)
        n = m.rows * m.cols
        flat = mem[first * n:(first + self.S) * n].astype(np.int64 if self.integer else np.float64)
        layout = self.k.layouts["abc".index(kind.value)]
        if layout is Layout.RowMajor:
            return flat.reshape(self.S, m.rows, m.cols)
        return flat.reshape(self.S, m.cols, m.rows).transpose(0, 2, 1)

    # -- statements -----------------------------------------------------------------------------
    def run(self) -> list[np.ndarray]:
        env: Env = {f"#{k.value}": self.zero(self.k.matrix(k)) for k in Kind}
        if self.k.array:
            env["r0"] = np.stack([self.zero(self.k.c)] * self.k.array)
        self.block(self.k.body, env, {}, ())
        return [self.read(env, ref, {}) for ref in self.k.stores]

    def block(self, body: tuple[ir.Stmt, ...], env: Env, counters: dict[str, int],
              loops: tuple[ir.Loop, ...]) -> str | None:
        """Run ``body`` in place on ``env``; 'break' or 'continue' where one was taken."""
        for s in body:
            jump = self.stmt(s, env, counters, loops)
            if jump:
                return jump
        return None

    def word(self, s: ir.Stmt) -> int:
        return int(self.mem.words[self.plan[id(s)]])

    def stmt(self, s: ir.Stmt, env: Env, counters: dict[str, int], loops: tuple[ir.Loop, ...]) -> str | None:
        r = lambda ref: self.read(env, ref, counters)  # noqa: E731
        if isinstance(s, ir.Load):
            self.write(env, s.dst, self.load(s, env, counters, loops), counters)
        elif isinstance(s, ir.MulAdd):
            a, b, c = r(s.a), r(s.b), r(s.c)
            self.write(env, s.dst, self.wrap(a @ b + c), counters)
            after = khr_muladd.accumulator_after(a, b, c)
            if after is not c and s.c != s.dst:
                self.write(env, s.c, self.wrap(after), counters)
        elif isinstance(s, ir.Binary):
            self.write(env, s.dst, self.wrap(r(s.x) - r(s.y) if s.minus else r(s.x) + r(s.y)), counters)
        elif isinstance(s, ir.Copy):
            self.write(env, s.dst, r(s.x), counters)
        elif isinstance(s, ir.ElementMap):
            self.write(env, s.dst, self.wrap(r(s.dst) * s.mul + s.add), counters)
        elif isinstance(s, ir.ElementZip):
            y = zip_operand(r(s.y))
            self.write(env, s.dst, self.wrap(r(s.x) - y if s.minus else r(s.x) + y), counters)
        elif isinstance(s, ir.Exchange):
            key = "#c"
            env[key] = visible(r(s.var), env[key])
            self.write(env, s.var, shared_tile(env[key], s.rot), counters)
        elif isinstance(s, ir.Loop):
            self.loop(s, env, counters, loops)
        elif isinstance(s, (ir.Break, ir.Continue)):
            taken = self.probe(s, s.probe, env, counters)[0] if s.probe is not None \
                else counters[ir.COUNTERS[len(loops) - 1]] == self.word(s)
            if taken:
                return s.OP
        elif isinstance(s, ir.If):
            self.branch(s, env, counters, loops)
        elif isinstance(s, ir.Call):
            self.call(s, env, counters)
        else:  # pragma: no cover - every statement type is handled above
            raise TypeError(f"no meaning for kernel statement {s.OP}")
        return None

    def load(self, s: ir.Load, env: Env, counters: dict[str, int], loops: tuple[ir.Loop, ...]) -> np.ndarray:
        kind = s.dst.kind
        it = 0
        for depth, loop in enumerate(loops):
            it = it * loop.trips + counters[ir.COUNTERS[depth]]
        tiles = self.tiles(kind, (self.plan[id(s)] + it) * self.S)
        if not s.shared:
            return tiles
        key = f"#{kind.value}"
        env[key] = visible(tiles, env[key])
        return shared_tile(env[key], s.rot)

    def loop(self, s: ir.Loop, env: Env, counters: dict[str, int], loops: tuple[ir.Loop, ...]) -> None:
        name = ir.COUNTERS[len(loops)]
        first: Env | None = None
        for i in range(self.word(s)):
            jump = self.block(s.body, env, {**counters, name: i}, loops + (s,))
            if first is None:
                first = dict(env)
            else:
                env.update(carried(first, dict(env)))
            if jump == "break":
                break

    def probe(self, s: ir.If | ir.Break | ir.Continue, probe: Ref, env: Env, counters: dict[str, int]) -> np.ndarray:
        """Each subgroup's condition read back from ``s.probe`` (ctsgen/kernel/ir.py, "probes"): every
        subgroup stores it to its slot of Workgroup memory; after ``barrier()`` every invocation reads
        element ``at`` of subgroup 0's slot, or of its own for a per-subgroup branch. One address per
        subgroup, so the value (and the condition) is the same for every invocation of the Scope
        instance (SPV_KHR_cooperative_matrix: "all the invocations in the 'Scope' instance are active
        or none of them are"); the value is exact (an integer in the exact domain, or an integer
        type's), so the comparison is exact too."""
        m = self.k.c
        before = env["#c"]
        env["#c"] = visible(self.read(env, probe, counters), before)
        seen = read_back(env["#c"], before)
        at = s.at % (m.rows * m.cols)
        row, col = divmod(at, m.cols) if self.k.layouts[2] is Layout.RowMajor else (at % m.rows, at // m.rows)
        values = seen[:, row, col]
        if not (isinstance(s, ir.If) and s.per_subgroup):
            values = np.broadcast_to(values[:1], values.shape)
        return values < self.threshold(self.word(s))

    def threshold(self, w: int) -> Any:
        """A probe's word as the Accumulator's type: the word itself for an unsigned type; else the
        word read as an int32, converted (a float type: rounded, as OpConvertSToF)."""
        dtype = self.k.c.component.dtype
        if dtype.kind == "u":
            return w
        signed = np.array([w], np.uint32).view(np.int32)
        return int(signed[0]) if dtype.kind == "i" else float(signed.astype(dtype)[0])

    def branch(self, s: ir.If, env: Env, counters: dict[str, int], loops: tuple[ir.Loop, ...]) -> None:
        if s.probe is not None:
            mask = self.probe(s, s.probe, env, counters).reshape(self.S, 1, 1)
        else:
            w = self.word(s)
            bits = [(w >> sg) & 1 if s.per_subgroup else int(w != 0) for sg in range(self.S)]
            mask = np.array(bits, bool).reshape(self.S, 1, 1)
        then, orelse = dict(env), dict(env)
        self.block(s.then, then, counters, loops)
        self.block(s.orelse, orelse, counters, loops)
        for name in env:
            t, e = then[name], orelse[name]
            if t is e:
                continue
            env[name] = merge(mask.reshape((1,) * (t.ndim - 3) + mask.shape), t, e)

    def call(self, s: ir.Call, env: Env, counters: dict[str, int]) -> None:
        f = self.k.functions[s.fn]
        local: Env = {}
        for k, (ref, kind, qual) in enumerate(zip(s.args, f.kinds, f.quals)):
            local[f"p{k}"] = self.zero(self.k.matrix(kind)) if qual == "out" else self.read(env, ref, counters)
        self.block(f.body, local, {}, ())
        for k, (ref, qual) in enumerate(zip(s.args, f.quals)):
            if qual != "in":
                self.write(env, ref, writeback(self.read(env, ref, counters), local[f"p{k}"]), counters)
        if s.dst is not None and f.ret is not None:
            self.write(env, s.dst, local[f.ret], counters)


def evaluate(kernel: Kernel, memory: Memory) -> list[np.ndarray]:
    """The stored values of one case, slot by slot (S x rows x cols each, exact: float64 / int64)."""
    return Evaluation(kernel, memory).run()


# -- exact-domain bounds ------------------------------------------------------------------------------

Bounds = dict[str, float]


class BoundWalk:
    """The largest magnitude each variable can hold at each point, over every run-time draw (trip
    counts up to each loop's most, any branch side, any break/continue iteration): the join (max)
    of both sides of a branch and of every iteration count of a loop. Monotone in its inputs, so a
    statement that lowers a bound keeps every later bound valid."""

    def __init__(self, kernel: Kernel, limit: float = float("inf")) -> None:
        self.k = kernel
        self.peak = 0.0
        self.limit = limit

    def see(self, b: Bounds) -> Bounds:
        self.peak = max(self.peak, max(b.values(), default=0.0))
        if self.peak > self.limit:
            raise _Past()
        return b

    def run(self) -> float:
        """The peak bound; past ``limit`` the walk stops at once and gives what it reached."""
        try:
            self.block(self.k.body, {}, [])
        except _Past:
            pass
        return self.peak

    def block(self, body: tuple[ir.Stmt, ...], b: Bounds, jumps: list[Bounds]) -> Bounds:
        for s in body:
            b = self.see(self.stmt(s, b, jumps))
        return b

    def stmt(self, s: ir.Stmt, b: Bounds, jumps: list[Bounds]) -> Bounds:
        get = lambda ref: b.get(ref.var, 0.0)  # noqa: E731
        out = dict(b)

        def put(ref: Ref, value: float) -> None:  # an array's bound covers all its elements
            out[ref.var] = max(value, b.get(ref.var, 0.0)) if ref.index is not None else value

        if isinstance(s, ir.Load):
            put(s.dst, SMALL)
        elif isinstance(s, ir.MulAdd):
            put(s.dst, get(s.c) + self.k.a.cols * get(s.a) * get(s.b))
        elif isinstance(s, (ir.Binary, ir.ElementZip)):
            put(s.dst, get(s.x) + get(s.y))
        elif isinstance(s, ir.Copy):
            put(s.dst, get(s.x))
        elif isinstance(s, ir.ElementMap):
            put(s.dst, get(s.dst) * abs(s.mul) + abs(s.add))
        elif isinstance(s, (ir.Break, ir.Continue)):
            jumps.append(dict(b))
        elif isinstance(s, ir.Loop):
            state, exits = dict(b), [dict(b)]
            for _ in range(s.trips):
                inner: list[Bounds] = []
                after = join([self.block(s.body, state, inner), *inner])
                if after == state:  # a fixpoint: further iterations bound nothing new
                    break
                state = after
                exits.append(state)
            out = join(exits)
        elif isinstance(s, ir.If):
            out = join([self.block(s.then, dict(b), jumps), self.block(s.orelse, dict(b), jumps)])
        elif isinstance(s, ir.Call):
            f = self.k.functions[s.fn]
            local = {f"p{k}": get(ref) for k, ref in enumerate(s.args)}
            local = self.block(f.body, local, [])
            for k, (ref, qual) in enumerate(zip(s.args, f.quals)):
                if qual != "in":
                    put(ref, local[f"p{k}"])
            if s.dst is not None and f.ret is not None:
                put(s.dst, local[f.ret])
        return out


def join(states: list[Bounds]) -> Bounds:
    out: Bounds = {}
    for st in states:
        for k, v in st.items():
            out[k] = max(out.get(k, 0.0), v)
    return out


class _Past(Exception):
    """A bound walk went past its limit: the kernel is not exact, whatever follows."""


def peak_bound(kernel: Kernel) -> float:
    """The largest magnitude any Accumulator of ``kernel`` can hold (float kernels' exact domain)."""
    return BoundWalk(kernel).run()


def exact(kernel: Kernel) -> bool:
    """Whether every value of a float kernel is an integer its Accumulator type holds exactly (an
    integer kernel wraps: always defined); then every operation is exact in any order, and the
    verdict is bit for bit (docs/spec-decisions.md "kernel-exact-domain")."""
    limit: Any = EXACT.get(kernel.c.component)
    return limit is None or BoundWalk(kernel, limit).run() <= limit
