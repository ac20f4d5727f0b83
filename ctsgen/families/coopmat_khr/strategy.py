"""Strategies for coopmat-khr: an operation on matrix types of the device's KHR property list, KHR accesses.

Valid by construction for the profile: matrix types are the fixed sizes VK_KHR_cooperative_matrix
lists (``DeviceProfile.matrix_types``: Subgroup scope, a workgroup of one subgroup); a MulAdd is one
VkCooperativeMatrixPropertiesKHR entry, with SaturatingAccumulation exactly where the entry's
saturatingAccumulation says (the operand must match it); a conversion goes between two listed types of
one shape, Use and scope; arithmetic is on every listed type but bfloat16 (GLSL has none). Accesses come
from ctsgen.strategies.khr (any load stride >= 0, disjoint store lines, the alignment VUID). Shrinks
toward ``copy`` of the simplest type, RowMajor, packed strides, offset 0, no edges, seed 0.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import DeviceProfile, ProfileLacksError, default_profile
from ctsgen.families.coopmat_khr.case import KhrCase, KhrVariant
from ctsgen.families.coopmat_khr.operation import BINARY, Op
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2 import profile_key, simplicity
from ctsgen.ops.elementwise_operands import NARROW
from ctsgen.ops.khr_addressing import KhrAccess, Layout
from ctsgen.oracle.numeric import float_format, unit_roundoff
from ctsgen.strategies.cached import SEEDS, integers, sampled
from ctsgen.strategies.khr import khr_accesses, pointee_choices

#: (operands, result, saturating) of one variant signature before its accesses are drawn
Signature = tuple[tuple[MatrixType, ...], MatrixType, bool]
LAYOUTS = (Layout.RowMajor, Layout.ColumnMajor)
#: whether a case's operands start with the instruction's edge values (built once: drawn per case)
EDGES = st.booleans()


#: MulAdd strata: one per entry of the device's KHR property list, up to this many.
MAX_KHR_ENTRIES = 32


def strata() -> list[dict[str, object]]:
    """Every operation x result component type, and every entry of the KHR property list as a MulAdd
    (a profile lists fewer: the rest are left out, as are the types it lacks)."""
    return ([{"op": op, "component": c} for op in Op if op is not Op.muladd for c in ComponentType]
            + [{"op": Op.muladd, "entry": i} for i in range(MAX_KHR_ENTRIES)])


def khr_entries(profile: DeviceProfile) -> list[Signature]:
    """Every Subgroup-scope VkCooperativeMatrixPropertiesKHR entry of component types ctsgen models, as
    MulAdd operands (A, B, C) and result; C and Result of one type (GLSL's coopMatMulAdd returns C's);
    a float Result whose any-order sum bound does not exist (K u >= 1: bfloat16 at K = 256) is left
    out (docs/spec-decisions.md "khr-muladd")."""
    if not profile.has_feature("cooperativeMatrix"):
        return []
    out: dict[Signature, None] = {}
    for e in profile.coopmat_khr:
        types = [ComponentType.from_vk(e[k]) for k in ("AType", "BType", "CType", "ResultType")]
        if e["scope"] != Scope.Subgroup.value or None in types or types[2] is not types[3]:
            continue
        if types[3].is_float and e["KSize"] * unit_roundoff(types[3]) >= 1:
            continue
        a, b, c, _ = types
        wg = profile.subgroup_size
        ma = MatrixType(a, Scope.Subgroup, e["MSize"], e["KSize"], MatrixUse.A, wg)
        mb = MatrixType(b, Scope.Subgroup, e["KSize"], e["NSize"], MatrixUse.B, wg)
        mc = MatrixType(c, Scope.Subgroup, e["MSize"], e["NSize"], MatrixUse.Accumulator, wg)
        out[((ma, mb, mc), mc, bool(e["saturatingAccumulation"]))] = None
    return list(out)


_CACHE: dict[tuple, dict[Op, list[Signature]]] = {}


def signatures(profile: DeviceProfile) -> dict[Op, list[Signature]]:
    """Each operation's signatures on ``profile``, simplest first."""
    key = profile_key(profile)
    if key not in _CACHE:
        types = sorted(profile.matrix_types(), key=simplicity)
        arith = [t for t in types if t.component is not ComponentType.bfloat16]
        out: dict[Op, list[Signature]] = {Op.copy: [((t,), t, False) for t in types]}
        for op in (Op.negate, Op.scale):
            out[op] = [((t,), t, False) for t in arith]
        for op in BINARY:
            out[op] = [((t, t), t, False) for t in arith]
        out[Op.convert] = [((s,), r, False) for s in types for r in types
                           if s.component is not r.component
                           and (s.rows, s.cols, s.use, s.scope, s.workgroup_size)
                           == (r.rows, r.cols, r.use, r.scope, r.workgroup_size)]
        out[Op.muladd] = sorted(khr_entries(profile), key=lambda s: (s[2], [simplicity(m) for m in s[0]]))
        _CACHE[key] = out
    return _CACHE[key]


