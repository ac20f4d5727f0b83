"""Strategies for cm2-gemm: a route, a property entry and tile sizes, then the problem.

Valid by construction: the route is one the profile has (:func:`routes_on`: the tensor
route needs cooperativeMatrixTensorAddressing; the khr route, OpCooperativeMatrixLoadKHR /
StoreKHR, needs no cm2 feature). (A/B type, C type, scope, workgroup size) come from one
flexible-dimensions entry of the profile (cooperativeMatrixFlexibleDimensions, and
cooperativeMatrixWorkgroupScope for workgroup entries); TILE_M / TILE_N / TILE_K are
1..2 times the entry's M/N/K granularities (within
cooperativeMatrixFlexibleDimensionsMaxDimension). On the khr route without flexible
dimensions they come from one VkCooperativeMatrixPropertiesKHR entry instead, the tile
its MSize x NSize x KSize. Every tile type is checked with supports_matrix; M, N, K are
1..3 tiles, the computed tile lies inside. Float alpha/beta are zero or powers of two
(exact scaling). The khr route draws each matrix's MemoryLayout and its stride: the
matrix's line length rounded up to the tile access's alignment unit
(VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986, ops/khr_addressing.py), plus 0..2
units of padding.

Shrinks toward the tensor route (where drawn), the first (float16, subgroup) entry,
one granule per tile, a 1x1x1-tile problem, alpha 1, beta 0, seed 0, RowMajor
and no padding.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from ctsgen.device.profile import default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import DeviceProfile
from ctsgen.families.cm2_gemm.case import FLOAT_SCALES, TENSOR_ADDRESSING, GemmCase, GemmVariant, Route
from ctsgen.model.types import ComponentType, Scope
from ctsgen.ops import khr_addressing as khr
from ctsgen.ops.khr_addressing import Layout
from ctsgen.strategies.cached import SEEDS, integers


def routes_on(profile: DeviceProfile) -> tuple[Route, ...]:
    """The routes ``profile`` runs: the khr route everywhere, the tensor route (first) where
    cooperativeMatrixTensorAddressing is set."""
    return (Route.tensor, Route.khr) if profile.has_feature(TENSOR_ADDRESSING) else (Route.khr,)


def _fixed_entries(profile: DeviceProfile) -> list[dict[str, int]]:
    """The KHR property list's subgroup entries as flexible-dimension-like entries: granularity =
    size, one granule per tile (the khr route on a device without flexible dimensions)."""
    if not profile.has_feature("cooperativeMatrix"):
        return []
    return [{**e, "MGranularity": e["MSize"], "NGranularity": e["NSize"], "KGranularity": e["KSize"],
             "workgroupInvocations": 0, "fixed": 1}
            for e in profile.coopmat_khr if Scope(e["scope"]) is Scope.Subgroup]


def strata() -> list[dict[str, object]]:
    """Scope x float or integer accumulation."""
    return [{"scope": s, "float_c": f} for s in Scope for f in (True, False)]


@st.composite
def gemm_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                  scope: Scope | None = None, float_c: bool | None = None, route: Route | None = None) -> GemmVariant:
    profile = options.profile or default_profile()
    routes = routes_on(profile)
    if route is not None and route not in routes:
        raise ProfileLacksError(f"device profile {profile.name!r} has no {route.value} route for cm2-gemm: "
                                f"feature {TENSOR_ADDRESSING} is not supported")
    rt = route or (routes[0] if len(routes) == 1 else draw(st.sampled_from(routes)))
    flexible = profile.has_feature("cooperativeMatrixFlexibleDimensions")
    entries = []
    pool = profile.flexible_dimensions if flexible else _fixed_entries(profile) if rt is Route.khr else []
    if pool:
        for e in pool:
            sc = Scope(e["scope"])
            a, c = ComponentType.from_vk(e["AType"]), ComponentType.from_vk(e["CType"])
            if a is None or c is None or e["AType"] != e["BType"] or e["CType"] != e["ResultType"]:
                continue
            if sc is Scope.Workgroup and not profile.has_feature("cooperativeMatrixWorkgroupScope"):
                continue
            if (scope is None or sc is scope) and (float_c is None or c.is_float == float_c):
                entries.append(e)
    if not entries:
        raise ProfileLacksError(f"device profile {profile.name!r} has no {rt.value}-route property entry for this "
                                "GEMM stratum")
    e = draw(st.sampled_from(entries))
    sc = Scope(e["scope"])
    wg = e["workgroupInvocations"] if sc is Scope.Workgroup else profile.subgroup_size
    limit = profile.flexible_max_dimension
    tiles = [g if e.get("fixed") else draw(st.integers(1, max(1, min(2, limit // g)))) * g
             for g in (e["MGranularity"], e["NGranularity"], e["KGranularity"])]
    layouts = tuple(draw(_LAYOUTS) for _ in range(4)) if rt is Route.khr else ()
    v = GemmVariant(ComponentType.from_vk(e["AType"]), ComponentType.from_vk(e["CType"]), sc, wg, *tiles, rt,
                    layouts)
    for mt in v.matrices():
        why = profile.supports_matrix(mt)
        if why:
            raise ValueError(f"flexible-dimensions entry gives an unsupported tile: {why}")
    return v


_LAYOUTS = st.sampled_from(tuple(Layout))
_TILES = st.integers(1, 3)  # M, N and K in tiles
_PADDING = st.integers(0, 2)  # a khr-route stride's padding, in alignment units
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
    strides = draw(_khr_strides_of(variant, mt, nt, kt)) if variant.route is Route.khr else ()
    return GemmCase(variant, mt, nt, kt, ty, tx, alpha, beta, draw(SEEDS), values, strides)


@functools.lru_cache(maxsize=4096)
def _khr_strides_of(v: GemmVariant, mt: int, nt: int, kt: int) -> st.SearchStrategy[tuple[int, ...]]:
    """:func:`khr_strides`, built once per variant and tile counts: a strategy built per case is also
    validated per case."""
    return khr_strides(v, mt, nt, kt)


@st.composite
def khr_strides(draw: st.DrawFn, v: GemmVariant, mt: int, nt: int, kt: int) -> tuple[int, ...]:
    """A, B, C and D's strides: each matrix's line length rounded up to its tile access's
    alignment unit (VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986), plus 0..2 units."""
    out = []
    dims = (mt * v.tile_m, nt * v.tile_n, kt * v.tile_k)
    for layout, (rows, cols), (tr, tc), comp in zip(v.layouts, v.shapes(*dims), v.tile_shapes(), v.components()):
        unit = khr.alignment_unit(layout, tr, tc, comp, khr.Pointee.of(comp))
        line = khr.line_length(layout, rows, cols)
        out.append((-(-line // unit) + draw(_PADDING)) * unit)
    return tuple(out)


@st.composite
def route_twins(draw: st.DrawFn, options: StrategyOptions = StrategyOptions()) -> tuple[GemmCase, GemmCase]:
    """A tensor-route case and the same problem (matrices, tile, alpha, beta, seed) on the khr route, each
    matrix in a drawn MemoryLayout with a drawn stride: the two must give the same D (``d_matrix``). Needs
    a profile with tensor addressing (refused, naming it, without)."""
    tensor = draw(gemm_variants(options, route=Route.tensor).flatmap(lambda v: gemm_cases_for(v, options)))
    v = replace(tensor.shader, route=Route.khr, layouts=tuple(draw(_LAYOUTS) for _ in range(4)))
    return tensor, replace(tensor, shader=v, strides=draw(khr_strides(v, tensor.m_tiles, tensor.n_tiles,
                                                                       tensor.k_tiles)))
