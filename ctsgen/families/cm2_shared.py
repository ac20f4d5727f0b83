"""Matrix types a device supports, enumerated (fixed sizes and flexible multiples).

Shared by the cooperative-matrix-2 compute families (cm2-reduce, cm2-convert,
cm2-elementwise, cm2-gemm), whose result types depend on the source type
(a reduction's result shape, a transpose's swapped shape): those dependent
draws pick from this list, filtered by :meth:`DeviceProfile.supports_matrix`.
"""

from __future__ import annotations

from dataclasses import replace

from ctsgen.device.profile import DeviceProfile
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope

#: Flexible dimensions are drawn as granule x 1..MAX_GRANULES per direction.
MAX_GRANULES = 3


def simplicity(mt: MatrixType) -> tuple:
    """Sort key, simplest first: subgroup scope, fewest elements, float16."""
    return (mt.scope is Scope.Workgroup, mt.workgroup_size, mt.rows * mt.cols,
            mt.component.name != "float16", mt.component.name, mt.use.name, mt.rows)


def profile_key(profile: DeviceProfile) -> tuple:
    return (profile.name, repr(sorted(profile.features.items())), repr(profile.coopmat_khr),
            repr(profile.flexible_dimensions), profile.flexible_max_dimension)


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
    use / component type), any shape, simplest first."""
    return [m for m in supported_matrices(profile)
            if m.scope is like.scope and m.workgroup_size == like.workgroup_size
            and (use is None or m.use is use) and (component is None or m.component is component)]


def with_shape(profile: DeviceProfile, like: MatrixType, rows: int, cols: int, **kw: object) -> MatrixType | None:
    """``like`` reshaped (and re-typed by ``kw``: use, component), if the device supports it."""
    mt = replace(like, rows=rows, cols=cols, **kw)
    return mt if profile.supports_matrix(mt) is None else None