def pinned(profile: DeviceProfile, op: Op, component: ComponentType | None, entry: int | None) -> list[Signature]:
    """``op``'s signatures on ``profile`` with the result ``component`` and, for a MulAdd, only the
    ``entry``-th of :func:`khr_entries`; raises ProfileLacksError naming what is missing."""
    if entry is not None:
        entries = khr_entries(profile)
        if op is not Op.muladd or entry >= len(entries):
            raise ProfileLacksError(f"device profile {profile.name!r} lists {len(entries)} KHR MulAdd entries "
                                    f"ctsgen models, not an entry {entry}")
        return [entries[entry]]
    sigs = [s for s in signatures(profile)[op] if component is None or s[1].component is component]
    if not sigs:
        raise ProfileLacksError(f"device profile {profile.name!r} has no matrix type for coopmat-khr {op.value}"
                                + ("" if component is None else f" with a {component.name} result"))
    return sigs


@st.composite
def khr_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *, op: Op | None = None,
                 component: ComponentType | None = None, entry: int | None = None) -> KhrVariant:
    profile = options.profile or default_profile()
    if op is None:
        have = [o for o in Op if signatures(profile)[o]]
        if not have:
            raise ProfileLacksError(f"device profile {profile.name!r} lists no VK_KHR_cooperative_matrix type "
                                    "ctsgen models (or lacks the cooperativeMatrix feature)")
        op = draw(sampled(tuple(have)))
    operands, result, saturating = draw(sampled(tuple(pinned(profile, op, component, entry))))
    mats = (*operands, result)
    layouts = tuple(draw(sampled(LAYOUTS)) for _ in mats)
    pointees = tuple(draw(sampled(pointee_choices(m.component))) for m in mats)
    return KhrVariant(op, tuple(operands), result, layouts, pointees, saturating)


@functools.lru_cache(maxsize=None)  # one entry per float ComponentType member
def float_scalars(component: ComponentType) -> st.SearchStrategy[float]:
    """Normal values of ``component`` with exponents in the element-wise operands' narrow range, so
    OpMatrixTimesScalar's products stay normal and exact in float64; shrinks to 1.0."""
    mant, _, _ = float_format(component)
    return st.builds(lambda neg, e, m: (-1.0 if neg else 1.0) * (1 + m / 2**mant) * 2.0**e,
                     st.booleans(), integers(*NARROW), integers(0, 2**mant - 1))


def khr_cases_for(variant: KhrVariant, options: StrategyOptions = StrategyOptions()) -> st.SearchStrategy[KhrCase]:
    """A case of ``variant``: each access's stride and offset, the scalar, a data seed and the edges
    flag; the variant fixes everything that bounds them, so ``options`` narrows nothing here."""
    return _cases_of(variant)


@functools.lru_cache(maxsize=4096)
def _cases_of(variant: KhrVariant) -> st.SearchStrategy[KhrCase]:
    """:func:`_khr_cases` built once per variant: a fuzz round draws many cases of one variant, and
    Hypothesis validates a new strategy object on its first draw."""
    return _khr_cases(variant, _access_strategies(variant))


def _access_strategies(variant: KhrVariant) -> tuple[st.SearchStrategy[KhrAccess], ...]:
    """Each binding's access of ``variant`` (the loads', then the store's) with its fixed layout and pointee."""
    last = len(variant.matrices) - 1
    return tuple(khr_accesses(m.rows, m.cols, m.component, is_store=k == last, layouts=(variant.layouts[k],),
                              pointees=(variant.pointees[k],))
                 for k, m in enumerate(variant.matrices))


@st.composite
def _khr_cases(draw: st.DrawFn, variant: KhrVariant, accesses: tuple[st.SearchStrategy[KhrAccess], ...]) -> KhrCase:
    drawn = [draw(a) for a in accesses]
    res = variant.result.component
    s: float | int = 1
    if variant.op is Op.scale:
        if res.is_float:
            s = draw(float_scalars(res))
        else:
            info = np.iinfo(res.dtype)
            s = draw(integers(int(info.min), int(info.max)))
    return KhrCase(variant, tuple(a.stride for a in drawn), tuple(a.offset for a in drawn), s,
                   draw(SEEDS), draw(EDGES))
