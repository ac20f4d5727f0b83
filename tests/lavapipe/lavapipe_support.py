"""What the Vulkan tier's tests share: lavapipe's launcher (:class:`Lavapipe`), and a real Vulkan
device (lavapipe) that hangs or crashes after a planted case's dispatch, for the supervised worker's
Timeout and Crash verdicts (:class:`PlantedVulkan`, built in the worker, which imports it from here)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ctsgen.core.shader import Dispatch
from ctsgen.backends.vulkan import VulkanBackend

REPO = Path(__file__).resolve().parents[2]
LAVAPIPE_ENV = "CTSGEN_LAVAPIPE"
#: The documented lavapipe deviation (docs/validation.md, "lavapipe: Row and Column reductions").
DEVIATION = "lavapipe-reduce-tiles"


@dataclass(frozen=True)
class Lavapipe:
    """The launcher, and the environment its programs get (caches private to the test session)."""

    launcher: str
    env: dict[str, str]

    def run(self, args: Sequence[str], cwd: Path = REPO, timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``args`` (a command line of this Python: ``-m ctsgen ...``) through the launcher; ``env``
        overrides some of the variables."""
        return subprocess.run([self.launcher, sys.executable, *args], cwd=cwd, env={**self.env, **(env or {})},
                              text=True, capture_output=True, timeout=timeout, check=False)

    def ctsgen(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self.run(["-m", "ctsgen", *args], timeout=timeout)


class PlantedVulkan(VulkanBackend):
    """``faults`` maps a case's input bytes (its first data buffer's, hex) to ``hang`` or ``crash``:
    a dispatch holding that case is run on the device, then hangs or takes the worker down."""

    def __init__(self, faults: dict[str, str]) -> None:
        super().__init__()
        self.faults = {bytes.fromhex(k): v for k, v in faults.items()}

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        out = super().run(dispatch, timeout_s)
        data = dispatch.buffers[1].tobytes()
        present = {fault for planted, fault in self.faults.items() if planted in data}
        if "hang" in present:
            time.sleep(3600)  # only the supervisor's bound ends it
        if "crash" in present:
            os.kill(os.getpid(), signal.SIGSEGV)
        return out
