"""Writing a device profile in the read-out format (docs/profile-format.md), the text
:func:`ctsgen.device.profile.parse_profile` reads back: ``ctsgen profile`` writes a live
device's this way, so a user with another GPU can capture theirs and generate packs for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ctsgen.device.checks import COMPONENT_TYPES, ENTRY_FIELDS, SCOPES
from ctsgen.device.profile import DeviceProfile

#: Members of VkPhysicalDeviceCooperativeMatrixFeaturesKHR / PropertiesKHR (the rest of the
#: ``cooperativeMatrix*`` names are VK_NV_cooperative_matrix2's).
_KHR_FEATURES = ("cooperativeMatrix", "cooperativeMatrixRobustBufferAccess")
_KHR_PROPERTIES = ("cooperativeMatrixSupportedStages",)
_LIST_ATTRS = {"coopvec combos": "coopvec_combinations", "flexible dims": "flexible_dimensions",
               "coopmat khr": "coopmat_khr"}


def _section(name: str) -> str:
    """The dict section a feature or property name belongs to (``<kind> feats`` / ``<kind> props``)."""
    if name in _KHR_FEATURES or name in _KHR_PROPERTIES:
        return "coopmat khr"
    if name.startswith("cooperativeMatrix"):
        return "cm2"
    if "ooperativeVector" in name:
        return "coopvec"
    return "core"


def _dicts(values: Mapping[str, int], suffix: str) -> list[str]:
    """One ``<kind> <suffix> {...}`` line per section that has members, core first."""
    by: dict[str, dict[str, int]] = {k: {} for k in ("core", "coopmat khr", "cm2", "coopvec")}
    for name, value in values.items():
        by[_section(name)][name] = int(value)
    return [f"{kind} {suffix} {members!r}" for kind, members in by.items() if members]


def format_profile(profile: DeviceProfile, provenance: Iterable[str]) -> str:
    """``profile`` as read-out text; ``provenance`` lines (how and when it was read) open it as comments."""
    enums = "; ".join((
        "VkComponentTypeKHR (" + ", ".join(f"{v} {n}" for v, n in COMPONENT_TYPES.items()) + ")",
        "VkScopeKHR (" + ", ".join(f"{v} {n}" for v, n in SCOPES.items()) + ")"))
    lines = [f"# {p}" for p in provenance] + [f"# Enum values: {enums}.",
                                              f"device {profile.name}",
                                              "extensions " + " ".join(sorted(profile.extensions))]
    lines += _dicts(profile.properties, "props") + _dicts(profile.features, "feats")
    for head, attr in _LIST_ATTRS.items():
        entries = getattr(profile, attr)
        lines.append(f"{head} {len(entries)}")
        lines += ["   " + repr({k: int(e[k]) for k in ENTRY_FIELDS[head]}) for e in entries]
    return "\n".join(lines) + "\n"
