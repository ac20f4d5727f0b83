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
from ctsgen.toolchain.routes import RouteRefusedError

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


#: ctsgen's most subgroups per workgroup for Subgroup-scope cases (each its own tile of data): enough
#: for subgroups to meet in one workgroup, few enough to keep a case's buffers small.
MAX_SUBGROUPS = 4


def most_subgroups(profile: DeviceProfile, mt: MatrixType) -> int:
    """How many subgroups a workgroup running ``mt`` may have: 1 at Workgroup scope (the entry's
    workgroupInvocations fixes the workgroup), else up to MAX_SUBGROUPS within
    maxComputeWorkGroupInvocations (docs/spec-decisions.md "subgroup-scope-workgroups")."""
    if mt.scope is Scope.Workgroup:
        return 1
    return max(1, min(MAX_SUBGROUPS, profile.subgroup_workgroup_limit() // mt.workgroup_size))


def in_subgroups(mt: MatrixType, subgroups: int) -> MatrixType:
    """``mt`` (one subgroup's type, as :func:`supported_matrices` lists it) run by a workgroup of
    ``subgroups`` subgroups: its workgroup size scaled; a Workgroup-scope type is left as it is."""
    if mt.scope is Scope.Workgroup or subgroups == 1:
        return mt
    return replace(mt, workgroup_size=mt.workgroup_size * subgroups)


def check_subgroups(subgroups: int, mt: MatrixType) -> str | None:
    """None if a variant of ``mt`` may have ``subgroups`` tiles (one per subgroup), else why not."""
    if subgroups < 1:
        return f"subgroups is {subgroups} -> a workgroup has at least one subgroup"
    if subgroups > 1 and mt.scope is Scope.Workgroup:
        return "a Workgroup-scope matrix is one per workgroup -> subgroups 1"
    if mt.workgroup_size % subgroups:
        return f"a workgroup of {mt.workgroup_size} invocations is not {subgroups} equal subgroups"
    return None


#: The alignment this Slang build gives every ``CoopMat.Load``/``Store`` of a buffer (``Aligned 16``;
#: docs/spec-decisions.md "compiler-routes").
SLANG_ALIGN_BYTES = 16


def check_slang_tiles(subgroups: int, *matrices: MatrixType) -> None:
    """Refuse in one line (:class:`RouteRefusedError`) a Slang source whose tile loads or stores would
    break Slang's ``Aligned 16``: tile i of a buffer starts i tiles after the case's data (which the
    batch starts on a 16-byte boundary), so with several subgroups a tile's bytes must be a multiple
    of 16."""
    for m in matrices:
        size = m.elements * m.component.size
        if subgroups > 1 and size % SLANG_ALIGN_BYTES:
            raise RouteRefusedError(f"Slang marks every cooperative matrix load and store Aligned "
                                    f"{SLANG_ALIGN_BYTES}, and a {m.label} tile of {size} bytes puts the "
                                    f"second subgroup's off that boundary -> use another --route for this "
                                    "variant")


def subgroups_label(subgroups: int) -> str:
    """The part of a variant id naming its subgroups per workgroup ('' for one: the ids of before)."""
    return "" if subgroups == 1 else f".subgroups{subgroups}"


def subgroups_json(subgroups: int) -> dict[str, int]:
    """A variant's ``subgroups`` in its JSON, left out for one (so earlier packs and names stay)."""
    return {} if subgroups == 1 else {"subgroups": subgroups}


def tiles_extensions(subgroups: int) -> list[str]:
    """The GLSL extensions the tile loop of several subgroups needs (gl_SubgroupID, gl_NumSubgroups:
    templates/common.glsl.j2 ``tiles_begin``)."""
    return ["GL_KHR_shader_subgroup_basic"] if subgroups > 1 else []


def subgroups_from_json(o: dict[str, Any]) -> int:
    """A variant's ``subgroups`` from its JSON (1 where absent), a whole number (not a string or a bool)."""
    n = o.get("subgroups", 1)
    if type(n) is not int:
        raise ValueError(f"subgroups is {n!r} -> a whole number of subgroups per workgroup, 1 or more")
    return n
