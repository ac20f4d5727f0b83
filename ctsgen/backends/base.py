"""The backend adapter interface: the one thing a new backend implements.

A backend runs *dispatches*. A dispatch is a batch of cases that share one
compiled shader variant: the runner has already packed every case's
run-time parameters into the parameter buffer (binding 0) and every case's
data into the variant's other buffers, and asks for ``workgroups``
workgroups (one per case). The backend returns the contents of every
buffer after the dispatch. Everything else (oracle, comparison, verdicts)
lives outside the backend, so an adapter stays small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ctsgen.device.profile import DeviceProfile, Requirements


@dataclass(frozen=True)
class BufferSpec:
    """One storage buffer of a shader variant: ``layout(binding = binding)``."""

    binding: int
    name: str
    dtype: str  # numpy dtype name of the buffer's element type, e.g. "float16"


@dataclass(frozen=True)
class ShaderVariant:
    """A compiled compute shader and what it needs from a device.

    Binding 0 is always the uint32 parameter buffer; ``buffers`` lists the
    family's buffers (bindings 1..n) in binding order.
    """

    id: str
    spirv: bytes
    local_size_x: int
    buffers: tuple[BufferSpec, ...]
    requirements: Requirements = field(default_factory=Requirements)
    family: str = ""
    signature: dict[str, Any] = field(default_factory=dict)  # the family's compile-time signature


@dataclass
class Dispatch:
    """A batch of cases of one variant: ``workgroups`` workgroups in x.

    ``buffers[0]`` is the uint32 parameter buffer, ``buffers[i]`` (i >= 1)
    is the initial content of ``variant.buffers[i-1]``.
    """

    variant: ShaderVariant
    workgroups: int
    buffers: list[np.ndarray]


class BackendError(RuntimeError):
    """A backend could not run a dispatch (not a wrong result: no result)."""


class DispatchTimeout(BackendError):
    """The dispatch did not complete within the bounded wait."""


class DeviceLost(BackendError):
    """The device reported VK_ERROR_DEVICE_LOST (or its equivalent)."""


@runtime_checkable
class Backend(Protocol):
    """What the runner needs from a backend."""

    name: str

    def profile(self) -> DeviceProfile:
        """The device's capabilities (what it advertises)."""
        ...

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        """Run one dispatch and return every buffer (params included) after it.

        Must return within about ``timeout_s`` seconds or raise
        :class:`DispatchTimeout`.
        """
        ...

    def close(self) -> None:
        """Release the device."""
        ...

    # Optional: ``prepare(variants)`` builds pipelines ahead of the dispatches
    # (the runner calls it when present; see VulkanBackend.prepare).
