"""Strategies for coopvec-elementwise cases, valid by construction and restricted to a device profile.

:func:`elementwise_variants` draws an operation (a group of ops.GROUPS
first, so memory, conversion, float, transcendental, integer and bit
operations are drawn equally often), component types the profile reports
for cooperative vectors (VUID-RuntimeSpirv-OpTypeCooperativeVector-10095),
N up to maxCooperativeVectorComponents (VUID-RuntimeSpirv-
maxCooperativeVectorComponents-10094), and ``ieee`` for float ops that
define special values, unless the profile states the float-controls
properties as unsupported (a profile that does not list them, like the
embedded H100 read-out, leaves it to the run-time requirement check).
:func:`elementwise_cases` draws loadOffset / storeOffset (multiples of 16
bytes up to 112), the scalar of OpVectorTimesScalar (values whose products
with the data stay exact in float64 and in range; specials in ieee
variants), the seed and the edges flag. Shrinks toward load/store of one
fp16 component, zero offsets, scalar 1.0, no edges.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

from ctsgen.device.profile import DeviceProfile, default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.families.coopvec_elementwise.case import (
    ElementwiseCase,
    ElementwiseVariant,
    float_controls,
)
from ctsgen.families.coopvec_elementwise.ops import (
    ELEMENT_TYPES,
    GROUPS,
    OPS,
    Op,
    conversions,
)
from ctsgen.families.coopvec_elementwise.oracle import component
from ctsgen.model.types import CoopVecType, coopvec_component_type_feature
from ctsgen.oracle.values import to_bits
from ctsgen.strategies.cached import SEEDS
from ctsgen.strategies.counts import component_counts

SIZES = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 64, 65, 100, 127, 128)
LARGE_SIZES = (255, 256, 511, 512)
MAX_OFFSET_UNITS = 7  # offsets 0, 16, ..., 112 bytes
#: OpVectorTimesScalar scalars: simple values first (shrinking), then any value of magnitude
#: [2^-6, 2^6] (the data's products stay exact in float64, normal and finite)
SIMPLE_SCALARS = (1.0, 2.0, -1.0, 0.5, 0.0, -3.0)
IEEE_SCALARS = (float("inf"), float("-inf"), float("nan"), -0.0)
#: a scalar whose product with the data's largest magnitudes overflows (fp16: 64 * 2^12 > 65504)
OVERFLOW_SCALAR = {CoopVecType.float16: 2.0**12, CoopVecType.float32: 2.0**124}


def strata() -> list[dict[str, object]]:
    """Every operation x component type (every source x result type pair for conversions),
    and every ieee-capable float operation x float type once more with ieee."""
    cells: list[dict[str, object]] = []
    for op, info in OPS.items():
        if op is Op.convert:
            cells += [{"op": op, "componentType": s, "resultType": d} for s, d in conversions()]
            continue
        cells += [{"op": op, "componentType": t, "ieee": False} for t in info.types]
        if info.ieee:
            cells += [{"op": op, "componentType": t, "ieee": True} for t in info.types if t.is_float]
    return cells


def reported_types(profile: DeviceProfile) -> list[CoopVecType]:
    """The element types a cooperative vector may have on ``profile``."""
    return [t for t in ELEMENT_TYPES if profile.has_feature(coopvec_component_type_feature(t.vk))]


def ieee_possible(profile: DeviceProfile, t: CoopVecType) -> bool:
    """False only when the profile lists a float-controls property ieee needs as 0."""
    return not any(name in profile.features and not profile.features[name] for name in float_controls(t))


@st.composite
def elementwise_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *, op: Op | None = None,
                         componentType: CoopVecType | None = None, resultType: CoopVecType | None = None,
                         ieee: bool | None = None) -> ElementwiseVariant:
    """Draw a signature valid on the options' profile; keywords pin a part of it."""
    prof = options.profile or default_profile()
    limit = prof.properties.get("maxCooperativeVectorComponents", 0)
    types = reported_types(prof)
    if limit <= 0 or not prof.has_feature("cooperativeVector") or not types:
        raise ProfileLacksError(f"profile {prof.name!r} has no cooperative vector support (cooperativeVector, "
                         "maxCooperativeVectorComponents, reported component types): pick a profile that "
                         "advertises VK_NV_cooperative_vector")
    if op is None:
        group = draw(st.sampled_from(list(GROUPS)))
        op = draw(st.sampled_from(GROUPS[group]))
    ts = [t for t in OPS[op].types if t in types]
    t = draw(st.sampled_from(ts)) if componentType is None else componentType
    if t not in types:
        raise ProfileLacksError(f"profile {prof.name!r} reports no cooperative-vector type {t.name}; "
                         f"pick one of {', '.join(x.name for x in types)}")
    if op is Op.convert:
        r = draw(st.sampled_from([d for d in types if d is not t])) if resultType is None else resultType
    else:
        r = t
    if ieee is None:
        ieee = OPS[op].ieee and t.is_float and ieee_possible(prof, t) and draw(st.booleans())
    return ElementwiseVariant(op, t, r, draw(component_counts(SIZES, LARGE_SIZES, limit)), ieee)


def scalars(v: ElementwiseVariant) -> st.SearchStrategy[float]:
    """OpVectorTimesScalar scalars for ``v`` (see the module docstring)."""
    return _scalars(v.componentType, v.ieee)


@functools.lru_cache(maxsize=None)
def _scalars(componentType: CoopVecType, ieee: bool) -> st.SearchStrategy[float]:
    """:func:`scalars`, built once per component type (and IEEE or not)."""
    width = componentType.bits
    any_value = st.tuples(st.floats(2.0**-6, 64.0, width=width, allow_subnormal=False), st.booleans()).map(
        lambda p: -p[0] if p[1] else p[0])
    out = st.sampled_from(SIMPLE_SCALARS) | any_value
    if ieee:
        out = out | st.sampled_from(IEEE_SCALARS + (OVERFLOW_SCALAR[componentType],))
    return out


_OFFSET_UNITS = st.integers(0, MAX_OFFSET_UNITS)
_BOOLEANS = st.booleans()


@st.composite
def elementwise_cases(draw: st.DrawFn, v: ElementwiseVariant, options: StrategyOptions = StrategyOptions()
                      ) -> ElementwiseCase:
    """Draw valid run-time operands for ``v`` (see the module docstring)."""
    load = 16 * draw(_OFFSET_UNITS)
    store = 16 * draw(_OFFSET_UNITS)
    bits = 0
    if v.op is Op.vts:
        s = draw(scalars(v))
        bits = int(to_bits(np.asarray([s], dtype=v.componentType.dtype), component(v.componentType))[0])
    return ElementwiseCase(v, load, store, bits, draw(SEEDS), draw(_BOOLEANS))
