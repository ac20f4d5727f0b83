"""Strategies for coopvec cases, valid by construction and restricted to a device profile.

:func:`coopvec_variants` draws a compile-time signature from the profile's
advertised VkCooperativeVectorPropertiesNV combinations (the H100 read-out
by default), a MemoryLayout allowed for its MatrixInterpretation (E4M3 /
E5M2 only optimal: VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090),
Transpose only where the combination allows it and the layout is optimal,
and M, K up to maxCooperativeVectorComponents (K a multiple of 4 for packed
inputs), and the workgroup size (INVOCATIONS; a RowMajor / ColumnMajor MatMul
in a partial subgroup only with --include-hazardous, see
:func:`hazardous_coopvec_cases`). Training ops need cooperativeVectorTraining and fp16 accumulation
(cooperativeVectorTrainingFloat16Accumulation), OuterProductAccumulate the
TrainingOptimal layout (VUID-...-OuterProductAccumulateNV-10093).
:func:`coopvec_cases` draws MatrixOffset (multiple of 64, VUID-...-10097),
MatrixStride (a multiple of 16 at least the row/column length, VUID-...-10096),
BiasOffset (multiple of 16, VUID-...-10098) and how the data are drawn
(:func:`value_kinds`). Shrinks toward the first combination, RowMajor, small M
and K, zero offsets, minimum stride, random data.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.families.coopvec.case import CoopVecCase
from ctsgen.families.coopvec.variant import (
    MATMUL_OPS,
    TRAINING_OPS,
    VALUE_KINDS,
    CoopVecOp,
    CoopVecVariant,
    MatrixLayout,
    ceil_to,
)
from ctsgen.model.types import CoopVecType
from ctsgen.strategies.cached import SEEDS, sampled
from ctsgen.strategies.counts import component_counts

SIZES = (1, 2, 3, 4, 5, 8, 12, 16, 17, 24, 32, 40, 48, 64, 96, 128)
LARGE_SIZES = (256, 512)
#: workgroup sizes: one full H100 subgroup first (the shrink target), then partial and several subgroups
FULL_SUBGROUPS = (32, 64)
PARTIAL_SUBGROUPS = (8, 1)
INVOCATIONS = FULL_SUBGROUPS + PARTIAL_SUBGROUPS
Combo = tuple[CoopVecType, CoopVecType, CoopVecType, CoopVecType, CoopVecType, bool]
_FP8 = (CoopVecType.floate4m3, CoopVecType.floate5m2)


def combinations(profile: DeviceProfile) -> list[Combo]:
    """The profile's advertised combinations, in its order (types ctsgen does not model are left out)."""
    out = []
    for c in profile.coopvec_combinations:
        try:
            out.append((*(CoopVecType.from_vk(c[k]) for k in ("inputType", "inputInterpretation",
                                                               "matrixInterpretation", "biasInterpretation",
                                                               "resultType")), bool(c["transpose"])))
        except ValueError:
            continue
    return out


def valid_layouts(combo: Combo) -> list[MatrixLayout]:
    """Every layout, or only the optimal ones for an E4M3/E5M2 matrix (VUID-...-10090)."""
    return [lay for lay in MatrixLayout if lay.optimal or combo[2] not in _FP8]


def strata() -> list[dict[str, object]]:
    """Every advertised combination (H100 read-out) x every valid layout, MatMul and MatMulAdd,
    and the two training operations x every workgroup size (atomic accumulation by 1 to 64
    invocations)."""
    combos = combinations(default_profile())
    cells: list[dict[str, object]] = [{"op": op, "combo": i, "layout": lay}
                                      for i, c in enumerate(combos) for lay in valid_layouts(c)
                                      for op in MATMUL_OPS]
    return cells + [{"op": op, "invocations": n} for op in TRAINING_OPS for n in INVOCATIONS]


def _profile(options: StrategyOptions) -> DeviceProfile:
    return options.profile or default_profile()


def _size(draw: st.DrawFn, limit: int, multiple: int = 1) -> int:
    return draw(component_counts(SIZES, LARGE_SIZES, limit, multiple))


