"""pytest plugin: a pack's cases as pytest items, so CI systems that speak pytest and JUnit run packs.

    pytest --ctsgen-pack DIR [--ctsgen-backend reference|vulkan|mutant:NAME] [-k clamp_repeat] [--junitxml r.xml]

One item per case, named by its CTS-style case name. Execution stays
batched per shader variant: the first selected item of a variant runs all
selected items of that variant through :func:`ctsgen.runner.run.run_pack`
(one dispatch per batch, bisection of hangs and crashes, NotSupported for
what the backend's profile lacks) and caches their verdicts; the others
only report theirs. Verdicts map to outcomes by :func:`apply_verdict`.

With pytest-xdist (``-n N``) the plugin switches ``--dist load`` to
``loadgroup`` and groups each variant's items (an ``xdist_group`` mark), so a
variant still runs in one dispatch on one worker; ``--ctsgen-devices 0,1``
pins worker gwK to device ``devices[K % len(devices)]`` (the Vulkan
backend's ``device_index``; software backends only record it, so CI can
simulate several devices). Each item records its ``device`` and ``worker``
as JUnit properties. Workers on other hosts are xdist's own ``--tx``.

Without ``--ctsgen-pack`` the plugin collects nothing. Its fixtures:
``ctsgen_backend`` (session scope, the ``--ctsgen-backend`` backend) and
``ctsgen_case`` (a test taking it runs once per case of the pack, as a
:class:`~ctsgen.pack.read.PackCase`; skipped without a pack).
"""

from __future__ import annotations

import dataclasses
import io
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctsgen.runner.verdict import CaseResult, Status

_STATE = pytest.StashKey["_PackState"]()


class CtsgenQualityWarning(UserWarning):
    """A case passed within its tolerance, but close to the edge of it (Status.QualityWarning)."""


class CaseFailed(Exception):
    """A case's verdict is a failure; the message is the mismatch report."""


def apply_verdict(result: CaseResult) -> None:
    """Turn a verdict into a pytest outcome.

    Pass -> return (pass); QualityWarning -> a CtsgenQualityWarning, then
    pass; NotSupported -> pytest.skip with the reason; Fail, Timeout,
    DeviceLost, Crash -> CaseFailed carrying the status, detail and first
    mismatches.
    """
    if result.status is Status.Pass:
        return
    if result.status is Status.QualityWarning:
        warnings.warn(CtsgenQualityWarning(f"{result.name}: {result.detail}"), stacklevel=2)
        return
    if result.status is Status.NotSupported:
        pytest.skip(f"NotSupported: {result.detail}")
    lines = [f"{result.status.value}: {result.detail}"]
    lines += [f"  {m}" for m in result.mismatches]
    raise CaseFailed("\n".join(lines))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctsgen", "ctsgen conformance packs")
    group.addoption("--ctsgen-pack", metavar="DIR", help="run the cases of this ctsgen pack as test items")
    group.addoption("--ctsgen-backend", default="reference", metavar="NAME",
                    help="backend: reference (default), vulkan or mutant:NAME")
    group.addoption("--ctsgen-isolation", choices=["auto", "process", "none"], default="auto",
                    help="run the backend in a supervised worker process (auto: all but the reference)")
    group.addoption("--ctsgen-devices", metavar="I,J,...",
                    help="with pytest-xdist: pin worker gwK to device number K mod the list's length")
    group.addoption("--ctsgen-batch-size", type=int, default=512, help="cases per dispatch (default: 512)")
    group.addoption("--ctsgen-timeout", type=float, default=10.0,
                    help="seconds to wait for a dispatch, plus 0.01 s per case (default: 10)")


