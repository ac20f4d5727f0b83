"""A backend that misbehaves on purpose, for testing the runner's supervision.

``FaultyBackend`` runs dispatches through the reference backend, except
that a dispatch containing a *poisoned* case does what a broken driver
does: hangs, crashes the process, loses the device, exits, or returns a
wrong element. A case is poisoned by its parameter words (the runner never
tells a backend case names): ``faults`` maps a tuple of a case's family
words to a fault name.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence

import numpy as np

from ctsgen.backends.base import Backend
from ctsgen.errors import BackendError, DeviceLost
from ctsgen.core.shader import Dispatch, ShaderVariant
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.device.profile import DeviceProfile

FAULTS = ("hang", "crash", "device_lost", "exit", "error", "wrong")


class FaultyBackend(Backend):
    """The reference backend with injected faults (see the module docstring)."""

    name = "faulty"

    def __init__(self, faults: dict[tuple[int, ...], str], hang_s: float = 3600.0, build_s: float = 0.0,
                 failing_builds: Sequence[str] = ()) -> None:
        unknown = set(faults.values()) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault(s) {sorted(unknown)}; known: {', '.join(FAULTS)}")
        self.faults = {tuple(int(w) for w in k): v for k, v in faults.items()}
        self.hang_s = hang_s
        self.build_s = build_s  # each pipeline build takes this long, like a driver's slow compile
        self.failing_builds = frozenset(failing_builds)  # variant ids whose pipeline build fails
        self._ref = ReferenceBackend()
        self._builds: dict[str, float] = {}  # variant id -> the seconds its "build" took (build_seconds)

    def profile(self) -> DeviceProfile:
        return self._ref.profile()

    def prepare(self, variants: Sequence[ShaderVariant]) -> None:
        """"Build" the pipelines of ``variants``: ``build_s`` seconds each; a failing build raises."""
        time.sleep(self.build_s * len(variants))
        failed = sorted(v.id for v in variants if v.id in self.failing_builds)
        if failed:
            raise BackendError(f"vkCreateComputePipelines failed for {', '.join(failed)} (injected)")
        self._builds.update((v.id, self.build_s) for v in variants)

    def build_seconds(self, variant_id: str) -> float | None:
        """The seconds ``variant_id``'s "build" took (``build_s``); None before its first."""
        return self._builds.get(variant_id)

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        n_buf = len(dispatch.variant.buffers)
        records = dispatch.buffers[0].reshape(dispatch.workgroups, -1)
        keys = [tuple(int(w) for w in r[n_buf:]) for r in records]
        present = [self.faults[k] for k in keys if k in self.faults]
        if "hang" in present:
            time.sleep(self.hang_s)  # like a fence that never signals: only the supervisor's bound ends it
        if "crash" in present:
            os.kill(os.getpid(), signal.SIGSEGV)
        if "exit" in present:
            os._exit(3)
        if "device_lost" in present:
            raise DeviceLost("VK_ERROR_DEVICE_LOST (injected)")
        if "error" in present:
            raise BackendError("vkQueueSubmit failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (injected)")
        out = self._ref.run(dispatch, timeout_s)
        for record, key in zip(records, keys):
            if self.faults.get(key) == "wrong":  # flip the first byte of the case's last buffer
                offset = int(record[n_buf - 1]) * out[-1].dtype.itemsize
                out[-1].view(np.uint8)[offset] ^= 0xFF
        return out

    def close(self) -> None:
        self._ref.close()
