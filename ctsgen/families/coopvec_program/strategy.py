"""Strategies for coopvec-program: a chain of layers, then its run-time parameters.

Valid by construction, no filtering. A program is drawn as the number of
layers (1-4, uniform), that many *layer draws*, the first layer's K pick, a
final-conversion pick, then whether to add the training step (where the
profile has cooperativeVectorTraining with float16 accumulation and the last
layer is float16 with a float16 input); :func:`build` turns them into
nodes. A layer draw picks, each pick wrapping around its options: the type
combination among the device profile's advertised ones
(VkCooperativeVectorPropertiesNV; the Result Type first, so float and
integer layers are drawn alike, then a combination of it; after the first
layer only those whose interpretation is not packed, which no conversion
produces), a MemoryLayout the combination allows (E4M3 / E5M2 matrices only optimal,
VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090, the coopvec family's
``valid_layouts``), Transpose where the combination advertises it and the
layout is optimal, M, 0-3 activation instructions for its Result Type, and
the conversion path from the previous layer's Result Type to its Input type
(program.conversion_paths). K of a later layer is the previous M.

Then the control flow and the workgroup (docs/spec-decisions.md
"coopvec-program-divergence"), drawn after everything above so that the
shrink target of each pick is today's straight chain in a full subgroup: one
*control draw* (:data:`CTL`): whether a layer's MatMulAdd (which one: a pick
modulo the layers, so deleting a layer keeps a construct) runs under a
per-invocation ``if`` or ``loop`` (a loop makes the layer square, M = K,
where its combination's Input type is its Result Type; otherwise it becomes
an ``if``), whether one activation instruction of the program does (and an ``if``'s
else side: the operand, max or min against 0); then the local size: a full
subgroup, or a partial one (program.PARTIAL) whose layers all take an
optimal layout (hazard "partial-subgroup-row-column-major").

Run-time parameters (:func:`program_cases_for`): MatrixOffset (a multiple of 64),
MatrixStride (a multiple of 16 from the row / column length up), BiasOffsets
laid out one after another with 0-2 gaps of 16 bytes, and the activations'
scalars, drawn from the output backwards so that each fits the limit its
consumers leave (program.py, the exact domain), a data seed and the data
domain: "exact" or, for a float program (bounds.float_domain_rule), "float"
(full-mantissa data judged within propagated bounds) for about half of its
cases; exact is the shrink target.

A quarter of the programs are *float programs* (drawn last, ``build(floats=True)``):
float combinations only, float conversion paths, no training step, so that
their cases may take float-domain data (docs/spec-decisions.md
"program-float-domain"); the others are drawn as before, and a float one
among them may take float data too.

Shrinking: Hypothesis lowers the number of layers, deletes activation picks
and moves every integer toward 0: toward one layer, the first combination, RowMajor,
M = 1, no activation, the shortest conversion, scalars 0 / 1, no training step.

The named seed programs (:data:`SEEDS`) are strata of their own, so every
pack holds them; the other strata pin the number of layers or force one
construct (:data:`CONSTRUCTS`: a divergent branch, a divergent loop, a
partial subgroup).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.strategies.cached import integers
from ctsgen.ops.coopvec_matrix import SIZES, combinations, valid_layouts
from ctsgen.ops.coopvec_matrix import MatrixLayout, ceil_to
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.families.coopvec_program.bounds import float_domain_rule
from ctsgen.families.coopvec_program.case import DOMAINS, LayerParams, ProgramCase, ProgramVariant, Scalars
from ctsgen.families.coopvec_program.program import (ACT_NAME, F16, F32, LOCAL, MAX_ACTS, MAX_LAYERS, MIN_LAYERS,
                                                     PARTIAL, S32, S8, Ctl, Layer, Node, Op, Program, VecType,
                                                     act_operand_limit, acts_for, conversion_paths)

#: a layer draw: combination, layout, transpose, M, conversion path picks, then activation picks
LAYER = st.tuples(st.integers(0, 63), st.integers(0, 3), st.integers(0, 1), st.integers(0, len(SIZES) - 1),
                  st.integers(0, 3), st.lists(st.integers(0, 63), max_size=MAX_ACTS))
#: a program's control draw: a MatMulAdd's control flow (1 if, 2 loop, else none) and which layer's
#: (modulo the layers), an activation's (the same) and which (modulo the program's activation
#: instructions), an if activation's else side (the operand, max or min against 0)
CTL = st.tuples(st.integers(0, 7), st.integers(0, 3), st.integers(0, 7), st.integers(0, 15), st.integers(0, 2))
NO_CTL = (0, 0, 0, 0, 0)
#: the local-size draw: 1 .. len(PARTIAL) a partial subgroup, anything else a full one
LOCAL_PICK = st.integers(0, 15)
#: the strata that force a construct
CONSTRUCTS = ("branch", "loop", "partial")
#: conversions after the last layer, by its Result Type: none first
FINAL = {F16: [(), (F32,)], S32: [(), (F16,), (F32,), (S8,)]}


def profile_combinations(profile: DeviceProfile) -> list[tuple]:
    prof = profile
    if prof.properties.get("maxCooperativeVectorComponents", 0) <= 0 or not prof.has_feature("cooperativeVector"):
        raise ProfileLacksError(f"profile {prof.name!r} has no cooperative vector support (maxCooperativeVectorComponents, "
                         "cooperativeVector): pick a profile that advertises VK_NV_cooperative_vector")
    combos = combinations(prof)
    if not combos:
        raise ProfileLacksError(f"profile {prof.name!r} advertises no cooperative-vector combination ctsgen models")
    return combos


def _ctl(pick: int) -> Ctl | None:
    return {1: Ctl.branch, 2: Ctl.loop}.get(pick)


def _alt(pick: int, t: object) -> ElementOp | None:
    """An if activation's else side: the operand (0), max (1) or min (2) against 0 of the type's kind."""
    fns = acts_for(t)
    return {1: fns[0], 2: fns[-1]}.get(pick)  # FLOAT_ACTS / INT_ACTS: max first, min last


def build(combos: Sequence[tuple], k_pick: int, layers: Sequence[tuple], final_pick: int,
          max_components: int = 512, train: bool = False, floats: bool = False,
          ctl: tuple[int, ...] = NO_CTL, local_pick: int = 0) -> Program:
    """The program the raw draws describe (see the module docstring); always valid. ``train``
    adds the training step where the last layer allows it (float16 result and input). ``floats``
    keeps every value a float16 / float32 (combinations whose Input, InputInterpretation and
    MatrixInterpretation are one float type, float conversion paths, no training, no control flow): a
    program that may take float-domain data (bounds.float_domain_rule), where the profile has
    a float combination. ``ctl`` is the control draw (:data:`CTL`),
    ``local_pick`` the local size (:data:`LOCAL_PICK`)."""
    local = PARTIAL[local_pick - 1] if 1 <= local_pick <= len(PARTIAL) else LOCAL
    sizes = [s for s in SIZES if s <= max_components]
    float_combos = [c for c in combos if c[4].is_float and c[1] is c[0] and c[2].is_float and c[2] is c[0]]
    floats = floats and bool(float_combos)
    if floats:  # no control flow either: it stays in the exact domain (bounds.float_domain_rule)
        combos, train, ctl = float_combos, False, NO_CTL
    inner = [c for c in combos if not c[1].is_packed]
    nodes: list[Node] = []
    prev: Layer | None = None
    mm_pick, mm_where, act_pick, act_where, alt_pick = ctl
    n_acts = sum(len(x[5]) for x in layers)
    act_at = act_where % n_acts if n_acts else -1  # the controlled activation, counted over the program
    for j, (combo_pick, layout_pick, transpose_pick, m_pick, path_pick, acts) in enumerate(layers):
        pool = combos if prev is None else [c for c in inner if conversion_paths(prev.resultType, c[0])]
        kinds = list(dict.fromkeys(c[4] for c in pool))  # by Result Type first: float and integer layers alike
        group = [c for c in pool if c[4] is kinds[combo_pick % len(kinds)]]
        c = group[(combo_pick // len(kinds)) % len(group)]
        if prev is None:
            ks = [s for s in sizes if s % 4 == 0] if c[1].is_packed else sizes
            K = ks[k_pick % len(ks)]
        else:
            K = prev.M
            paths = [q for q in conversion_paths(prev.resultType, c[0]) if not floats or all(t.is_float for t in q)]
            nodes += [Node(Op.convert, VecType(t, K)) for t in paths[path_pick % len(paths)]]
        lays = valid_layouts(c)
        if local < LOCAL:  # hazard partial-subgroup-row-column-major: optimal layouts only
            lays = [x for x in lays if MatrixLayout(x).optimal] or lays
        lay = lays[layout_pick % len(lays)]
        transpose = bool(c[5] and MatrixLayout(lay).optimal and transpose_pick)
        mm_ctl = _ctl(mm_pick) if j == mm_where % len(layers) else None
        square = c[0] is c[4] and not c[1].is_packed  # a loop repeats it: M = K
        if mm_ctl is Ctl.loop and not square:
            mm_ctl = Ctl.branch
        layer = Layer(*c[:5], MatrixLayout(lay), transpose, K if mm_ctl is Ctl.loop else sizes[m_pick % len(sizes)], K)
        if prev is None:
            nodes.append(Node(Op.load, layer.input))
        nodes.append(Node(Op.matmuladd, layer.result, layer, ctl=mm_ctl))
        fns = acts_for(layer.resultType)
        first = sum(len(x[5]) for x in layers[:j])
        act_ctl = [_ctl(act_pick) if first + k == act_at else None for k in range(len(acts))]
        nodes += [Node(Op.act, layer.result, fn=fns[a % len(fns)], ctl=act_ctl[k],
                       alt=_alt(alt_pick, layer.resultType) if act_ctl[k] is Ctl.branch else None)
                  for k, a in enumerate(acts)]
        prev = layer
    train = train and prev.resultType is F16 and prev.inputType is F16
    finals = [()] if train else FINAL.get(prev.resultType, [()])
    nodes += [Node(Op.convert, VecType(t, prev.M)) for t in finals[final_pick % len(finals)]]
    nodes.append(Node(Op.store, nodes[-1].type))
    if train:
        nodes += [Node(Op.outer, prev.result), Node(Op.reducesum, prev.result)]
    return Program(tuple(nodes), local)


def strata() -> list[dict[str, object]]:
    """Each named seed program, then each number of layers, then each forced construct."""
    return [{"seed": name} for name in SEEDS] + [{"layers": n} for n in range(MIN_LAYERS, MAX_LAYERS + 1)] + \
        [{"construct": c} for c in CONSTRUCTS]


@st.composite
def program_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                     seed: str | None = None, layers: int | None = None,
                     floats: bool | None = None, construct: str | None = None) -> ProgramVariant:
    """A program shape on the options' profile; ``seed`` pins a named seed program, ``layers``
    the number of layers, ``floats`` whether it is a float program (``build``), ``construct``
    one of :data:`CONSTRUCTS` that the program must hold (the first layer's MatMulAdd under an
    if; an activation of the first layer under a loop; a partial subgroup)."""
    if construct is not None and construct not in CONSTRUCTS:
        raise ValueError(f"unknown construct {construct!r}; use one of {', '.join(CONSTRUCTS)}")
    profile = options.profile or default_profile()
    combos = profile_combinations(profile)
    if seed is not None:
        if seed not in SEEDS:
            raise ValueError(f"unknown seed program {seed!r}; use one of {', '.join(SEEDS)}")
        return ProgramVariant(SEEDS[seed])
    n = draw(st.integers(MIN_LAYERS, MAX_LAYERS)) if layers is None else layers  # uniform: chains as often as not
    raw = draw(st.lists(LAYER, min_size=n, max_size=n))
    limit = int(profile.properties.get("maxCooperativeVectorComponents", 512))
    k_pick, final_pick = draw(st.integers(0, len(SIZES) - 1)), draw(st.integers(0, 3))
    trains = profile.has_feature("cooperativeVectorTraining") and \
        bool(profile.properties.get("cooperativeVectorTrainingFloat16Accumulation", 0))
    train = draw(st.booleans()) and trains  # no training is the shrink target
    if floats is None:
        floats = draw(st.integers(0, 3)) == 3  # drawn last: a quarter of the programs all-float (the float domain's)
    ctl = draw(CTL)  # after the chain: all 0 (no control flow) is today's program
    floats = floats and construct not in ("branch", "loop")  # a float program has no control flow
    local_pick = draw(LOCAL_PICK)
    if construct == "branch":
        ctl = (1,) + ctl[1:]
    elif construct == "loop":  # an activation loops: one is there whatever the layer's combination
        raw[0] = raw[0][:5] + (raw[0][5] or [0],)
        ctl = (ctl[0], ctl[1], 2, 0, 0)
    elif construct == "partial":
        local_pick = 1 + local_pick % len(PARTIAL)
    return ProgramVariant(build(combos, k_pick, raw, final_pick, limit, train, floats, ctl, local_pick))


@functools.lru_cache(maxsize=512)
def scalar_choices(fn: ElementOp, limit: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The scalars (s, then t) an activation may take under its result's limit, simplest first
    (every choice keeps program.act_prelimit at least 1)."""
    name = ACT_NAME[fn]
    if name in ("max", "min"):
        return tuple(s for s in (0, -1, 1, -2, 2, -4, 4) if abs(s) <= limit), (0,)
    if name == "clamp":
        return (tuple(s for s in (0, -1, -2, -8, -64, -128) if -s <= limit),
                tuple(t for t in (1, 2, 8, 64, 127) if t <= limit))
    if name == "scale":
        return tuple(s for s in (1, 2, -1, -2, 3, -3) if abs(s) <= limit), (0,)
    if name == "add":
        return tuple(s for s in (0, 1, -1, 2, -2, 4, -4) if 2 * abs(s) <= limit), (0,)
    if name == "fma":
        return tuple(s for s in (1, 2, -1, -2, 3, -3) if abs(s) <= max(1, limit // 2)), \
            tuple(t for t in (0, 1, -1, 2, -2, 4, -4) if 2 * abs(t) <= limit and abs(t) <= limit - max(1, limit // 2))
    return (0, 1, 2, 3), (0,)  # shr


@dataclass(frozen=True)
class _LayerDraw:
    """What a MatMulAdd's run-time draws need of its layer, worked out once per variant: the stored
    line (bytes of a row / column; None for an optimal layout, which has no stride) and the bias bytes."""

    line: int | None
    bias_bytes: int


def _layer_draw(layer: Layer) -> _LayerDraw:
    line = None
    if not layer.layout.optimal:
        rows, cols = layer.variant().stored_shape
        line = (cols if layer.layout is MatrixLayout.RowMajor else rows) * layer.matrixInterpretation.dtype.itemsize
    return _LayerDraw(line, layer.M * layer.biasInterpretation.dtype.itemsize)


#: The run-time draws, built once: a data seed, the domain pick, a layer's extra stride, bias slot
#: and matrix offset picks, an activation's two scalar picks.
DATA_SEEDS = integers(0, 2**32 - 1)
PICK_4 = integers(0, 3)
PICK_3 = integers(0, 2)
PICK_16 = integers(0, 15)


def program_cases_for(variant: ProgramVariant,
                      options: StrategyOptions = StrategyOptions()) -> st.SearchStrategy[ProgramCase]:
    """Run-time parameters of every node (see the module docstring), valid by construction.

    Drawn in an order that keeps a shrink step local: the data seed and domain first, then each layer's
    operands and each activation's scalar picks in program order, the picks resolved from the
    store backwards (each scalar's options depend on the limit its consumers leave). Deleting
    the last activation or layer then leaves every earlier draw, and the data, as they were.

    What the draws need of each layer, and whether the program may take float-domain data, are
    worked out here, once for all the cases of the variant."""
    p = variant.program
    layers = {i: _layer_draw(n.layer) for i, n in enumerate(p.nodes) if n.op is Op.matmuladd}
    return _program_cases(variant, layers, float_domain_rule(p) is None)


@st.composite
def _program_cases(draw: st.DrawFn, variant: ProgramVariant, layers: dict[int, _LayerDraw],
                   floats_allowed: bool) -> ProgramCase:
    """:func:`program_cases_for`'s draws, with ``layers[i]`` what MatMulAdd node i's draws need."""
    p = variant.program
    seed = draw(DATA_SEEDS)
    # drawn for every program, exact the shrink target: a shrink step that makes a program a float one
    # then needs no draw past the end of the buffer (which stopped shrinking at 4 operations). Float for
    # picks 1-3: Hypothesis draws the simplest value (0) for many examples, so an even pick gave float
    # data to only a quarter of the float programs' cases
    domain = DOMAINS[min(draw(PICK_4), 1)]
    params: list[LayerParams | Scalars | None] = [None] * len(p.nodes)
    picks: dict[int, tuple[int, int]] = {}
    boff = 0
    for i, n in enumerate(p.nodes):
        if n.op is Op.matmuladd:
            L = layers[i]
            extra = draw(PICK_4)  # drawn for every layout: a layout change keeps the draws aligned
            stride = 0 if L.line is None else ceil_to(L.line, 16) + 16 * extra
            boff += 16 * draw(PICK_3)
            params[i] = LayerParams(64 * draw(PICK_4), stride, boff)
            boff = ceil_to(boff + L.bias_bytes, 16)
        elif n.op is Op.act:
            picks[i] = (draw(PICK_16), draw(PICK_16))

    def choose(i: int, limit: int) -> tuple[int, int]:
        n = p.nodes[i]
        s_opts, t_opts = scalar_choices(n.fn, limit)
        a, b = picks[i]
        # a loop's scalars must keep every trip within the limit: the first pair from the picks on that
        # does ((s_opts[0], t_opts[0]) always does: an identity or clamp(x, 0, 1))
        for k in range(len(s_opts) * len(t_opts)):
            st_ = s_opts[(a + k // len(t_opts)) % len(s_opts)], t_opts[(b + k) % len(t_opts)]
            if n.ctl is not Ctl.loop or act_operand_limit(n, *st_, limit) is not None:
                return st_
        return s_opts[0], t_opts[0]

    for i, st_ in enumerate(p.walk_limits(choose)[1]):
        if st_ is not None:
            params[i] = Scalars(*st_)
    return ProgramCase(variant, tuple(params), seed, domain if floats_allowed else "exact")


def _mlp_2_layer() -> Program:
    """The shape of a neural shader's MLP: a float16 input of 16, a hidden layer of 32 with
    ReLU (max(x, 0)) from a row-major matrix, then an output layer of 8 from an
    InferencingOptimal matrix (the layout a renderer converts its weights to), clamped."""
    fp16 = (F16, F16, F16, F16, F16)
    hidden = Layer(*fp16, MatrixLayout.RowMajor, False, 32, 16)
    out = Layer(*fp16, MatrixLayout.InferencingOptimal, False, 8, 32)
    return Program((
        Node(Op.load, hidden.input),
        Node(Op.matmuladd, hidden.result, hidden),
        Node(Op.act, hidden.result, fn=ElementOp.fmax),           # ReLU
        Node(Op.matmuladd, out.result, out),
        Node(Op.act, out.result, fn=ElementOp.fclamp),
        Node(Op.store, out.result),
    ))


def _int8_mlp_2_layer() -> Program:
    """A quantized MLP: int8 input, an int8 x int8 -> int32 layer, requantized (x >> s, clamp,
    to int8), a second int8 layer, dequantized to float16."""
    hidden = Layer(S8, S8, S8, S32, S32, MatrixLayout.ColumnMajor, False, 24, 16)
    out = Layer(S8, S8, S8, S32, S32, MatrixLayout.InferencingOptimal, False, 4, 24)
    return Program((
        Node(Op.load, hidden.input),
        Node(Op.matmuladd, hidden.result, hidden),
        Node(Op.act, hidden.result, fn=ElementOp.shr),
        Node(Op.act, hidden.result, fn=ElementOp.iclamp),
        Node(Op.convert, VecType(S8, 24)),
        Node(Op.matmuladd, out.result, out),
        Node(Op.convert, VecType(F16, 4)),
        Node(Op.store, VecType(F16, 4)),
    ))


#: Named seed programs, shaped like the networks neural shaders run; always in a pack.
SEEDS: dict[str, Program] = {"mlp-2-layer": _mlp_2_layer(), "int8-mlp-2-layer": _int8_mlp_2_layer()}
