"""Strategies for cm2-program: a typed straight-line program, then its run-time parameters.

Valid by construction, no filtering: the program is drawn as a list of
2-12 *steps* (three integers each) and one to three *stores* (two integers each: the
value stored, and the sink's attributes: a store through a layout or a KHR store, or in one
draw of four a store through a layout and a view, each where the profile has it, :func:`sink`),
and :func:`build` turns them into nodes in order. A step's first integer picks a node kind
among those the profile has (:func:`kinds_on`: without tensor addressing every load is a KHR
load, OpCooperativeMatrixLoadKHR; if that kind has no operands yet, the step first adds sources
of the types it needs, :func:`feeder`; at most 12 nodes in all),
its second picks the operands among the values of the right types whose
result stays in the exact domain (the latest ones in half the draws), its third the kind's
attributes (a source's type, clamp mode and Dim; a view load's view type; a
decode load's block format and block shape; a reduction's mode and
CombineFunc; a per-element function; a conversion's target), read as digits
of a mixed radix (:func:`source`). Out-of-range picks wrap around, so any
list of steps builds a valid program.

Shrinking: Hypothesis deletes steps (the later steps' picks then wrap onto
the remaining values: consumers are rewired, not dropped) and moves every
integer toward 0, i.e. toward loads and toward reading the latest value
(view and decode loads come last among the kinds: a program shrinks to plain
layout loads unless its failure needs a view or a DecodeFunc, and a view or
decode load's attributes shrink to the identity permutation, Q8_0 and the
flattest block shape; a view store shrinks to a store through a layout); the shortest
program that still fails is what a repro shows.

The named seed programs (:data:`SEEDS`) are strata of their own, so every
pack holds them.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, ProfileLacksError, default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_program.case import (DOMAINS, DecodeViewCase, NodeParams, ProgramCase, ProgramVariant,
                                              Scalars, layout_variant, op_features)
from ctsgen.families.cm2_program.program import (A16, ACC16, ACC32, ARITH, B16, DECODE_OPS, EXACT, KHR_OPS, SCALARS,
                                                 SIDE, SINKS, SMALL, SOURCES, TYPES, VIEW_OPS, WORDS, Node, Op,
                                                 Program, decode_variant, in_subgroup, operands_fit, result_bound,
                                                 view_variant)
from ctsgen.ops.cm2_reduce import Combine, ReduceMode
from ctsgen.ops.decode import FORMATS
from ctsgen.strategies.decode import decode_cases
from ctsgen.ops.decode import block_shapes
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.strategies.tensor_layout import layout_cases
from ctsgen.strategies.tensor_view import draw_view_over, view_cases
from ctsgen.model.tensor import ClampMode
from ctsgen.ops.khr_addressing import KhrAccess, Layout
from ctsgen.strategies.khr import khr_accesses
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.ops.cm2 import profile_key
from ctsgen.strategies.cached import integers
from ctsgen.oracle.values import to_bits

MIN_OPS, MAX_OPS, MAX_STORES = 2, 12, 3
DIMS = (2, 1, 3)
LAYOUT_ATTRS = [(mode, d) for d in DIMS for mode in ClampMode]
#: View types (Dim, hasDimensions, permutation): without dimensions VDim == Dim, with them VDim 1-3;
#: the identity permutation first (the shrink target).
VIEW_ATTRS = [(d, has, perm) for d in DIMS for has in (False, True)
              for vdim in ((d,) if not has else (1, 2, 3)) for perm in itertools.permutations(range(vdim))]
#: Decode loads (decoder, Dim, block shape): every block format of the decode family, its block
#: shapes at each Dim (ops.decode.block_shapes, flattest first).
DECODE_ATTRS = [(name, d, shape) for name, fmt in FORMATS.items() for d in DIMS for shape in block_shapes(d, fmt.K)]
#: A decode load's attribute pick reads through a view in one draw of this many.
DECODE_VIEW_EVERY = 4
#: The view types (hasDimensions, permutation) of VIEW_ATTRS over a layout of each Dim.
VIEWS_AT = {d: [(has, perm) for d2, has, perm in VIEW_ATTRS if d2 == d] for d in DIMS}
REDUCE_ATTRS = [(mode, comb) for mode in (ReduceMode.Row, ReduceMode.Column, ReduceMode.RowColumn)
                for comb in (Combine.max, Combine.sum, Combine.min)]
#: Node kinds in the order a step's first integer picks them (sources first: the shrink target; a KHR load
#: right after a load through a layout, so a program without tensor addressing shrinks to KHR loads).
KINDS = (Op.load, Op.loadkhr, Op.const, Op.generate, Op.muladd, Op.scale, Op.add, Op.sub, Op.mul, Op.perelement,
         Op.reduce, Op.convert, Op.transpose, Op.loadview, Op.loaddecode)
#: Sink kinds (a sink's attribute pick chooses among those the profile has, :func:`sink`).
SINK_KINDS = (Op.store, Op.storekhr, Op.storeview)
#: MemoryLayouts of KHR loads and stores (RowMajor first: the shrink target).
LAYOUTS = tuple(Layout)
#: Operand picks at or above this read the latest values (half the draws: chains form).
LATEST = 32
#: A step's attribute pick: enough digits for a view or decode load's type, clamp mode and attributes.
ATTR = st.integers(0, 2**16 - 1)
STEP = st.tuples(st.integers(0, len(KINDS) - 1), st.integers(0, 63), ATTR)
STORE = st.tuples(st.integers(0, 63), ATTR)
#: A drawn program's steps and stores (built once: a variant draws them each time).
STEPS = st.lists(STEP, min_size=MIN_OPS, max_size=MAX_OPS)
STORES = st.lists(STORE, min_size=1, max_size=MAX_STORES)
#: A sink's attribute pick is a view store in one draw of this many (the rest: a layout store).
VIEW_STORE_EVERY = 4


def _fits(node: Node, nodes: Sequence[Node], bounds: Sequence[int]) -> bool:
    return operands_fit(node, [nodes[a].type for a in node.args]) \
        and result_bound(node, list(bounds)) <= EXACT[node.type.component]


def source(kind: Op, t: MatrixType, attr: int) -> Node:
    """A source node of ``kind`` and type ``t``; ``attr`` picks a tensor load's clamp mode and
    Dim (then, for a view load, the view type; for a decode load, the format and block shape,
    and in one draw of :data:`DECODE_VIEW_EVERY` a view type: a decode load through a view)."""
    if kind is Op.loadkhr:
        return Node(kind, t, layout=LAYOUTS[attr % len(LAYOUTS)])
    if kind not in (Op.load, Op.loadview, Op.loaddecode):
        return Node(kind, t)
    if kind is Op.load:
        mode, d = LAYOUT_ATTRS[attr % len(LAYOUT_ATTRS)]
        return Node(Op.load, t, (), mode, d)
    if kind is Op.loadview:
        return view_node(kind, t, (), attr)
    mode = list(ClampMode)[attr % len(ClampMode)]
    rest = attr // len(ClampMode)
    name, d, shape = DECODE_ATTRS[rest % len(DECODE_ATTRS)]
    view = rest // len(DECODE_ATTRS)
    if view % DECODE_VIEW_EVERY != DECODE_VIEW_EVERY - 1:
        return Node(kind, t, (), mode, d, decoder=name, blockShape=shape)
    has, perm = VIEWS_AT[d][(view // DECODE_VIEW_EVERY) % len(VIEWS_AT[d])]
    return Node(Op.loaddecodeview, t, (), mode, d, hasDimensions=has, permutation=perm, decoder=name,
                blockShape=shape)


def view_node(kind: Op, t: MatrixType, args: tuple[int, ...], attr: int) -> Node:
    """A view load or view store (``kind``) of type ``t``: ``attr`` picks its clamp mode, then
    its layout's Dim and view type (:data:`VIEW_ATTRS`)."""
    mode = list(ClampMode)[attr % len(ClampMode)]
    d, has, perm = VIEW_ATTRS[(attr // len(ClampMode)) % len(VIEW_ATTRS)]
    return Node(kind, t, args, mode, d, hasDimensions=has, permutation=perm)


def sink(value: int, t: MatrixType, attr: int, sinks: Sequence[Op] = SINK_KINDS) -> Node:
    """A store of value ``value`` (type ``t``), of a kind among ``sinks``: in one draw of
    :data:`VIEW_STORE_EVERY` a store through a layout and a view (the view store's attributes as a
    view load's), else a store through a layout of the clamp mode and Dim ``attr`` picks, or a KHR
    store of the MemoryLayout it picks (0: the shrink target, the first of them ``sinks`` has)."""
    kind, rest = attr % VIEW_STORE_EVERY, attr // VIEW_STORE_EVERY
    if kind == VIEW_STORE_EVERY - 1 and Op.storeview in sinks:
        return view_node(Op.storeview, t, (value,), rest)
    plain = [k for k in SINK_KINDS if k in sinks and k is not Op.storeview]
    if not plain:
        raise ValueError("a program needs a store through a layout or a KHR store")
    chosen, rest = plain[rest % len(plain)], rest // len(plain)
    if chosen is Op.storekhr:
        return Node(Op.storekhr, t, (value,), layout=LAYOUTS[rest % len(LAYOUTS)])
    mode, d = LAYOUT_ATTRS[rest % len(LAYOUT_ATTRS)]
    return Node(Op.store, t, (value,), mode, d)


def candidates(kind: Op, nodes: Sequence[Node], bounds: Sequence[int], attr: int) -> list[Node]:
    """Every valid node of ``kind`` over the values defined so far (attributes picked by
    ``attr``): operands no node has read yet first, then the latest first (chains form)."""
    read = {a for n in nodes for a in n.args}
    vals = sorted((i for i in range(len(nodes)) if nodes[i].op not in SINKS), key=lambda i: (i in read, -i))
    if kind in SOURCES:
        return [source(kind, TYPES[attr % len(TYPES)], attr // len(TYPES))]
    if kind is Op.muladd:
        shapes = [(a, b, c) for c in vals for a in vals for b in vals]
        out = [Node(Op.muladd, nodes[c].type, (a, b, c)) for a, b, c in shapes]
    elif kind is Op.convert or kind is Op.transpose:
        targets = [B16] if kind is Op.transpose else [A16, B16, ACC16, ACC32]
        out = [Node(kind, t, (a,)) for a in vals for t in targets]
    elif kind is Op.reduce:
        mode, comb = REDUCE_ATTRS[attr % len(REDUCE_ATTRS)]
        out = [Node(kind, nodes[a].type, (a,), mode=mode, combine=comb) for a in vals]
    elif kind is Op.perelement:
        fn = ("select", "affine")[attr % 2]
        out = [Node(kind, nodes[a].type, (a,) if fn == "select" else (a, m), fn=fn)
               for a in vals for m in (vals if fn == "affine" else [a])]
    elif kind in ARITH:
        out = [Node(kind, nodes[a].type, (a, b)) for a in vals for b in vals]
    else:  # scale
        out = [Node(kind, nodes[a].type, (a,)) for a in vals]
    return [n for n in out if _fits(n, nodes, bounds)]


#: The operand types a kind needs (any type for a kind not listed).
NEEDS = {Op.muladd: (A16, B16, ACC32), Op.transpose: (ACC16,), Op.convert: (ACC32,), Op.reduce: (ACC32,)}


def feeder(kind: Op, nodes: Sequence[Node], attr: int, sources: Sequence[Op] = SOURCES) -> Node:
    """A source (one of ``sources``) of the first type ``kind`` needs that no value has yet."""
    have = {n.type for n in nodes if n.op not in SINKS}
    need = [t for t in NEEDS.get(kind, TYPES) if t not in have] or [TYPES[attr % len(TYPES)]]
    return source(sources[attr % len(sources)], need[0], attr // len(sources))


def kinds_on(profile: DeviceProfile, kinds: Sequence[Op] = KINDS) -> tuple[Op, ...]:
    """The node kinds of ``kinds`` whose feature bits ``profile`` has (case.op_features): a
    device without cooperativeMatrixReductions gets programs without reductions, and so on."""
    return tuple(k for k in kinds if all(profile.has_feature(f) for f in op_features(k)))


def omissions(profile: DeviceProfile) -> str | None:
    """The node kinds ``profile`` gets no program with, and the feature bits they lack (one line)."""
    left = [k for k in KINDS + SINK_KINDS if k not in kinds_on(profile, KINDS + SINK_KINDS)]
    if not left:
        return None
    lacks = sorted({f for k in left for f in op_features(k) if not profile.has_feature(f)})
    return (f"leaving out {', '.join(k.value for k in left)} nodes: feature {', '.join(lacks)} "
            f"{'is' if len(lacks) == 1 else 'are'} not supported")


def build(steps: Sequence[tuple[int, int, int]], stores: Sequence[tuple[int, int]],
          kinds: Sequence[Op] = KINDS, sinks: Sequence[Op] = SINK_KINDS) -> Program:
    """The program the raw draws describe (see the module docstring), of node kinds among ``kinds``
    (a step's pick wraps around them) and sinks among ``sinks``; always valid. ``kinds`` holds const,
    so a source is always there; ``sinks`` a KHR store, which needs no cm2 feature."""
    sources = [k for k in SOURCES if k in kinds]
    nodes: list[Node] = []
    bounds: list[int] = []
    for kind_pick, operand_pick, attr in steps:
        kind = kinds[kind_pick % len(kinds)]
        while not (cands := candidates(kind, nodes, bounds, attr)) and len(nodes) < MAX_OPS:
            nodes.append(feeder(kind, nodes, attr, sources))  # a source of a type the kind needs
            bounds.append(result_bound(nodes[-1], bounds))
        if len(nodes) == MAX_OPS:
            break
        node = cands[0 if operand_pick >= LATEST else operand_pick % len(cands)]
        nodes.append(node)
        bounds.append(result_bound(node, bounds))
    values = len(nodes)
    for value_pick, attr in stores:  # values nothing reads yet first, latest first
        vals = sorted(range(values), key=lambda i: (any(i in n.args for n in nodes), -i))
        v = vals[0 if value_pick >= LATEST else value_pick % len(vals)]
        nodes.append(sink(v, nodes[v].type, attr, sinks))
    return Program(tuple(nodes))


def strata() -> list[dict[str, object]]:
    """Each named seed program through tensor layouts and through KHR loads and stores (:func:`khr_route`),
    then drawn programs (four shares of the pack)."""
    return [{"seed": name} for name in SEEDS] + [{"seed": name, "route": "khr"} for name in SEEDS] \
        + [{"seed": None}] * 4


def khr_route(program: Program) -> Program:
    """``program`` with every load and store through a layout made a RowMajor KHR load or store (the
    same matrices where the region is the tensor, packed: stride 16)."""
    kinds = {Op.load: Op.loadkhr, Op.store: Op.storekhr}
    return Program(tuple(replace(n, op=kinds[n.op], clampMode=None, Dim=0, layout=Layout.RowMajor)
                         if n.op in kinds else n for n in program.nodes))


def _lacking_type(profile: DeviceProfile) -> str | None:
    """Why ``profile`` runs no cm2-program (one of :data:`TYPES` in a subgroup of its size is not
    supported), or None; worked out once per profile (:func:`ctsgen.ops.cm2.profile_key`)."""
    key = profile_key(profile)
    if key not in _LACKING:
        _LACKING[key] = next((f"cm2-program needs {t.glsl} on device profile {profile.name!r}: {why}" for t in TYPES
                              if (why := profile.supports_matrix(replace(t, workgroup_size=profile.subgroup_size)))),
                             None)
    return _LACKING[key]


_LACKING: dict[tuple, str | None] = {}


@st.composite
def program_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                     seed: str | None = None, route: str = "tensor") -> ProgramVariant:
    """A program shape of the node kinds the profile has (:func:`kinds_on`), its matrices in one
    subgroup of the profile's size; ``seed`` pins one of the named seed programs, through tensor
    layouts or (``route`` "khr") KHR loads and stores (refused, naming the feature, where the profile
    lacks one of its kinds)."""
    profile = options.profile or default_profile()
    size = profile.subgroup_size
    why = _lacking_type(profile)
    if why:
        raise ProfileLacksError(why)
    kinds = kinds_on(profile)
    if seed is not None:
        if seed not in SEEDS:
            raise ValueError(f"unknown seed program {seed!r}; use one of {', '.join(SEEDS)}")
        if route not in ("tensor", "khr"):
            raise ValueError(f"unknown route {route!r}; use tensor or khr")
        program = khr_route(SEEDS[seed]) if route == "khr" else SEEDS[seed]
        lacks = sorted({f for n in program.nodes for f in op_features(n.op) if not profile.has_feature(f)})
        if lacks:
            raise ProfileLacksError(f"device profile {profile.name!r} runs no {seed} seed program: feature "
                                    f"{', '.join(lacks)} is not supported")
        return ProgramVariant(in_subgroup(program, size))
    steps = draw(STEPS)
    stores = draw(STORES)
    return ProgramVariant(in_subgroup(build(steps, stores, kinds, kinds_on(profile, SINK_KINDS)), size))


@functools.lru_cache(maxsize=64)
def _small_bits(component: ComponentType, k: int) -> int:
    """The bits of the small integer ``k`` as a ``component`` value (a clamp value)."""
    return int(to_bits(np.asarray([k], component.dtype), component)[0])


def _small_clamp_value(q: TensorLayoutCase, node: Node, k: int) -> TensorLayoutCase:
    """The drawn layout with its clampValue (if set) replaced by the bits of a small
    integer, so a Constant-clamped load stays in the exact domain."""
    if q.clampValue is None:
        return replace(q, data_pattern="iota", seed=0)
    return replace(q, clampValue=_small_bits(node.type.component, k), data_pattern="iota", seed=0)


#: The exact domain's small integers (a constant's value, a clamp value), a scalar s, a select's
#: r0 / c0 (== SIDE: no row / column selected) and the data seed: built once, drawn per case.
SMALL_INTS = st.integers(-SMALL, SMALL)
SCALAR_DRAWS = st.sampled_from(SCALARS)
ROW_COL = st.integers(0, SIDE)
DATA_SEEDS = st.integers(0, 2**32 - 1)
DOMAIN_PICKS = integers(0, 3)


def program_cases_for(variant: ProgramVariant,
                      options: StrategyOptions = StrategyOptions()) -> st.SearchStrategy[ProgramCase]:
    """Run-time parameters of every node: layouts from the tensor-layout family's own
    strategy (valid for each clamp mode), views from the tensor-view family's (a view
    store's race-free by that strategy's construction), decode loads' layouts (blockSize =
    the block shape) from the decode family's, scalars of the exact domain, a data seed.

    The data domain first, for every program (every cm2-program node has a float-domain bound,
    bounds.py): exact for picks 0-1 (0, the shrink target), float for 2-3. Drawn first and always,
    so deleting a node while shrinking leaves it as it was and a shrink step never needs a draw
    past the end of the buffer (coopvec-program's lesson: a domain drawn only for some programs
    stopped shrinking at 4 operations).

    Each tensor node's strategy is built here, once for all the cases of the variant: a
    strategy built per case is also validated per case (so are the clamp values' bits, memoised)."""
    tensors: dict[int, st.SearchStrategy] = {}
    for i, n in enumerate(variant.program.nodes):
        if n.op in (Op.load, Op.store):
            tensors[i] = layout_cases(layout_variant(n), options)
        elif n.op in DECODE_OPS:
            tensors[i] = decode_cases(decode_variant(n), options)
        elif n.op in VIEW_OPS:
            tensors[i] = view_cases(view_variant(n), options)
        elif n.op in KHR_OPS:  # the node's MemoryLayout, the buffer's own component type
            tensors[i] = khr_accesses(SIDE, SIDE, n.type.component, is_store=n.op in SINKS, layouts=(n.layout,),
                                      pointees=(None,))
    return _program_cases(variant, tensors)


@st.composite
def _program_cases(draw: st.DrawFn, variant: ProgramVariant, tensors: dict[int, st.SearchStrategy]) -> ProgramCase:
    """:func:`program_cases_for`'s draws, with ``tensors[i]`` the strategy of tensor node i."""
    domain = DOMAINS[draw(DOMAIN_PICKS) // 2]
    params: list[NodeParams] = []
    for i, n in enumerate(variant.program.nodes):
        if n.op in (Op.load, Op.store):
            q = draw(tensors[i])
            params.append(_small_clamp_value(q, n, draw(SMALL_INTS)))
        elif n.op is Op.loaddecodeview:
            dq = draw(tensors[i])
            dq = replace(dq, layout_case=_small_clamp_value(dq.layout_case, n, draw(SMALL_INTS)))
            params.append(DecodeViewCase(dq, draw_view_over(draw, view_variant(n), dq.layout_case)))
        elif n.op in VIEW_OPS or n.op is Op.loaddecode:
            tq = draw(tensors[i])
            small = _small_clamp_value(tq.layout_case, n, draw(SMALL_INTS))
            params.append(replace(tq, layout_case=small))
        elif n.op in KHR_OPS:
            params.append(draw(tensors[i]))
        elif n.op is Op.const:
            params.append(Scalars(draw(SMALL_INTS)))
        elif n.op in WORDS:
            s = draw(SCALAR_DRAWS)
            params.append(Scalars(s, draw(ROW_COL), draw(ROW_COL)) if WORDS[n.op] > 1 else Scalars(s))
        else:
            params.append(None)
    return ProgramCase(variant, tuple(params), draw(DATA_SEEDS), domain)


def _flash_attention() -> Program:
    """One flash-attention step: S = Q K^T, row max, S - max, a causal-style mask
    (select), P to float16 A, O = P V, stores of O and the row max through two
    differently clamped layouts."""
    L = Op.load
    return Program((
        Node(L, A16, (), ClampMode.Constant, 2),                   # v0 Q
        Node(L, B16, (), ClampMode.ClampToEdge, 2),                # v1 K^T
        Node(Op.const, ACC32),                                     # v2 0
        Node(Op.muladd, ACC32, (0, 1, 2)),                         # v3 S
        Node(Op.reduce, ACC32, (3,), mode=ReduceMode.Row, combine=Combine.max),  # v4 rowmax
        Node(Op.sub, ACC32, (3, 4)),                               # v5 S - max
        Node(Op.perelement, ACC32, (5,), fn="select"),             # v6 mask
        Node(Op.convert, A16, (6,)),                               # v7 P
        Node(L, B16, (), ClampMode.Repeat, 3),                     # v8 V
        Node(Op.const, ACC32),                                     # v9 O
        Node(Op.muladd, ACC32, (7, 8, 9)),                         # v10 O += P V
        Node(Op.store, ACC32, (10,), ClampMode.Constant, 2),
        Node(Op.store, ACC32, (4,), ClampMode.ClampToEdge, 2),
    ))


def _mlp() -> Program:
    """A 2-layer MLP: h = x W1 + b1 (float16 accumulation), scaled, to A, y = h W2 + b2
    (float32), both layers' outputs stored."""
    L = Op.load
    return Program((
        Node(L, A16, (), ClampMode.Undefined, 2),                  # v0 x
        Node(L, B16, (), ClampMode.Constant, 2),                   # v1 W1
        Node(L, ACC16, (), ClampMode.Repeat, 1),                   # v2 b1
        Node(Op.muladd, ACC16, (0, 1, 2)),                         # v3 h
        Node(Op.scale, ACC16, (3,)),                               # v4 activation stand-in
        Node(Op.convert, A16, (4,)),                               # v5 h as A
        Node(L, B16, (), ClampMode.RepeatMirrored, 2),             # v6 W2
        Node(Op.const, ACC32),                                     # v7 b2
        Node(Op.muladd, ACC32, (5, 6, 7)),                         # v8 y
        Node(Op.store, ACC32, (8,), ClampMode.Constant, 2),
        Node(Op.store, ACC16, (3,), ClampMode.ClampToEdge, 1),
    ))


#: Named seed programs, shaped like the kernels users run; always in a pack.
SEEDS: dict[str, Program] = {"flash-attention": _flash_attention(), "mlp": _mlp()}


#: Node kinds with a KHR twin (:func:`khr_route`) or no memory access: views and DecodeFuncs have no KHR form.
TWIN_KINDS = tuple(k for k in KINDS if k not in (Op.loadview, Op.loaddecode, Op.loadkhr))


def _dense(program: Program) -> Program:
    """Every load and store of ``program`` through a 2-D layout without clamping."""
    return Program(tuple(replace(n, clampMode=ClampMode.Undefined, Dim=2) if n.op in (Op.load, Op.store) else n
                         for n in program.nodes))


def _twin_params(program: Program, scalars: Sequence[Scalars]) -> tuple[NodeParams, ...]:
    """Dense SIDE x SIDE layouts (tensor loads and stores), RowMajor stride-SIDE accesses (KHR ones): the
    same elements at the same places of their regions; ``scalars`` for the nodes that take them."""
    out: list[NodeParams] = []
    for n, s in zip(program.nodes, scalars):
        if n.op in (Op.load, Op.store):
            out.append(TensorLayoutCase(layout_variant(n), (SIDE, SIDE)))
        elif n.op in KHR_OPS:
            out.append(KhrAccess(Layout.RowMajor, SIDE))
        elif n.op in WORDS:
            out.append(s if WORDS[n.op] > 1 else Scalars(s.s))
        else:
            out.append(None)
    return tuple(out)


@st.composite
def route_twins(draw: st.DrawFn, options: StrategyOptions = StrategyOptions()) -> tuple[ProgramCase, ProgramCase]:
    """A program (a seed program or a drawn one of :data:`TWIN_KINDS`) whose loads and stores go through
    dense 2-D tensor layouts, and its :func:`khr_route` twin through RowMajor KHR pointers of stride SIDE, with
    the same scalars, data seed and domain: the two read the same data and must write the same outputs."""
    profile = options.profile or default_profile()
    kinds = kinds_on(profile, TWIN_KINDS)
    if Op.load not in kinds:
        raise ProfileLacksError(f"device profile {profile.name!r} has no tensor route to compare: feature "
                                "cooperativeMatrixTensorAddressing is not supported")
    drawn = build(draw(st.lists(STEP, min_size=MIN_OPS, max_size=8)), draw(st.lists(STORE, min_size=1,
                                                                                    max_size=MAX_STORES)),
                  kinds, (Op.store,))
    seeds = [p for p in SEEDS.values() if all(n.op in kinds or n.op in SINKS for n in p.nodes)]
    tensor = in_subgroup(_dense(draw(st.sampled_from([drawn, *seeds]))), profile.subgroup_size)
    scalars = [Scalars(draw(SMALL_INTS) if n.op is Op.const else draw(SCALAR_DRAWS), draw(ROW_COL), draw(ROW_COL))
               for n in tensor.nodes]
    seed, domain = draw(DATA_SEEDS), DOMAINS[draw(st.integers(0, len(DOMAINS) - 1))]
    khr = khr_route(tensor)
    return (ProgramCase(ProgramVariant(tensor), _twin_params(tensor, scalars), seed, domain),
            ProgramCase(ProgramVariant(khr), _twin_params(khr, scalars), seed, domain))
