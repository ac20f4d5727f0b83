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
from types import MappingProxyType
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ctsgen.core.shader import Dispatch, ShaderVariant
from ctsgen.device.profile import DeviceProfile


#: The default build budget (``--build-budget``): seconds one variant's pipeline build may take (its
#: creation, and its first dispatch's compile where the driver compiles then) before its cases are
#: BuildTimeout. Generous for a GPU (the H100's slowest measured build, a 5-D decode variant, took 78 s)
#: and for lavapipe on two cores (a 32x64x16 MulAdd builds in about 9 s, 64x64x16 in 77 s; 64x64x32
#: takes over 300 s: docs/validation.md, "lavapipe build time").
BUILD_BUDGET_S = 120.0


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

    # What a backend class can do, declared on the class (ctsgen reads them before building it;
    # a class that does not derive from Backend gets these defaults):
    #: Runs on the host, where a "pipeline" costs nothing: ``fuzz`` draws many small batches (more
    #: variants a second) instead of the large ones that amortise a driver's pipeline build.
    host_pipelines: ClassVar[bool] = False
    #: Safe in ctsgen's own process under ``--isolation auto``: it cannot hang, crash or leak a
    #: fault into the expectations, so no supervised worker is needed.
    in_process: ClassVar[bool] = False
    #: Its constructor takes a device index as its first argument (``--device``, ``--devices``).
    selects_device: ClassVar[bool] = False
    #: Its constructor takes ``validation=True`` to run under the Khronos validation layer.
    validation_layer: ClassVar[bool] = False

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


def build_seconds(backend: Any, variant_id: str) -> float | None:
    """Seconds the latest build of ``variant_id``'s pipeline took on ``backend`` (its creation and, where
    the driver compiles at the first dispatch, that compile): the optional member
    ``build_seconds(variant_id)`` of a backend that builds pipelines (the Vulkan backend, and a
    supervised worker of one); None for any other, or for a variant it has not built."""
    seconds = getattr(backend, "build_seconds", None)
    return seconds(variant_id) if seconds is not None else None


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
    return obj if all(hasattr(obj, m) for m in _MEMBERS) else _Completed(obj)


#: The members a backend object is used through (the capabilities are read from its class, by
#: ``ctsgen.backends.registry.capabilities``, before there is an object).
_MEMBERS = ("name", "profile", "run", "close", "prepare", "prepare_soon", "stats")
