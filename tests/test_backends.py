"""Backends by name (``open_backend``) and the Backend protocol's defaults."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from ctsgen.backends import registry
from ctsgen.backends.base import Backend, as_backend
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.backends.registry import ENTRY_POINT_GROUP, backend_factory, open_backend
from ctsgen.errors import CtsgenError, UnknownNameError, UserError
from ctsgen.mutants.catalogue import catalogue


class Minimal:
    """A third-party backend with only the required members."""

    name = "minimal"

    def __init__(self) -> None:
        self._ref = ReferenceBackend()
        self.closed = False

    def profile(self):
        return self._ref.profile()

    def run(self, dispatch, timeout_s):
        return self._ref.run(dispatch, timeout_s)

    def close(self) -> None:
        self.closed = True


class Preparing(Minimal):
    """One that builds ahead and counts what it did."""

    def __init__(self) -> None:
        super().__init__()
        self.prepared: list[str] = []
        self.stats = {"prepared": 0}

    def prepare(self, variants) -> None:
        self.prepared += [v.id for v in variants]
        self.stats["prepared"] += len(variants)

    def prepare_soon(self, variants) -> None:
        self.prepared += [f"soon:{v.id}" for v in variants]


def test_a_backend_with_only_the_required_members_gets_the_protocol_defaults() -> None:
    inner = Minimal()
    b = as_backend(inner)
    assert isinstance(b, Backend) and b.name == "minimal"
    assert b.prepare([SimpleNamespace(id="v")]) is None and dict(b.stats) == {}
    assert b.prepare_soon([SimpleNamespace(id="v")]) is None
    b.close()
    assert inner.closed
    assert b._ref is inner._ref  # every other attribute is the backend's own


def test_a_backends_own_prepare_and_stats_are_the_ones_used() -> None:
    inner = Preparing()
    b = as_backend(inner)
    b.prepare([SimpleNamespace(id="v1"), SimpleNamespace(id="v2")])
    b.prepare_soon([SimpleNamespace(id="v3")])
    assert inner.prepared == ["v1", "v2", "soon:v3"] and b.stats == {"prepared": 2}


def test_a_backend_with_some_optional_members_keeps_them_and_gets_the_rest() -> None:
    """A backend written before prepare_soon existed (prepare and stats only) still works:
    its own prepare is used and prepare_soon is the protocol's no-op."""
    class Older(Minimal):
        def __init__(self) -> None:
            super().__init__()
            self.prepared: list[str] = []

        def prepare(self, variants) -> None:
            self.prepared += [v.id for v in variants]

    inner = Older()
    b = as_backend(inner)
    b.prepare_soon([SimpleNamespace(id="v0")])
    b.prepare([SimpleNamespace(id="v1")])
    assert inner.prepared == ["v1"]


def test_a_backend_deriving_from_the_protocol_is_used_as_it_is() -> None:
    ref = ReferenceBackend()
    assert as_backend(ref) is ref and dict(ref.stats) == {}


def test_open_backend_runs_the_reference_in_process_and_others_in_a_worker_by_default() -> None:
    assert isinstance(open_backend("reference"), ReferenceBackend)
    assert isinstance(open_backend("reference", isolation="none"), ReferenceBackend)


def test_a_backend_registered_under_the_entry_point_group_is_found_by_name(monkeypatch) -> None:
    seen_groups = []

    def entry_points(group: str):
        seen_groups.append(group)
        return [SimpleNamespace(name="toy", load=lambda: Preparing)]

    monkeypatch.setattr(registry, "entry_points", entry_points)
    assert backend_factory("toy") is Preparing
    b = open_backend("toy", isolation="none")
    assert isinstance(b, Preparing) and seen_groups == [ENTRY_POINT_GROUP, ENTRY_POINT_GROUP]
    with pytest.raises(UnknownNameError, match="use reference, vulkan, toy, mutant:NAME"):
        backend_factory("nothing-called-this")


def test_bad_backend_names_are_ctsgen_errors_that_say_what_would_work() -> None:
    with pytest.raises(CtsgenError, match=r"unknown backend 'nope' -> use reference, vulkan, mutant:NAME"):
        open_backend("nope")
    with pytest.raises(CtsgenError, match=r"cannot load Missing from module no_such_module .*PYTHONPATH"):
        open_backend("no_such_module:Missing")
    with pytest.raises(CtsgenError, match="unknown mutant 'no-such-bug'"):
        open_backend("mutant:no-such-bug")


def test_capabilities_are_read_from_each_backend_class_and_default_for_others() -> None:
    from ctsgen.backends.registry import Capabilities, capabilities

    assert capabilities("reference") == Capabilities(host_pipelines=True, in_process=True)
    mutant = next(iter(catalogue()))
    # a mutant costs nothing to "build" but must stay out of the process computing expectations
    assert capabilities(f"mutant:{mutant}") == Capabilities(host_pipelines=True)
    assert capabilities("vulkan") == Capabilities(selects_device=True, validation_layer=True)
    assert capabilities(Minimal) == Capabilities()  # a third-party class that does not derive


def test_validation_is_refused_for_a_backend_that_declares_no_layer() -> None:
    with pytest.raises(UserError, match="--validation runs the Khronos validation layer"):
        open_backend("reference", validation=True)


def test_a_missing_vulkan_loader_names_the_lavapipe_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """vulkan_py raises RuntimeError when dlopen("libvulkan.so.1") fails: the advice names lavapipe's
    prefix, and warns that Debian 12's own libvulkan1 (Mesa 22.3) lacks these extensions."""
    import builtins

    from ctsgen.backends import vulkan
    from ctsgen.errors import BackendError

    real_import = builtins.__import__

    def no_loader(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "vulkan_py":
            raise RuntimeError("cannot load libvulkan.so.1")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "vulkan_py", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_loader)
    with pytest.raises(BackendError) as info:
        vulkan._import_vulkan_py()
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("cannot load the Vulkan loader libvulkan.so.1 -> ")
    assert "bash .ci/lavapipe.sh PREFIX, then PREFIX/run python -m ctsgen" in msg
    assert "Debian 12's libvulkan1 brings Mesa 22.3" in msg
