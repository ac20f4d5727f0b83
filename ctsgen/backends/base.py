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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ctsgen.device.profile import DeviceProfile, Requirements
from ctsgen.errors import CtsgenError


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


#: Key of a family signature (``ShaderVariant.signature``) under which a variant asks the
#: runner and backends for buffer placement beyond the default: ``{"bufferAlign": {binding:
#: bytes}, "matrixConversions": [MatrixConversion.to_json(), ...]}``. It lives in the
#: signature so that it survives a pack's manifest unchanged.
DEVICE_LAYOUT_KEY = "deviceLayout"


@dataclass(frozen=True)
class MatrixConversion:
    """A per-case matrix the backend converts with vkConvertCooperativeVectorMatrixNV.

    Each case's source is a tightly packed row-major ``rows`` x ``cols`` matrix of
    ``src_type`` (a VkComponentTypeKHR) at the start of the case's data in binding
    ``src_binding``. Before the dispatch the backend converts it into ``dst_layout``
    (a VkCooperativeVectorMatrixLayoutNV) of ``dst_type`` in binding ``dst_binding``
    (a uint8 buffer the backend sizes itself: it sets each case's element offset
    word of that binding, so the shader finds the converted matrix at that offset
    plus the byte offset in parameter word ``offset_word`` of the record, if any).
    With ``write_back`` the backend converts the matrix back into the source region
    after the dispatch (matrices a shader accumulates into). A backend without
    optimal layouts (the reference) ignores conversions and works on the source.
    """

    src_binding: int
    dst_binding: int
    rows: int
    cols: int
    src_type: int
    dst_type: int
    dst_layout: int
    offset_word: int | None = None
    write_back: bool = False

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> MatrixConversion:
        return cls(**o)


def matrix_conversions(variant: ShaderVariant) -> tuple[MatrixConversion, ...]:
    """The conversions ``variant`` asks for (see :data:`DEVICE_LAYOUT_KEY`)."""
    layout = variant.signature.get(DEVICE_LAYOUT_KEY, {})
    return tuple(MatrixConversion.from_json(c) for c in layout.get("matrixConversions", ()))


def buffer_align(variant: ShaderVariant, binding: int, default: int) -> int:
    """The byte alignment each case's data needs in ``binding`` (at least ``default``)."""
    layout = variant.signature.get(DEVICE_LAYOUT_KEY, {})
    return max(default, int(layout.get("bufferAlign", {}).get(str(binding), default)))


@dataclass
class Dispatch:
    """A batch of cases of one variant: ``workgroups`` workgroups in x.

    ``buffers[0]`` is the uint32 parameter buffer, ``buffers[i]`` (i >= 1)
    is the initial content of ``variant.buffers[i-1]``.
    """

    variant: ShaderVariant
    workgroups: int
    buffers: list[np.ndarray]


class BackendError(CtsgenError, RuntimeError):
    """A backend could not run a dispatch (not a wrong result: no result)."""


class DispatchTimeout(BackendError):
    """The dispatch did not complete within the bounded wait.

    ``waited_s``: how long the wait itself took, where the one who waited measured it
    (the supervisor does, without the time to replace a dead worker); else None."""

    waited_s: float | None = None


class BuildTimeout(BackendError):
    """Building a variant's pipeline (the driver compiling its SPIR-V) took longer than its
    bound. Not a hang of the dispatch: the message names the variant and the seconds."""

    def __init__(self, variant_id: str, seconds: float) -> None:
        super().__init__(f"building the pipeline of shader variant {variant_id} took more than "
                         f"{seconds:.1f} s (no dispatch was submitted); the worker was killed")
        self.variant_id, self.seconds = variant_id, seconds


class DeviceLost(BackendError):
    """The device reported VK_ERROR_DEVICE_LOST (or its equivalent)."""


class WorkerCrashed(BackendError):
    """The worker process running the backend died (a signal or an exit) while running a request."""


@runtime_checkable
class Backend(Protocol):
    """What the runner needs from a backend.

    ``name``, :meth:`profile`, :meth:`run` and :meth:`close` are required.
    :meth:`prepare`, :meth:`prepare_soon` and :attr:`stats` have defaults
    (nothing to build ahead, no counters): a backend class that derives from ``Backend`` inherits
    them, and :func:`as_backend` gives them to one that only has the required
    members, so callers use them without probing.
    """

    name: str

    #: Counters the backend keeps (e.g. pipelines built, seconds spent), printed after ``ctsgen run``.
    stats: Mapping[str, float] = MappingProxyType({})

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

    def prepare(self, variants: Sequence[ShaderVariant]) -> None:
        """Build the pipelines of ``variants`` ahead of their dispatches (see VulkanBackend.prepare);
        by default nothing is built ahead. May raise :class:`BackendError`; each variant's own
        dispatch then says what is wrong with it."""
        return None

    def prepare_soon(self, variants: Sequence[ShaderVariant]) -> None:
        """Start building the pipelines of ``variants`` and return at once; a later :meth:`run`
        waits for them. A backend that does its device work elsewhere (a supervised worker
        process) builds while its caller computes the data, so the build is off the critical
        path. By default nothing starts: each pipeline is built at its first :meth:`run`."""
        return None


class _Completed(Backend):
    """A backend with only the required members, completed with :class:`Backend`'s defaults
    for the others; every other attribute is the wrapped object's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self._has = {m for m in ("prepare", "prepare_soon", "stats") if hasattr(inner, m)}

    def profile(self) -> DeviceProfile:
        return self.inner.profile()

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        return self.inner.run(dispatch, timeout_s)

    def close(self) -> None:
        self.inner.close()

    def prepare(self, variants: Sequence[ShaderVariant]) -> None:
        if "prepare" in self._has:
            self.inner.prepare(variants)

    def prepare_soon(self, variants: Sequence[ShaderVariant]) -> None:
        if "prepare_soon" in self._has:
            self.inner.prepare_soon(variants)

    @property  # type: ignore[override]
    def stats(self) -> Mapping[str, float]:
        return self.inner.stats if "stats" in self._has else MappingProxyType({})

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)


def validation_messages(backend: Any) -> list[str]:
    """The messages a validation layer reported since the last call, taken: the optional member
    ``validation_messages()`` of a backend that runs one (the Vulkan backend with ``--validation``,
    and a supervised worker of it); none for any other. Optional, so that a backend written to the
    protocol before it existed is still complete."""
    take = getattr(backend, "validation_messages", None)
    return take() if take is not None else []


def as_backend(obj: Any) -> Backend:
    """``obj`` as a full :class:`Backend`: itself when it has every member (a class deriving
    from ``Backend`` does), else wrapped with the defaults of :meth:`Backend.prepare` and
    :attr:`Backend.stats`. Applied once where a backend enters ctsgen (``open_backend``,
    the supervised worker, ``run_pack``)."""
    return obj if isinstance(obj, Backend) else _Completed(obj)
