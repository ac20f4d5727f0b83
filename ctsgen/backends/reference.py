"""The reference backend: a software device that runs the family's reference semantics.

It consumes exactly what a GPU consumes (the parameter buffer and the
batched data buffers of a dispatch) and executes each case through the
family variant's ``execute``, which decodes the parameter words and
replays the spec's instruction sequence on host memory. It therefore
checks the whole pipeline (encoding, batching, pack I/O, the runner)
without a GPU; it shares the oracle's addressing code, so it is not an
independent check of the oracle itself (tests/ do that against the spec's
pseudo-code and hand-worked examples).
"""

from __future__ import annotations

import numpy as np

from ctsgen.backends.base import Backend
from ctsgen.core.shader import Dispatch
from ctsgen.device.profile import DeviceProfile, Requirements
from ctsgen.families import get_family


class UniversalProfile(DeviceProfile):
    """A profile that supports every requirement (the reference backend's)."""

    def unsupported_reason(self, req: Requirements) -> str | None:
        return None


class ReferenceBackend(Backend):
    """Runs dispatches on the host through the families' reference semantics."""

    name = "reference"
    host_pipelines = True
    in_process = True

    def __init__(self) -> None:
        self._profile = UniversalProfile(name="ctsgen reference backend")

    def profile(self) -> DeviceProfile:
        return self._profile

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        sv = dispatch.variant
        variant = get_family(sv.family).variant_from_json(sv.signature)
        n_buf = len(sv.buffers)
        words = dispatch.buffers[0].reshape(dispatch.workgroups, -1)
        buffers = [b.copy() for b in dispatch.buffers[1:]]
        variant.execute(words[:, n_buf:], words[:, :n_buf].astype(np.int64), buffers)
        return [dispatch.buffers[0].copy(), *buffers]

    def close(self) -> None:
        pass
