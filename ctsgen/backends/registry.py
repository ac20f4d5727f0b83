"""Backends by name: the one place a backend name becomes a running backend.

A name is ``reference`` or ``vulkan`` (built in), ``mutant:NAME`` (the
reference backend with one injected bug, :mod:`ctsgen.mutants.backend`), a
name registered under the ``ctsgen.backends`` entry-point group by another
distribution (as families register under ``ctsgen.families``), or
``MODULE:CLASS`` (docs/third-party-backend.md). :func:`open_backend` builds
it, in a supervised worker process unless isolation is ``none``
(:mod:`ctsgen.backends.supervise`). Nothing else turns names into backends.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from importlib.metadata import entry_points
from typing import Any

from ctsgen.backends.base import Backend, as_backend
from ctsgen.backends.pipeline_cache import pipeline_cache_enabled
from ctsgen.errors import UnknownNameError, UserError
from ctsgen.backends.supervise import SupervisedBackend

#: The entry-point group under which other distributions register backends by name:
#: ``[project.entry-points."ctsgen.backends"] mydriver = "my_pkg.backend:MyBackend"``.
ENTRY_POINT_GROUP = "ctsgen.backends"

BUILTIN = {"reference": "ctsgen.backends.reference:ReferenceBackend",
           "vulkan": "ctsgen.backends.vulkan:VulkanBackend"}
#: Built-in names with an argument, ``PREFIX:ARG``: the factory of each, called with ARG.
BUILTIN_PREFIXED = {"mutant": "ctsgen.mutants.backend:mutant_backend"}


def _load(target: str) -> Any:
    module, attr = target.split(":", 1)
    return getattr(importlib.import_module(module), attr)


def backend_factory(name: str) -> Callable[..., Any]:
    """A picklable callable that builds the backend called ``name`` (see the module docstring)."""
    if name in BUILTIN:
        return _load(BUILTIN[name])
    prefix, _, arg = name.partition(":")
    if prefix in BUILTIN_PREFIXED:
        return _load(BUILTIN_PREFIXED[prefix])(arg)
    registered = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name in registered:
        return registered[name].load()
    if ":" in name:  # a third-party adapter, MODULE:CLASS (docs/third-party-backend.md)
        return _adapter_class(name)
    known = ", ".join([*BUILTIN, *sorted(registered)])
    raise UnknownNameError(f"unknown backend {name!r} -> use {known}, mutant:NAME "
                           "(`ctsgen mutants` lists the names) or MODULE:CLASS")


@dataclass(frozen=True)
class Capabilities:
    """What a backend class declares it can do (:class:`ctsgen.backends.base.Backend`'s class
    attributes); a class that does not derive from ``Backend`` has the defaults."""

    host_pipelines: bool = False
    in_process: bool = False
    selects_device: bool = False
    validation_layer: bool = False


def capabilities(backend: str | Callable[..., Any]) -> Capabilities:
    """The capabilities of the backend called ``backend`` (or built by that factory)."""
    factory = backend_factory(backend) if isinstance(backend, str) else backend
    while isinstance(factory, functools.partial):
        factory = factory.func
    if not (isinstance(factory, type) and Backend in factory.__mro__):
        return Capabilities()
    return Capabilities(**{f.name: getattr(factory, f.name) for f in fields(Capabilities)})


def _adapter_class(name: str) -> type:
    """The class ``MODULE:CLASS`` names, refused in one line unless it is one."""
    module, attr = name.split(":", 1)
    if not all(part.isidentifier() for part in module.split(".")) or not attr.isidentifier():
        raise UnknownNameError(f"backend {name!r} is not MODULE:CLASS (a dotted module name, a colon, a class "
                               "name) -> e.g. my_pkg.backend:MyBackend (docs/third-party-backend.md)")
    try:
        cls = _load(name)
    except (ImportError, AttributeError) as exc:
        raise UnknownNameError(f"backend {name!r}: cannot load {attr} from module {module} ({exc}) -> "
                               "put the module on PYTHONPATH, or check the MODULE:CLASS spelling") from None
    if not isinstance(cls, type):
        raise UnknownNameError(f"backend {name!r}: {module}.{attr} is a {type(cls).__name__}, not a backend class "
                               "-> name a class with name, profile(), run() and close() (docs/third-party-backend.md)")
    return cls


def check_device(backend: str, device: int | None) -> None:
    """Refuse ``--device N`` (N > 0) for a backend that cannot select a device (it has one, device 0):
    the option would be ignored and the run would judge another device than the one asked for."""
    if device and not capabilities(backend).selects_device:
        raise UserError(f"--device {device}: backend {backend} has one device (0) and cannot select another -> "
                        "leave --device out, or use a backend that selects devices (--backend vulkan)")


def open_backend(name: str, isolation: str = "auto", device: int | None = None, validation: bool = False,
                 build_budget_s: float | None = None) -> Backend:
    """The backend called ``name``, in a supervised worker process unless ``isolation`` is
    ``none`` (``auto``: a worker for everything but the reference backend; a mutant must
    run in a worker, or its fault would leak into the expectations). ``device`` picks the
    Vulkan device (software backends have one); ``validation`` runs the Vulkan backend under
    the Khronos validation layer (ctsgen.backends.validation); ``build_budget_s`` bounds each
    variant's pipeline build in the worker (``--build-budget``; None: ``BUILD_BUDGET_S``), past which
    its cases are BuildTimeout; in this process (``isolation`` none) a backend that bounds its own builds
    (a ``build_budget_s`` attribute: the Vulkan backend) is given it."""
    pipeline_cache_enabled()  # a CTSGEN_PIPELINE_CACHE that is neither 0 nor 1: one line, before any work
    factory = backend_factory(name)
    can = capabilities(factory)
    if validation and not can.validation_layer:
        raise UserError(f"--validation runs the Khronos validation layer on a Vulkan device -> use --backend "
                        f"vulkan, not {name}")
    if device is not None and can.selects_device:
        factory = functools.partial(factory, device)
    if validation:
        factory = functools.partial(factory, validation=True)
    if isolation == "process" or (isolation == "auto" and not can.in_process):
        if build_budget_s is None:
            return SupervisedBackend(factory, name=name)
        return SupervisedBackend(factory, name=name, build_timeout_s=build_budget_s)
    backend = as_backend(factory())
    if build_budget_s is not None and hasattr(backend, "build_budget_s"):
        backend.build_budget_s = build_budget_s
    return backend
