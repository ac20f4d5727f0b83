"""What a device profile's values may be: every field a read-out gives is checked before
strategies draw from it, so a hand-edited or truncated profile is refused with one line
naming the field and what is allowed (docs/profile-format.md), never drawn from.

The bounds are Vulkan's types (``uint32_t`` members, ``VkBool32`` features,
``VkComponentTypeKHR`` and ``VkScopeKHR`` values) and, where Vulkan allows more than
ctsgen can build a case for, ctsgen's own limits, named as such.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctsgen.errors import CtsgenError

UINT32_MAX = 2**32 - 1

#: Every VkComponentTypeKHR value (VK_KHR_cooperative_matrix, VK_KHR_shader_bfloat16,
#: VK_NV_cooperative_vector / VK_EXT_shader_float8); a profile may list types ctsgen does
#: not model (they are kept and never drawn), but not values Vulkan does not define.
COMPONENT_TYPES = {0: "f16", 1: "f32", 2: "f64", 3: "s8", 4: "s16", 5: "s32", 6: "s64", 7: "u8", 8: "u16",
                   9: "u32", 10: "u64", 1000141000: "bf16", 1000491000: "s8 packed", 1000491001: "u8 packed",
                   1000491002: "e4m3", 1000491003: "e5m2"}
#: VkScopeKHR values a cooperative-matrix property entry may name.
SCOPES = {2: "workgroup", 3: "subgroup"}
#: ctsgen's largest matrix side per granule or fixed size: it draws up to three granules per
#: side (ctsgen.ops.cm2.MAX_GRANULES), and a case's buffers must stay a few MiB.
MAX_SIDE = 256
#: The largest subgroup Vulkan allows (VkPhysicalDeviceSubgroupSizeControlProperties: a power of two <= 128).
MAX_SUBGROUP = 128

#: The members of each list entry, in the order a read-out writes them.
ENTRY_FIELDS = {
    "coopmat khr": ("MSize", "NSize", "KSize", "AType", "BType", "CType", "ResultType", "saturatingAccumulation",
                    "scope"),
    "flexible dims": ("MGranularity", "NGranularity", "KGranularity", "AType", "BType", "CType", "ResultType",
                      "saturatingAccumulation", "scope", "workgroupInvocations"),
    "coopvec combos": ("inputType", "inputInterpretation", "matrixInterpretation", "biasInterpretation",
                       "resultType", "transpose"),
}
_TYPE_FIELDS = {"AType", "BType", "CType", "ResultType", "inputType", "inputInterpretation", "matrixInterpretation",
                "biasInterpretation", "resultType"}
_BOOL_FIELDS = {"saturatingAccumulation", "transpose"}
_SIZE_FIELDS = {"MSize", "NSize", "KSize", "MGranularity", "NGranularity", "KGranularity"}


class ProfileFormatError(CtsgenError, ValueError):
    """A device-profile file does not follow the read-out format, or holds a value no device gives."""


def _uint32(value: object) -> bool:
    return type(value) is int and 0 <= value <= UINT32_MAX


def check_features(features: Mapping[str, object], source: str) -> None:
    """Every feature is a VkBool32: 0 or 1."""
    for name, value in features.items():
        if value not in (0, 1) or type(value) is not int:
            raise ProfileFormatError(f"{source}: feature {name} is {value!r} -> a feature is 0 or 1 (VkBool32)")


def check_properties(properties: Mapping[str, object], source: str) -> None:
    """Every property is a uint32_t; the subgroup size a power of two <= 128; the flexible
    maximum at least ctsgen's largest side or 0 (no flexible dimensions)."""
    for name, value in properties.items():
        if not _uint32(value):
            raise ProfileFormatError(f"{source}: property {name} is {value!r} -> a property is a whole number in "
                                     f"[0, {UINT32_MAX}] (uint32_t)")
    sg = properties.get("subgroupSize")
    if sg is not None and not (1 <= sg <= MAX_SUBGROUP and sg & (sg - 1) == 0):  # type: ignore[operator]
        raise ProfileFormatError(f"{source}: subgroupSize is {sg} -> a subgroup size is a power of two in "
                                 f"[1, {MAX_SUBGROUP}]")


def check_entry(head: str, entry: Mapping[str, object], properties: Mapping[str, object], source: str) -> None:
    """One entry of a list section: its members all there, each a value its type allows."""
    fields = ENTRY_FIELDS[head]
    missing = [f for f in fields if f not in entry]
    if missing:
        raise ProfileFormatError(f"{source}: '{head}' entry {dict(entry)} lacks {', '.join(missing)} -> an entry "
                                 f"has {', '.join(fields)}")

    def bad(key: str, allowed: str) -> ProfileFormatError:
        return ProfileFormatError(f"{source}: '{head}' entry {dict(entry)} has {key} {entry[key]!r} -> {allowed}")

    for key in fields:
        value = entry[key]
        if key in _TYPE_FIELDS and value not in COMPONENT_TYPES:
            known = ", ".join(f"{v} {n}" for v, n in COMPONENT_TYPES.items())
            raise bad(key, f"a component type is a VkComponentTypeKHR value: {known}")
        if key in _BOOL_FIELDS and value not in (0, 1):
            raise bad(key, "it is 0 or 1 (VkBool32)")
        if key == "scope" and value not in SCOPES:
            raise bad(key, f"a scope is {' or '.join(f'{v} ({n})' for v, n in SCOPES.items())} (VkScopeKHR)")
        if key in _SIZE_FIELDS:
            if type(value) is not int or not 1 <= value <= MAX_SIDE:
                raise bad(key, f"a size or granularity is a whole number in [1, {MAX_SIDE}] (ctsgen's largest "
                               "side per granule)")
            limit = properties.get("cooperativeMatrixFlexibleDimensionsMaxDimension")
            if key.endswith("Granularity") and isinstance(limit, int) and value > limit > 0:
                raise bad(key, f"a granularity is at most cooperativeMatrixFlexibleDimensionsMaxDimension ({limit})")
    wg = entry.get("workgroupInvocations")
    if wg is not None and not _uint32(wg):
        raise bad("workgroupInvocations", f"a workgroup size is a whole number in [0, {UINT32_MAX}] (uint32_t)")
    if head == "flexible dims" and entry["scope"] == 2:
        most = properties.get("cooperativeMatrixWorkgroupScopeMaxWorkgroupSize") \
            or properties.get("maxComputeWorkGroupInvocations") or 1024
        if not 1 <= wg <= most:  # type: ignore[operator]
            raise bad("workgroupInvocations", f"a workgroup-scope entry's workgroup size is in [1, {most}] "
                                              "(cooperativeMatrixWorkgroupScopeMaxWorkgroupSize)")