@st.composite
def coopvec_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *, op: CoopVecOp | None = None,
                     combo: int | None = None, layout: MatrixLayout | None = None,
                     invocations: int | None = None) -> CoopVecVariant:
    """Draw a signature valid on the options' profile; keywords pin a part of it."""
    prof = _profile(options)
    limit = prof.properties.get("maxCooperativeVectorComponents", 0)
    if limit <= 0 or not prof.has_feature("cooperativeVector"):
        raise ProfileLacksError(f"profile {prof.name!r} has no cooperative vector support (maxCooperativeVectorComponents, "
                         "cooperativeVector): pick a profile that advertises VK_NV_cooperative_vector")
    training = prof.has_feature("cooperativeVectorTraining") and \
        prof.properties.get("cooperativeVectorTrainingFloat16Accumulation", 0)
    ops = list(MATMUL_OPS) + (list(TRAINING_OPS) if training else [])
    o = draw(st.sampled_from(ops)) if op is None else op
    f16 = CoopVecType.float16
    if o not in MATMUL_OPS:
        if o not in ops:
            raise ProfileLacksError(f"{o}: the profile lacks cooperativeVectorTraining with fp16 accumulation")
        k = _size(draw, limit)
        outer = o == CoopVecOp.outer_product
        m = _size(draw, limit if k <= 128 else 64) if outer else 1
        return CoopVecVariant(o, f16, f16, f16, f16, f16, MatrixLayout.TrainingOptimal if outer else MatrixLayout.RowMajor,
                              False, m, k,
                              draw(_invocations(INVOCATIONS)) if invocations is None else invocations)
    combos = combinations(prof)
    c = combos[draw(st.integers(0, len(combos) - 1)) if combo is None else combo]
    lay = draw(st.sampled_from(valid_layouts(c))) if layout is None else layout
    transpose = draw(st.booleans()) if c[5] and MatrixLayout(lay).optimal else False
    k = _size(draw, limit, 4 if c[1].is_packed else 1)
    # at most one large dimension: keeps a case's data (and a pack) small
    if invocations is None:
        safe = MatrixLayout(lay).optimal or options.include_hazardous
        invocations = draw(_invocations(INVOCATIONS if safe else FULL_SUBGROUPS))
    return CoopVecVariant(o, *c[:5], lay, transpose, _size(draw, limit if k <= 16 else 128 if k <= 128 else 32), k,
                          invocations)


def _invocations(sizes: tuple[int, ...]) -> st.SearchStrategy[int]:
    """Workgroup size: a full subgroup more often than not, any of ``sizes`` otherwise."""
    return st.just(sizes[0]) | st.sampled_from(sizes)


@st.composite
def hazardous_coopvec_cases(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(),
                            variants: Sequence[CoopVecVariant] = ()) -> CoopVecCase:
    """Draw a case of hazard "partial-subgroup-row-column-major" (CoopVecCase.hazards): a
    RowMajor / ColumnMajor MatMul in a workgroup smaller than a subgroup. The spec allows it;
    on the H100 such dispatches return wrong values and hang when several workgroups run
    (docs/validation.md, coopvec run 4). Opt-in only; its shaders differ from the ordinary
    cases' (the workgroup size is compile-time), so ``variants`` is not used."""
    prof = _profile(options)
    combo = draw(st.sampled_from([i for i, c in enumerate(combinations(prof)) if MatrixLayout.RowMajor in valid_layouts(c)]))
    v = draw(coopvec_variants(options, op=draw(st.sampled_from(MATMUL_OPS)), combo=combo,
                              layout=draw(st.sampled_from((MatrixLayout.RowMajor, MatrixLayout.ColumnMajor))),
                              invocations=draw(st.sampled_from(PARTIAL_SUBGROUPS))))
    return draw(coopvec_cases(v, options))


_QUARTERS = st.integers(0, 3)  # MatrixOffset / 64, MatrixStride's padding / 16, BiasOffset / 16


@st.composite
def coopvec_cases(draw: st.DrawFn, v: CoopVecVariant, options: StrategyOptions = StrategyOptions()) -> CoopVecCase:
    """Draw valid run-time operands for ``v`` (see the module docstring)."""
    moff = stride = boff = 0
    if v.op in MATMUL_OPS or v.op is CoopVecOp.outer_product:
        moff = 64 * draw(_QUARTERS)
    if v.op in MATMUL_OPS and not v.optimal:
        rows, cols = v.stored_shape
        line = (cols if v.layout is MatrixLayout.RowMajor else rows) * v.matrixInterpretation.dtype.itemsize
        stride = ceil_to(line, 16) + 16 * draw(_QUARTERS)
    if v.op is CoopVecOp.matmuladd or v.op is CoopVecOp.reduce_sum:
        boff = 16 * draw(_QUARTERS)
    seed = draw(SEEDS)
    return CoopVecCase(v, moff, stride, boff, seed, draw(sampled(value_kinds(v))))


def value_kinds(v: CoopVecVariant) -> tuple[str, ...]:
    """The data a variant can take (CoopVecCase.values), simplest first: ``grid`` and ``special``
    need float arithmetic with a float InputInterpretation; the training ops are fp16."""
    if v.op not in MATMUL_OPS:
        return ("random", "grid")
    return VALUE_KINDS if v.takes_special_values else ("random", "edges")
