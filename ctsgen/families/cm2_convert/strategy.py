"""Strategies for cm2-convert: a kind and Use change, then a source/result pair the device allows.

Valid by construction (see case.check_pair): same scope; conversions keep
the shape; a Use change goes Accumulator -> A or B; ConvertNV keeps the
component type; transpose is Accumulator M x N -> B N x M of one component
type; both types must be supported by the profile. Source data keeps every
conversion defined (oracle.source_values).

Shrinks toward a component conversion without Use change between the
smallest float16 subgroup types, seed 0.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, default_profile
from ctsgen.families.base import StrategyOptions
from ctsgen.families.cm2_convert.case import ConvertCase, ConvertVariant, check_pair
from ctsgen.families.cm2_convert.oracle import Kind
from ctsgen.families.cm2_reduce.shapes import profile_key, same_kind, supported_matrices
from ctsgen.model.types import MatrixType, MatrixUse

#: Strata: kind x result Use ("same" = the source's Use).
STRATA = [(Kind.convert, "same"), (Kind.convert, "A"), (Kind.convert, "B"),
          (Kind.use, "A"), (Kind.use, "B"), (Kind.transpose, "B")]


def strata() -> list[dict[str, object]]:
    return [{"kind": k, "to_use": u} for k, u in STRATA]


def _use_ok(s: MatrixType, r: MatrixType, to_use: str) -> bool:
    return r.use is s.use if to_use == "same" else r.use is MatrixUse[to_use] and s.use is not r.use


_PAIRS: dict[tuple, tuple[tuple[MatrixType, MatrixType], ...]] = {}


def pairs(profile: DeviceProfile, kind: Kind, to_use: str) -> tuple[tuple[MatrixType, MatrixType], ...]:
    """Every (source, result) pair of the stratum the profile supports, simplest first."""
    key = (profile_key(profile), kind, to_use)
    if key not in _PAIRS:
        _PAIRS[key] = tuple((s, r) for s in supported_matrices(profile) for r in same_kind(profile, s)
                            if _use_ok(s, r, to_use) and check_pair(kind, s, r) is None)
    return _PAIRS[key]


@st.composite
def convert_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                     kind: Kind | None = None, to_use: str | None = None) -> ConvertVariant:
    profile = options.profile or default_profile()
    if kind is None or to_use is None:
        kind, to_use = draw(st.sampled_from([(k, u) for k, u in STRATA if (kind in (None, k)) and
                                             (to_use in (None, u))]))
    cands = pairs(profile, kind, to_use)
    if not cands:
        raise ValueError(f"device profile {profile.name!r} supports no {kind.value} to {to_use} pair")
    s, r = draw(st.sampled_from(cands))
    return ConvertVariant(kind, s, r)


@st.composite
def convert_cases_for(draw: st.DrawFn, variant: ConvertVariant,
                      options: StrategyOptions = StrategyOptions()) -> ConvertCase:
    return ConvertCase(variant, draw(st.integers(0, 2**32 - 1)))


@st.composite
def convert_cases(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), **pinned: object) -> ConvertCase:
    """A whole case: a variant (``pinned`` keywords fix parts of it), then its run-time draws."""
    return draw(convert_cases_for(draw(convert_variants(options, **pinned)), options))
