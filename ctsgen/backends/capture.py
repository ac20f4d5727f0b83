"""``ctsgen profile``: a live Vulkan device's capabilities written as a read-out
(docs/profile-format.md), which ``generate --profile`` then targets without the device."""

from __future__ import annotations

import datetime
from pathlib import Path

from ctsgen.version import __version__
from ctsgen.device.profile import parse_profile
from ctsgen.device.readout import format_profile
from ctsgen.backends import vulkan


def capture(device: int, out: Path | None) -> str:
    """The read-out of Vulkan device ``device``, checked by reading it back, written to ``out``
    (when given) and returned. The Vulkan backend reads the device (its features, properties
    and combination lists, as a fuzz or run on it sees them)."""
    with vulkan.VulkanBackend(device) as backend:
        profile = backend.profile()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    text = format_profile(profile, [f"Read off Vulkan device {device}, {profile.name}, by `ctsgen profile` "
                                    f"(ctsgen {__version__}) on {when}."])
    parse_profile(text, f"the read-out of device {device}")  # what it writes, load_profile reads back
    if out is not None:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    return text
