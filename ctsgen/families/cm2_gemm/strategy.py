"""Strategies for cm2-gemm: a flexible-dimensions entry and tile sizes, then the problem.

Valid by construction: (A/B type, C type, scope, workgroup size) come from one
flexible-dimensions entry of the profile (cooperativeMatrixFlexibleDimensions,
and cooperativeMatrixWorkgroupScope for workgroup entries); TILE_M / TILE_N /
TILE_K are 1..2 times the entry's M/N/K granularities (within
cooperativeMatrixFlexibleDimensionsMaxDimension), and every tile type is
checked with supports_matrix; M, N, K are 1..3 tiles, the computed tile lies
inside. Float alpha/beta are zero or powers of two (exact scaling).

Shrinks toward the first (float16, subgroup) entry, one granule per tile,
a 1x1x1-tile problem, alpha 1, beta 0, seed 0.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

from ctsgen.device.profile import default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_gemm.case import FLOAT_SCALES, GemmCase, GemmVariant
from ctsgen.model.types import ComponentType, Scope
from ctsgen.strategies.cached import SEEDS, integers


def strata() -> list[dict[str, object]]:
    """Scope x float or integer accumulation."""
    return [{"scope": s, "float_c": f} for s in Scope for f in (True, False)]


@st.composite
def gemm_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                  scope: Scope | None = None, float_c: bool | None = None) -> GemmVariant:
    profile = options.profile or default_profile()
    entries = []
    if profile.has_feature("cooperativeMatrixFlexibleDimensions"):
        for e in profile.flexible_dimensions:
            sc = Scope(e["scope"])
            a, c = ComponentType.from_vk(e["AType"]), ComponentType.from_vk(e["CType"])
            if a is None or c is None or e["AType"] != e["BType"] or e["CType"] != e["ResultType"]:
                continue
            if sc is Scope.Workgroup and not profile.has_feature("cooperativeMatrixWorkgroupScope"):
                continue
            if (scope is None or sc is scope) and (float_c is None or c.is_float == float_c):
                entries.append(e)
    if not entries:
        raise ProfileLacksError(f"device profile {profile.name!r} has no flexible-dimensions entry for this GEMM stratum")
    e = draw(st.sampled_from(entries))
    sc = Scope(e["scope"])
    wg = e["workgroupInvocations"] if sc is Scope.Workgroup else profile.subgroup_size
    limit = profile.flexible_max_dimension
    tiles = [draw(st.integers(1, max(1, min(2, limit // g)))) * g
             for g in (e["MGranularity"], e["NGranularity"], e["KGranularity"])]
    v = GemmVariant(ComponentType.from_vk(e["AType"]), ComponentType.from_vk(e["CType"]), sc, wg, *tiles)
    for mt in v.matrices():
        why = profile.supports_matrix(mt)
        if why:
            raise ValueError(f"flexible-dimensions entry gives an unsupported tile: {why}")
    return v


_TILES = st.integers(1, 3)  # M, N and K in tiles
_ALPHAS, _BETAS = st.sampled_from(FLOAT_SCALES), st.sampled_from(FLOAT_SCALES[1:] + (1.0,))
_VALUES = st.sampled_from(("grid", "random"))


@functools.lru_cache(maxsize=None)
def _int_scalars(c_type: ComponentType) -> st.SearchStrategy[int]:
    """An integer alpha or beta: small (|x| <= 3, where it shrinks) or any value of the type."""
    info = np.iinfo(c_type.dtype)
    return st.one_of(st.integers(max(-3, int(info.min)), 3), st.integers(int(info.min), int(info.max)))


@st.composite
def gemm_cases_for(draw: st.DrawFn, variant: GemmVariant,
                   options: StrategyOptions = StrategyOptions()) -> GemmCase:
    mt, nt, kt = draw(_TILES), draw(_TILES), draw(_TILES)
    ty, tx = draw(integers(0, mt - 1)), draw(integers(0, nt - 1))
    if variant.c_type.is_float:
        alpha, beta = draw(_ALPHAS), draw(_BETAS)
    else:
        scalar = _int_scalars(variant.c_type)
        alpha, beta = draw(scalar), draw(scalar)
    # full-mantissa data where the sums round and a device model can see them (grid first: it shrinks there)
    values = draw(_VALUES) if variant.a_type.is_float and variant.c_type.is_float else "grid"
    return GemmCase(variant, mt, nt, kt, ty, tx, alpha, beta, draw(SEEDS), values)