class _PackState:
    """The session's pack, backend and cached verdicts."""

    def __init__(self, config: pytest.Config) -> None:
        from ctsgen.pack.read import load_pack

        self.config = config
        path = config.getoption("ctsgen_pack")
        self.pack = load_pack(path) if path else None
        self._backend: Any = None
        self.worker = getattr(config, "workerinput", {}).get("workerid")
        self.device = _worker_device(config.getoption("ctsgen_devices"), self.worker)
        self.selected: dict[str, list[str]] = {}  # variant id -> names of the selected cases
        self.verdicts: dict[str, CaseResult] = {}
        self._prepared = False

    @property
    def backend(self) -> Any:
        if self._backend is None:
            from ctsgen.cli import _backend

            self._backend = _backend(self.config.getoption("ctsgen_backend"),
                                     self.config.getoption("ctsgen_isolation"), self.device)
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def verdict(self, name: str, variant_id: str) -> CaseResult:
        if name not in self.verdicts:
            self._run_variant(variant_id, self.selected.get(variant_id) or [name])
        return self.verdicts[name]

    def _prepare_once(self) -> None:
        """Build every selected variant's pipeline up front, on several threads, when this
        process runs the whole selection; building them one variant at a time as items
        come cost the H100 run 99% of its time (docs/validation.md). Under xdist each
        worker builds only what it is given, at its first dispatch."""
        if self._prepared or self.worker is not None:
            return
        self._prepared = True
        prepare = getattr(self.backend, "prepare", None)
        if prepare is None:
            return
        from ctsgen.backends.base import BackendError

        profile = self.backend.profile()
        variants = [self.pack.variants[v] for v in self.selected
                    if not profile.unsupported_reason(self.pack.variants[v].requirements)]
        try:
            prepare(variants)
        except BackendError:
            pass  # each variant's own dispatch reports what is wrong with it

    def _run_variant(self, variant_id: str, names: list[str]) -> None:
        """One run_pack over the selected cases of one variant (batched, bisected)."""
        from ctsgen.runner.run import RunOptions, run_pack

        self._prepare_once()
        wanted = set(names)
        sub = dataclasses.replace(self.pack, cases=[c for c in self.pack.cases if c.name in wanted])
        options = RunOptions(batch_size=self.config.getoption("ctsgen_batch_size"),
                             timeout_base_s=self.config.getoption("ctsgen_timeout"))
        out = io.StringIO()
        run_pack(sub, self.backend, out, options)
        for line in out.getvalue().splitlines():
            rec = json.loads(line)
            self.verdicts[rec["name"]] = CaseResult(rec["name"], Status(rec["status"]), rec.get("detail", ""),
                                                    rec.get("mismatches", []), rec.get("max_error_ratio"))


def _worker_device(devices: str | None, worker: str | None) -> int | None:
    """The device of xdist worker ``worker`` ("gw3") from ``--ctsgen-devices`` ("0,1"); None without either."""
    if not devices:
        return None
    try:
        ids = [int(d) for d in devices.split(",")]
    except ValueError:
        raise pytest.UsageError(f"--ctsgen-devices {devices!r}: expected device numbers, e.g. 0,1") from None
    k = int(worker[2:]) if worker and worker.startswith("gw") else 0
    return ids[k % len(ids)]


def pytest_configure(config: pytest.Config) -> None:
    state = _PackState(config)
    config.stash[_STATE] = state
    if state.pack is None:
        return
    config.addinivalue_line("markers", "xdist_group(name): pytest-xdist --dist loadgroup runs a group on one worker")
    if getattr(config.option, "dist", "no") == "load":  # xdist -n N: keep each variant on one worker
        config.option.dist = "loadgroup"
    if getattr(config, "workerinput", {}).get("ctsgen_loadgroup"):  # a worker re-parses the args without it
        config.option.loadgroup = True
    manifest = str(state.pack.root.resolve() / "manifest.json")
    if config.args_source is not pytest.Config.ArgsSource.ARGS:  # testpaths / cwd: only the pack
        config.args = [manifest]
    elif manifest not in config.args:
        config.args.append(manifest)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist, on the controller: tell each worker to group items by variant."""
    node.workerinput["ctsgen_loadgroup"] = node.config.getoption("dist") == "loadgroup"


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    state = parent.config.stash[_STATE]
    if state.pack is not None and file_path.resolve() == (state.pack.root.resolve() / "manifest.json"):
        return PackFile.from_parent(parent, path=file_path)
    return None


class PackFile(pytest.File):
    """A pack's manifest: one item per case."""

    def collect(self) -> Iterator[CaseItem]:
        for case in self.config.stash[_STATE].pack.cases:
            yield CaseItem.from_parent(self, name=case.name, variant_id=case.variant_id)


class CaseItem(pytest.Item):
    """One case; its verdict comes from its variant's batched run."""

    def __init__(self, *, variant_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant_id = variant_id
        self.user_properties.append(("variant", variant_id))
        self.add_marker(pytest.mark.xdist_group(variant_id))

    def runtest(self) -> None:
        state = self.config.stash[_STATE]
        if state.worker is not None:
            self.user_properties += [("worker", state.worker), ("device", str(state.device))]
        apply_verdict(state.verdict(self.name, self.variant_id))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.name} [{self.config.getoption('ctsgen_backend')}]"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember which cases of each variant survived selection (-k, -m, deselect)."""
    state = session.config.stash[_STATE]
    for item in session.items:
        if isinstance(item, CaseItem):
            state.selected.setdefault(item.variant_id, []).append(item.name)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = metafunc.config.stash[_STATE]
    if "ctsgen_case" in metafunc.fixturenames and state.pack is not None:
        cases = state.pack.cases
        metafunc.parametrize("ctsgen_case", cases, ids=[c.name for c in cases])


@pytest.fixture(scope="session")
def ctsgen_backend(pytestconfig: pytest.Config) -> Any:
    """The backend named by --ctsgen-backend (shared with the pack's items; closed at the end)."""
    return pytestconfig.stash[_STATE].backend


@pytest.fixture
def ctsgen_case() -> None:
    """Each case of --ctsgen-pack (parametrized by the plugin); without a pack the test is skipped."""
    pytest.skip("no --ctsgen-pack given: ctsgen_case has no cases to run")
