"""Strategies for cm2-reduce: a reduce mode and combine function, then types the device allows.

Valid by construction: the source is an Accumulator type the profile lists
(fixed or a flexible multiple); the result has the source's component type
and scope and a shape the mode allows (Row keeps the rows, Column the
columns, Row|Column any shape, 2x2 exactly half), and the device must
support it too. ``xor`` is drawn for integer components only; a float sum
only over few enough terms that its derived tolerance means something
(oracle.MAX_SUM_NU).

A Subgroup-scope variant runs in a workgroup of 1 to ctsgen.ops.cm2.MAX_SUBGROUPS subgroups, each
reducing its own tile (docs/spec-decisions.md "subgroup-scope-workgroups").

Shrinks toward Row, sum, the smallest float16 subgroup accumulator, a result of the source's own
shape and one subgroup, seed 0.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_reduce.case import VALUES, ReduceCase, ReduceVariant
from ctsgen.ops.cm2_reduce import Combine, ReduceMode, result_shape, sum_is_meaningful
from ctsgen.ops.cm2 import in_subgroups, most_subgroups, profile_key, same_kind, supported_matrices
from ctsgen.model.types import MatrixType, MatrixUse
from ctsgen.strategies.cached import SEEDS


_VALUES = st.sampled_from(VALUES)


def strata() -> list[dict[str, object]]:
    """Every reduce mode x combine function."""
    return [{"mode": m, "combine": c} for m in ReduceMode for c in Combine]


def _results(profile: DeviceProfile, source: MatrixType, mode: ReduceMode) -> list[MatrixType]:
    """Allowed result types, the source's own shape first (then simplest)."""
    out = [r for r in same_kind(profile, source, use=MatrixUse.Accumulator, component=source.component)
           if result_shape(mode, source.rows, source.cols, r.rows, r.cols) is None]
    return sorted(out, key=lambda r: (r.rows, r.cols) != (source.rows, source.cols))


_SOURCES: dict[tuple, list[MatrixType]] = {}


def sources(profile: DeviceProfile, mode: ReduceMode, combine: Combine) -> list[MatrixType]:
    """Accumulator types that have at least one valid result for ``mode`` (cached per profile)."""
    key = (profile_key(profile), mode, combine)
    if key not in _SOURCES:
        _SOURCES[key] = _sources(profile, mode, combine)
    return _SOURCES[key]


def _sources(profile: DeviceProfile, mode: ReduceMode, combine: Combine) -> list[MatrixType]:
    return [m for m in supported_matrices(profile) if m.use is MatrixUse.Accumulator
            and not (combine is Combine.xor and m.component.is_float)
            and (combine is not Combine.sum or sum_is_meaningful(mode, m.rows, m.cols, m.component))
            and _results(profile, m, mode)]


@st.composite
def reduce_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                    mode: ReduceMode | None = None, combine: Combine | None = None) -> ReduceVariant:
    """Draw a compile-time signature; keywords pin the mode or combine function."""
    profile = options.profile or default_profile()
    # an unpinned mode / combine function is drawn among those with a source type on the profile
    mode = draw(st.sampled_from([m for m in ReduceMode if any(sources(profile, m, c) for c in Combine)]
                                or list(ReduceMode))) if mode is None else mode
    combine = draw(st.sampled_from([c for c in Combine if sources(profile, mode, c)] or list(Combine))) \
        if combine is None else combine
    cands = sources(profile, mode, combine)
    if not cands:
        raise ProfileLacksError(f"device profile {profile.name!r} has no accumulator type for a "
                         f"{mode.name} {combine.value} reduction")
    source = draw(st.sampled_from(cands))
    result = draw(st.sampled_from(_results(profile, source, mode)))
    subgroups = draw(st.integers(1, most_subgroups(profile, source)))  # shrinks to one subgroup
    return ReduceVariant(mode, combine, in_subgroups(source, subgroups), in_subgroups(result, subgroups), subgroups)


@st.composite
def reduce_cases_for(draw: st.DrawFn, variant: ReduceVariant,
                     options: StrategyOptions = StrategyOptions()) -> ReduceCase:
    seed = draw(SEEDS)
    float_sum = variant.source.component.is_float and variant.combine is Combine.sum
    # full-significand data where a device model can see the combine order (grid first: it shrinks there)
    return ReduceCase(variant, seed, draw(_VALUES) if float_sum else "grid")
