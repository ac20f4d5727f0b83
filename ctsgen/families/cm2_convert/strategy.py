"""Strategies for cm2-convert: a kind and Use change, a component pair, then a source/result pair the device allows.

Valid by construction (see case.check_pair): same scope; conversions keep
the shape; a Use change goes Accumulator -> A or B; ConvertNV keeps the
component type; transpose is Accumulator M x N -> B N x M of one component
type; both types must be supported by the profile. Source data keeps every
conversion defined (oracle.source_values).

The component pair is drawn uniformly from those the kind and Use change
allow, before the shapes and scopes (a pair's share of matrix types would
otherwise weigh it: float16 has three Uses and many shapes, the 8-bit types
few). Shrinks toward a component conversion without Use change between the
smallest subgroup types, seed 0.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_convert.case import ConvertCase, ConvertVariant, check_pair
from ctsgen.ops.cm2_convert import Kind
from ctsgen.ops.cm2 import in_subgroups, most_subgroups, profile_key, same_kind, supported_matrices
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.strategies.cached import SEEDS

#: Kind x result Use ("same" = the source's Use): every conversion the family runs.
KIND_USES = [(Kind.convert, "same"), (Kind.convert, "A"), (Kind.convert, "B"),
         (Kind.use, "A"), (Kind.use, "B"), (Kind.transpose, "B")]

#: A matrix type's scope and workgroup size (a subgroup of 32 for Subgroup scope).
Scoping = tuple[Scope, int]
Pair = tuple[MatrixType, MatrixType]


def scoping(m: MatrixType) -> Scoping:
    return m.scope, m.workgroup_size


def _use_ok(s: MatrixType, r: MatrixType, to_use: str) -> bool:
    return r.use is s.use if to_use == "same" else r.use is MatrixUse[to_use] and s.use is not r.use


_PAIRS: dict[tuple, tuple[Pair, ...]] = {}


def needs_conversions(kind: Kind, to_use: str) -> bool:
    """Whether a conversion needs cooperativeMatrixConversions: a Use change (Accumulator -> A or B,
    SPV_NV_cooperative_matrix2's relaxed Op*Convert), OpCooperativeMatrixConvertNV and
    OpCooperativeMatrixTransposeNV do; a component conversion keeping the Use is SPV_KHR_cooperative_matrix's."""
    return not (kind is Kind.convert and to_use == "same")


def pairs(profile: DeviceProfile, kind: Kind, to_use: str) -> tuple[Pair, ...]:
    """Every (source, result) pair of the kind and result Use the profile supports, simplest first
    (none where it needs cooperativeMatrixConversions and the profile lacks it)."""
    key = (profile_key(profile), kind, to_use)
    if key not in _PAIRS:
        allowed = profile.has_feature("cooperativeMatrixConversions") or not needs_conversions(kind, to_use)
        _PAIRS[key] = tuple((s, r) for s in supported_matrices(profile) for r in same_kind(profile, s)
                            if allowed and _use_ok(s, r, to_use) and check_pair(kind, s, r) is None)
    return _PAIRS[key]


def component_pairs(profile: DeviceProfile) -> list[tuple[ComponentType, ComponentType]]:
    """The (source, result) component types of every component conversion the profile
    supports with some Use change (the same Use, Accumulator -> A or B), simplest first."""
    return list(dict.fromkeys((s.component, r.component) for k, u in KIND_USES if k is Kind.convert
                              for s, r in pairs(profile, k, u)))


def scopings(profile: DeviceProfile) -> list[Scoping]:
    """The profile's scopes and workgroup sizes, subgroup first."""
    return sorted({scoping(m) for m in supported_matrices(profile)},
                  key=lambda sc: (sc[0] is Scope.Workgroup, sc[1]))


def strata() -> list[dict[str, object]]:
    """Every component pair the H100 profile can convert (the Use change drawn among those it
    allows), and OpCooperativeMatrixConvertNV to A, to B and transpose in each of its scopes."""
    h100 = default_profile()
    cells: list[dict[str, object]] = [{"kind": Kind.convert, "source": s, "result": r}
                                      for s, r in component_pairs(h100)]
    return cells + [{"kind": k, "to_use": u, "scope": sc} for k, u in KIND_USES if k is not Kind.convert
                    for sc in scopings(h100) if any(scoping(s) == sc for s, _ in pairs(h100, k, u))]


_GROUPS: dict[tuple, dict[tuple[ComponentType, ComponentType], tuple[Pair, ...]]] = {}


def _by_components(profile: DeviceProfile, kind: Kind, to_use: str
                   ) -> dict[tuple[ComponentType, ComponentType], tuple[Pair, ...]]:
    """:func:`pairs` grouped by their (source, result) component types, simplest first."""
    key = (profile_key(profile), kind, to_use)
    if key not in _GROUPS:
        groups: dict[tuple[ComponentType, ComponentType], list[Pair]] = {}
        for s, r in pairs(profile, kind, to_use):
            groups.setdefault((s.component, r.component), []).append((s, r))
        _GROUPS[key] = {c: tuple(ps) for c, ps in groups.items()}
    return _GROUPS[key]


@st.composite
def convert_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                     kind: Kind | None = None, to_use: str | None = None, source: ComponentType | None = None,
                     result: ComponentType | None = None, scope: Scoping | None = None) -> ConvertVariant:
    """Draw a signature: kind and result Use, then a component pair, then the matrix types;
    keyword arguments pin a part of it (``scope``: (Scope, workgroup size))."""
    profile = options.profile or default_profile()

    def groups(k: Kind, u: str) -> list[tuple[Pair, ...]]:
        found = [ps if scope is None else tuple(p for p in ps if scoping(p[0]) == scope)
                 for (sc, rc), ps in _by_components(profile, k, u).items()
                 if source in (None, sc) and result in (None, rc)]
        return [ps for ps in found if ps]

    kinds = [(k, u) for k, u in KIND_USES if kind in (None, k) and to_use in (None, u) and groups(k, u)]
    if not kinds:
        pinned = {n: v for n, v in (("kind", kind), ("to_use", to_use), ("source", source), ("result", result),
                                    ("scope", scope)) if v is not None}
        wanted = [(k, u) for k, u in KIND_USES if kind in (None, k) and to_use in (None, u)]
        lacks = "" if profile.has_feature("cooperativeMatrixConversions") or \
            not all(needs_conversions(k, u) for k, u in wanted) else \
            " (feature cooperativeMatrixConversions is not supported)"
        said = ", ".join(f"{n}={getattr(v, 'name', v)}" for n, v in pinned.items())
        raise ProfileLacksError(f"device profile {profile.name!r} has no matrix types for a conversion with {said}"
                                f"{lacks} -> pin a pair it supports (cm2_convert.strategy.component_pairs) or use a "
                                "profile that has one")
    k, u = draw(st.sampled_from(kinds))
    s, r = draw(st.sampled_from(draw(st.sampled_from(groups(k, u)))))
    n = draw(st.integers(1, most_subgroups(profile, s)))  # subgroups, each its own tile; shrinks to one
    return ConvertVariant(k, in_subgroups(s, n), in_subgroups(r, n), n)


@st.composite
def convert_cases_for(draw: st.DrawFn, variant: ConvertVariant,
                      options: StrategyOptions = StrategyOptions()) -> ConvertCase:
    return ConvertCase(variant, draw(SEEDS))
