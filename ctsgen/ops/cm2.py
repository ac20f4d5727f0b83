"""What the cooperative-matrix-2 compute families share (cm2-reduce, cm2-convert,
cm2-elementwise, cm2-gemm); each family package stays a slice of its own.

* Matrix types a device supports, enumerated (fixed sizes and flexible
  multiples): these families' result types depend on the source type (a
  reduction's result shape, a transpose's swapped shape), and those dependent
  draws pick from this list, filtered by :meth:`DeviceProfile.supports_matrix`.
* :func:`requirements_for`: the extensions and features a cm2 shader needs.
* Coverage axes from the embedded H100 profile's matrix types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ctsgen.device.profile import DeviceProfile, Requirements, default_profile
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope

#: Flexible dimensions are drawn as granule x 1..MAX_GRANULES per direction.
MAX_GRANULES = 3


def simplicity(mt: MatrixType) -> tuple:
    """Sort key, simplest first: subgroup scope, fewest elements, float16."""
    return (mt.scope is Scope.Workgroup, mt.workgroup_size, mt.rows * mt.cols,
            mt.component.name != "float16", mt.component.name, mt.use.name, mt.rows)


def profile_key(profile: DeviceProfile) -> tuple:
    """What the matrix types of ``profile`` depend on (a cache key): two profiles alike but for their
    subgroup size have different Subgroup-scope types. Computed once per profile object (a case's
    draw asks for it several times; its reprs cost more than the rest of the draw), and again
    whenever the profile's tables changed size or content since."""
    cheap = (id(profile), len(profile.features), len(profile.properties), len(profile.coopmat_khr),
             len(profile.flexible_dimensions))
    known = _KEYS.get(cheap)
    if known is not None and known[0] is profile and known[1] == _contents(profile):
        return known[2]
    key = (profile.name, repr(sorted(profile.features.items())), repr(profile.coopmat_khr),
           repr(profile.flexible_dimensions), profile.flexible_max_dimension, profile.subgroup_size,
           repr(sorted(profile.properties.items())))
    if len(_KEYS) >= 64:
        _KEYS.clear()
    _KEYS[cheap] = (profile, _contents(profile), key)  # the profile held: its id is not reused meanwhile
    return key


def _contents(profile: DeviceProfile) -> tuple:
    """The profile's tables as they are now, compared by value (dict and list equality, no repr)."""
    return (profile.name, dict(profile.features), dict(profile.properties), list(profile.coopmat_khr),
            list(profile.flexible_dimensions))


_KEYS: dict[tuple, tuple[DeviceProfile, tuple, tuple]] = {}


_CACHE: dict[tuple, list[MatrixType]] = {}


def supported_matrices(profile: DeviceProfile, max_granules: int = MAX_GRANULES) -> list[MatrixType]:
    """Every fixed-size type (VK_KHR_cooperative_matrix) and every flexible-dimension
    granule scaled by 1..``max_granules`` in each direction, up to
    cooperativeMatrixFlexibleDimensionsMaxDimension, simplest first."""
    key = (profile_key(profile), max_granules)
    if key not in _CACHE:
        out: dict[MatrixType, None] = dict.fromkeys(profile.matrix_types())
        limit = profile.flexible_max_dimension
        for g in profile.flexible_granules():
            for kr in range(1, max_granules + 1):
                for kc in range(1, max_granules + 1):
                    if g.rows * kr <= limit and g.cols * kc <= limit:
                        out[replace(g, rows=g.rows * kr, cols=g.cols * kc)] = None
        _CACHE[key] = sorted(out, key=simplicity)
    return _CACHE[key]


def same_kind(profile: DeviceProfile, like: MatrixType, *, use: MatrixUse | None = None,
              component: ComponentType | None = None) -> list[MatrixType]:
    """Supported types with ``like``'s scope and workgroup size (and optionally a given
    use / component type), any shape, simplest first (each selection computed once per profile)."""
    key = (profile_key(profile), like.scope, like.workgroup_size, use, component)
    if key not in _SAME_KIND:
        _SAME_KIND[key] = tuple(m for m in supported_matrices(profile)
                                if m.scope is like.scope and m.workgroup_size == like.workgroup_size
                                and (use is None or m.use is use) and (component is None or m.component is component))
    return list(_SAME_KIND[key])


_SAME_KIND: dict[tuple, tuple[MatrixType, ...]] = {}


#: The feature every cooperative-matrix shader needs: its OpTypeCooperativeMatrixKHR declares the
#: CooperativeMatrixKHR capability, which VK_KHR_cooperative_matrix's cooperativeMatrix enables
#: (lavapipe sets the cm2 feature bits without it on a CPU narrower than 256 bits).
COOPERATIVE_MATRIX = "cooperativeMatrix"


def cm2_needs(*features: str, extensions: Sequence[str] = ()) -> Requirements:
    """What every case of a cm2 family needs (``FamilySpec.needs``): VK_NV_cooperative_matrix2, the
    cooperativeMatrix feature, and the cm2 feature bits (``features``) without which the family has
    no case at all; a feature only some of its variants need gates those variants in its strategy."""
    return Requirements(extensions=("VK_NV_cooperative_matrix2", *extensions),
                        features=(COOPERATIVE_MATRIX, *features))


def requirements_for(features: Sequence[str], matrices: Sequence[MatrixType]) -> Requirements:
    """The extensions and features a cm2 shader with these matrices needs (a size the
    device does not list needs cooperativeMatrixFlexibleDimensions: the profile's
    supports_matrix checks that per matrix)."""
    feats = [COOPERATIVE_MATRIX, *features]
    if any(m.scope is Scope.Workgroup for m in matrices):
        feats.append("cooperativeMatrixWorkgroupScope")
    exts = ["VK_NV_cooperative_matrix2"]
    if any(m.component is ComponentType.bfloat16 for m in matrices):
        exts.append("VK_KHR_shader_bfloat16")
    return Requirements(extensions=tuple(exts), features=tuple(dict.fromkeys(feats)),
                        matrices=tuple(dict.fromkeys(matrices)))


def profile_components(use: MatrixUse | None = None) -> list[str]:
    """Component types of the H100 profile's matrix types (of Use ``use``), in ComponentType order."""
    have = {m.component for m in supported_matrices(default_profile()) if use is None or m.use is use}
    return [c.name for c in ComponentType if c in have]


def scope_label(matrix: dict[str, Any]) -> str:
    """'Subgroup' or 'Workgroup N' (N invocations) of a matrix type's JSON."""
    return matrix["scope"] if matrix["scope"] == Scope.Subgroup.name else f"Workgroup {matrix['workgroupSize']}"


def profile_scopes() -> list[str]:
    """The scopes (and workgroup sizes) of the H100 profile's matrix types, subgroup first."""
    have = {(m.scope is Scope.Workgroup, m.workgroup_size) for m in supported_matrices(default_profile())}
    return [scope_label({"scope": (Scope.Workgroup if wg else Scope.Subgroup).name, "workgroupSize": n})
            for wg, n in sorted(have)]
