"""Which families a device profile runs: the one gate ``generate --profile``, ``fuzz``,
campaigns and benches share. A family's ``needs`` (its extension and the feature bits
without which it has no case) decide it; what only some of its variants need, its
strategies leave out by construction (they draw from the profile)."""

from __future__ import annotations

from ctsgen.device.profile import DeviceProfile
from ctsgen.families import families, get_family
from ctsgen.core.family import Family


def unsupported_family(family: Family, profile: DeviceProfile) -> str | None:
    """None if ``profile`` runs some case of ``family``, else the one thing it lacks."""
    return profile.unsupported_reason(family.needs)


def families_it_runs(profile: DeviceProfile) -> list[str]:
    """The names of every registered family ``profile`` runs some case of, sorted."""
    return sorted(n for n in families() if unsupported_family(get_family(n), profile) is None)


def split_runnable(asked: list[Family], profile: DeviceProfile) -> tuple[list[Family], dict[str, str]]:
    """The families of ``asked`` that ``profile`` runs, and why it runs none of each other one."""
    skipped = {f.name: why for f in asked if (why := unsupported_family(f, profile))}
    return [f for f in asked if f.name not in skipped], skipped


def omitted(family: Family, profile: DeviceProfile) -> str | None:
    """What ``family`` leaves out on ``profile`` (its optional ``omissions``), in one line, or None."""
    omissions = getattr(family, "omissions", None)
    return omissions(profile) if omissions is not None else None
