"""Strategies for cooperative matrix types a device advertises."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, ProfileLacksError
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2 import profile_key


def _simplicity(mt: MatrixType) -> tuple:
    """Sort key: subgroup before workgroup, small before large, f16 first."""
    return (mt.scope is Scope.Workgroup, mt.workgroup_size, mt.rows * mt.cols,
            mt.component.name != "float16", mt.component.name, mt.use.name)


def matrix_types(profile: DeviceProfile, *, max_granules: int = 3,
                 flexible: bool = True, workgroup: bool = True,
                 components: Collection[ComponentType] | None = None,
                 uses: Collection[MatrixUse] | None = None) -> st.SearchStrategy[MatrixType]:
    """Draw a matrix type the device supports.

    Fixed sizes come from VK_KHR_cooperative_matrix's property list; with
    ``flexible`` (and the device's cooperativeMatrixFlexibleDimensions) the
    draw also scales a flexible-dimension granule by 1..``max_granules`` in
    each direction (never above cooperativeMatrixFlexibleDimensionsMaxDimension);
    ``workgroup`` admits workgroup-scope granules; ``components`` and ``uses``, where
    given, keep only types (and granules) of those component types and uses, before
    drawing (valid by construction, no filter). Shrinks toward the
    simplest fixed type: subgroup scope, fewest
    elements, float16 (an 8x8 float16 B matrix on the H100).
    """
    key = (profile_key(profile), max_granules, flexible, workgroup,
           None if components is None else frozenset(components), None if uses is None else frozenset(uses))
    if key not in _BUILT:  # built once per profile and arguments: a variant's draw asks for it each time
        _BUILT[key] = _matrix_types(profile, max_granules, flexible, workgroup, components, uses)
    return _BUILT[key]


_BUILT: dict[tuple, st.SearchStrategy[MatrixType]] = {}


def _matrix_types(profile: DeviceProfile, max_granules: int, flexible: bool, workgroup: bool,
                  components: Collection[ComponentType] | None, uses: Collection[MatrixUse] | None
                  ) -> st.SearchStrategy[MatrixType]:
    def kept(mt: MatrixType) -> bool:
        return (components is None or mt.component in components) and (uses is None or mt.use in uses)

    fixed = sorted(filter(kept, profile.matrix_types()), key=_simplicity)
    granules = sorted((g for g in profile.flexible_granules()
                       if (workgroup or g.scope is Scope.Subgroup) and kept(g)), key=_simplicity) if flexible else []
    if not fixed and not granules:
        raise ProfileLacksError(f"device profile {profile.name!r} lists no cooperative matrix types"
                         + ("" if components is None and uses is None else " of the components and uses asked for"))
    choices = [st.sampled_from(fixed)] if fixed else []
    if granules:
        choices.append(_scaled(tuple(granules), profile.flexible_max_dimension, max_granules))
    return st.one_of(choices)


@st.composite
def _scaled(draw: st.DrawFn, granules: tuple[MatrixType, ...], limit: int, max_granules: int) -> MatrixType:
    """A flexible-dimension granule scaled by 1..``max_granules`` each way, within ``limit``
    (module level: ``@st.composite`` on a function defined per call reads its source each time)."""
    g = draw(st.sampled_from(granules))
    kr = draw(st.integers(1, max(1, min(max_granules, limit // g.rows))))
    kc = draw(st.integers(1, max(1, min(max_granules, limit // g.cols))))
    return replace(g, rows=g.rows * kr, cols=g.cols * kc)
