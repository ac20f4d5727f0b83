"""pytest plugin: a pack's cases as pytest items, so CI systems that speak pytest and JUnit run packs.

    pytest --ctsgen-pack DIR [--ctsgen-backend reference|vulkan|mutant:NAME] [-k clamp_repeat] [--junitxml r.xml]
           [--ctsgen-expect-deviation NAME]

One item per case, named by its CTS-style case name. Execution stays
batched per shader variant: the first selected item of a variant runs all
selected items of that variant through :func:`ctsgen.runner.run.run_pack`
(one dispatch per batch, bisection of hangs and crashes, NotSupported for
what the backend's profile lacks) and caches their verdicts; the others
only report theirs. Verdicts map to outcomes by :func:`apply_verdict`.

Before its first item a process asks the backend to build the pipelines of
its variants up front (``prepare(variants)``, on several threads where the
backend can: pipeline builds dominate a GPU run); the first item records
``prepared`` (how many) and ``prepare_s`` as JUnit properties.

With pytest-xdist (``-n N``, ``--dist load`` or ``--dist loadgroup``)
:class:`~ctsgen.xdist_schedule.VariantScheduling` schedules: whole variants
go to workers by a pure function of the collected node ids and N (largest
variant first onto the worker with the fewest cases,
:func:`~ctsgen.xdist_schedule.assign_groups`; a node id's variant comes
from the pack's manifest, :meth:`_PackState.group_of`), each worker gets
all of its items at once, and each worker evaluates the same function on
its own collection (identical, as xdist checks), so it prepares exactly its
own variants' pipelines, selection (``-k``) included, before its first
item. ``loadgroup`` is taken over because xdist's own grouping no longer
works on pytest 9.2 (pytest-xdist issue #1386). Under another ``--dist``
(``worksteal``, ``loadscope``, ...) the verdicts are the same, but workers
build each pipeline at its variant's first dispatch. ``--ctsgen-devices 0,1`` pins worker gwK to device
``devices[K % len(devices)]`` (the Vulkan backend's ``device_index``;
software backends only record it, so CI can simulate one device per worker: a device no worker
could simulate, ``--ctsgen-devices 99``, is refused in one line, as ``--device 99`` is).
Each item records its ``device`` and ``worker`` as JUnit properties.
Workers on other hosts are xdist's own ``--tx``.

``--ctsgen-expect-deviation NAME`` (repeatable) judges every case against its
oracle under that documented driver deviation, on the pack's own inputs
(:mod:`ctsgen.mutants.deviations`), as ``ctsgen run --expect-deviation`` does.

Driver CI (docs/ci.md): ``--ctsgen-include/--ctsgen-exclude REGEX``, ``--ctsgen-caselist FILE``
and ``--ctsgen-fraction N --ctsgen-fraction-start S`` deselect what ``ctsgen run``'s options of
the same names leave out (:mod:`ctsgen.runner.select`; a caselist's name the pack lacks is a
failing item, Missing, as in ``ctsgen run``); ``--ctsgen-skips FILE`` deselects too. ``--ctsgen-baseline FILE`` and
``--ctsgen-flakes FILE`` (and ``--ctsgen-flake-retries N``) judge each verdict as ``ctsgen run`` does
(:func:`ctsgen.results.expectations.classify`): an ExpectedFail, a Flake or a KnownFlake is an
xfail, an UnexpectedImprovement fails (as in deqp-runner), or under ``--ctsgen-improvements-pass``
passes with a :class:`CtsgenUnexpectedImprovement` warning (UnexpectedImprovement(Skip) always fails).
In the JUnit XML a case's classname is its name without the last part (``<family>.<group of one
shader>``, as the CTS's ``dEQP-VK.<group>``), and each case records the ``device`` and ``driver`` properties the backend
reports (``device_index`` where ``--ctsgen-devices`` picked one).

Without ``--ctsgen-pack`` the plugin collects nothing. Its fixtures:
``ctsgen_backend`` (session scope, the ``--ctsgen-backend`` backend) and
``ctsgen_case`` (a test taking it runs once per case of the pack, as a
:class:`~ctsgen.pack.read.PackCase`; skipped without a pack).
"""

from __future__ import annotations

import dataclasses
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.junitxml import xml_key

from ctsgen.errors import CtsgenError, BackendError
from ctsgen.results.options import ARGUMENTS as EXPECTATION_ARGUMENTS
from ctsgen.runner.options import ARGUMENTS as RUN_ARGUMENTS
from ctsgen.runner.select import ARGUMENTS as SELECT_ARGUMENTS
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.xdist_schedule import SLOT_KEY, VariantScheduling, assign_groups
from ctsgen.results.status import DeqpStatus, lets_pass
from ctsgen.runner.options import RunOptions
from ctsgen.runner.select import Selection, select_cases

if TYPE_CHECKING:
    from ctsgen.results.expectations import Expectations

_STATE = pytest.StashKey["_PackState"]()


class CtsgenQualityWarning(UserWarning):
    """A case passed within its tolerance, but close to the edge of it (Status.QualityWarning)."""


class CtsgenUnexpectedImprovement(UserWarning):
    """A case the baseline lists as failing did better, under ``--ctsgen-improvements-pass``: the baseline
    can shrink (an UnexpectedImprovement, ctsgen.results.status)."""


class CaseFailed(Exception):
    """A case's verdict is a failure; the message is the mismatch report."""


def apply_verdict(result: CaseResult, expected: Expectations | None = None) -> None:
    """Turn a verdict into a pytest outcome.

    Pass -> return (pass); QualityWarning -> a CtsgenQualityWarning, then
    pass; NotSupported -> pytest.skip with the reason; Fail, Timeout,
    DeviceLost, Crash -> CaseFailed carrying the status, detail and first
    mismatches. Under ``expected`` (``--ctsgen-baseline/--ctsgen-flakes``) or after
    re-runs (``--ctsgen-flake-retries``) an ExpectedFail, Flake or KnownFlake is pytest.xfail; an
    UnexpectedImprovement is CaseFailed, or under ``--ctsgen-improvements-pass`` one of a case that
    ran a CtsgenUnexpectedImprovement warning, then pass.
    """
    if expected is not None or result.reruns:
        from ctsgen.results.expectations import Expectations, Outcome, classify  # local: startup

        outcome = Outcome(result.name, result.status, tuple(result.reruns), tuple(result.explained_by))
        ci = classify(outcome, expected or Expectations())
        if ci in (DeqpStatus.ExpectedFail, DeqpStatus.Flake, DeqpStatus.KnownFlake):
            pytest.xfail(f"{ci.value}: {result.status.value}: {result.detail}")
        if ci.is_improvement:
            said = (f"{ci.value}: {result.name}: {result.status.value} where the baseline lists a failure: the "
                    "baseline can shrink")
            if lets_pass(ci, (expected or Expectations()).improvements_pass):
                warnings.warn(CtsgenUnexpectedImprovement(said), stacklevel=2)
                return
            raise CaseFailed(said)
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
    group.addoption("--ctsgen-isolation", **RUN_ARGUMENTS["isolation"])
    group.addoption("--ctsgen-devices", metavar="I,J,...",
                    help="with pytest-xdist: pin worker gwK to device number K mod the list's length")
    group.addoption("--ctsgen-batch-size", **RUN_ARGUMENTS["batch-size"])
    group.addoption("--ctsgen-timeout", **RUN_ARGUMENTS["timeout"])
    group.addoption("--ctsgen-expect-deviation", **RUN_ARGUMENTS["expect-deviation"])
    for option, spec in {**EXPECTATION_ARGUMENTS, **SELECT_ARGUMENTS}.items():
        group.addoption(f"--ctsgen-{option}", **spec)
    group.addoption("--ctsgen-flake-retries", **RUN_ARGUMENTS["flake-retries"])
    group.addoption("--ctsgen-validation", action="store_true",
                    help="run the Vulkan backend under VK_LAYER_KHRONOS_validation: a case whose dispatch draws a "
                         "message fails as ValidationError")


class _PackState:
    """The session's pack, backend and cached verdicts."""

    def __init__(self, config: pytest.Config) -> None:
        from ctsgen.pack.read import load_pack  # local: startup

        self.config = config
        path = config.getoption("ctsgen_pack")
        try:
            self.pack = load_pack(path) if path else None
        except CtsgenError as exc:  # the one place a bad --ctsgen-pack is reported
            raise pytest.UsageError(f"ctsgen: error: --ctsgen-pack {path}: {exc}") from None
        self.variant_of = {c.name: c.variant_id for c in self.pack.cases} if self.pack else {}
        self.deviations = _deviations(config.getoption("ctsgen_expect_deviation"))
        self.expected = _expectations(config) if self.pack else None
        self._backend: Any = None
        workerinput = getattr(config, "workerinput", {})
        self.worker = workerinput.get("workerid")
        self.slot: int | None = workerinput.get(SLOT_KEY)  # this worker's place in the xdist plan
        self.workers: int = workerinput.get("workercount", 1)
        self.device = _worker_device(config.getoption("ctsgen_devices"), self.worker)
        self.selected: dict[str, list[str]] = {}  # variant id -> names of the selected cases
        self.plan: set[str] | None = None  # variants whose pipelines this process builds up front
        self.verdicts: dict[str, CaseResult] = {}
        self.prepared: list[tuple[str, str]] | None = None  # what the up-front build did, as properties
        self.partition = False  # controller: schedule with VariantScheduling
        self.next_slot = 0  # controller: the slot of the next worker configured

    def group_of(self, nodeid: str) -> str:
        """The xdist scheduling group of a node id: its case's variant (a pack item's node id
        is ``<manifest>::<case name>``), else the node id itself (the user's own tests)."""
        return self.variant_of.get(nodeid.rsplit("::", 1)[-1], nodeid)

    def _check_device(self, name: str) -> None:
        """Refuse, in one line, a ``--ctsgen-devices`` device that backend ``name`` cannot be on, as
        ``--device N`` is refused (``registry.check_device``): a backend that cannot select a device
        has device 0, and under pytest-xdist simulates one device per worker (``-n N``: 0 to N-1),
        which it only records. Any other device would be ignored, and the run would claim a device
        it never used."""
        from ctsgen.backends.registry import capabilities  # local: startup
        from ctsgen.errors import CtsgenError  # local: startup

        try:
            selects = capabilities(name).selects_device
        except CtsgenError:
            return  # an unknown backend: open_backend says so, once
        if self.device and not selects and self.device >= self.workers:
            simulated = "device 0" if self.workers == 1 else f"devices 0 to {self.workers - 1} (one per xdist worker)"
            pytest.exit(f"ctsgen: error: --ctsgen-devices {self.config.getoption('ctsgen_devices')}: backend {name} "
                        f"cannot select device {self.device}; it has {simulated} -> leave --ctsgen-devices out, "
                        "or use a backend that selects devices (--ctsgen-backend vulkan)",
                        returncode=pytest.ExitCode.USAGE_ERROR)

    @property
    def backend(self) -> Any:
        if self._backend is None:
            from ctsgen.backends.registry import open_backend  # local: startup

            name = self.config.getoption("ctsgen_backend")
            self._check_device(name)
            try:
                self._backend = open_backend(name, self.config.getoption("ctsgen_isolation"), self.device,
                                             self.config.getoption("ctsgen_validation"))
                self._backend.profile()  # a backend that cannot start fails here, once
            except CtsgenError as exc:  # not one error per case: stop the session
                pytest.exit(f"ctsgen: error: --ctsgen-backend {name}: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def verdict(self, name: str, variant_id: str) -> CaseResult:
        if name not in self.verdicts:
            self._run_variant(variant_id, self.selected.get(variant_id) or [name])
        return self.verdicts[name]

    def _prepare_once(self) -> None:
        """Build the pipelines of every variant in :attr:`plan` up front, on several threads;
        building them one variant at a time as items come cost the H100 run 99% of its
        time (docs/validation.md). Without a plan (an xdist worker under another
        scheduler) each variant's pipeline is built at its first dispatch."""
        if self.plan is None or self.prepared is not None:
            return
        self.prepared = []

        profile = self.backend.profile()
        variants = [self.pack.variants[v] for v in self.selected
                    if v in self.plan and not profile.unsupported_reason(self.pack.variants[v].requirements)]
        t0 = time.perf_counter()
        try:
            self.backend.prepare(variants)
        except BackendError:
            pass  # each variant's own dispatch reports what is wrong with it
        self.prepared = [("prepared", str(len(variants))), ("prepare_s", f"{time.perf_counter() - t0:.3f}")]

    def _run_variant(self, variant_id: str, names: list[str]) -> None:
        """One run_pack over the selected cases of one variant (batched, bisected)."""
        from ctsgen.results.ci import unexpected_failure  # local: startup
        from ctsgen.results.expectations import Expectations  # local: startup
        from ctsgen.runner.flakes import run_with_retries  # local: startup

        self._prepare_once()
        wanted = set(names)
        sub = dataclasses.replace(self.pack, cases=[c for c in self.pack.cases if c.name in wanted])
        options = RunOptions(batch_size=self.config.getoption("ctsgen_batch_size"),
                             timeout_base_s=self.config.getoption("ctsgen_timeout"),
                             expect_deviations=self.deviations,
                             explain_deviations=tuple(self.expected.deviations) if self.expected else ())
        def keep(result: CaseResult) -> None:
            self.verdicts[result.name] = result

        expected = self.expected or Expectations()
        run_with_retries(sub, self.backend, keep, options, self.config.getoption("ctsgen_flake_retries"),
                         lambda r: unexpected_failure(r, expected))


def _deviations(names: list[str] | None) -> tuple[str, ...]:
    """``--ctsgen-expect-deviation`` names, checked against the mutant catalogue (a usage error)."""
    if not names:
        return ()
    from ctsgen.mutants.deviations import check_deviations  # local: startup (imports the families: only when asked)

    try:
        return check_deviations(names)
    except CtsgenError as exc:
        raise pytest.UsageError(f"--ctsgen-expect-deviation: {exc}") from None


def _expectations(config: pytest.Config) -> Expectations | None:
    """The ``--ctsgen-baseline/--ctsgen-flakes/--ctsgen-skips`` files, with ``--ctsgen-improvements-pass``
    (None: no file given); a bad one is a usage error."""
    names = [config.getoption(f"ctsgen_{o}") or [] for o in ("baseline", "flakes", "skips")]
    _not_the_junit_file(config, {"--ctsgen-baseline": names[0], "--ctsgen-flakes": names[1], "--ctsgen-skips": names[2],
                                 "--ctsgen-caselist": config.getoption("ctsgen_caselist") or []})
    if not any(names) and not config.getoption("ctsgen_improvements_pass"):
        return None
    from ctsgen.results.expectations import load_expectations  # local: startup

    try:
        return load_expectations(*names, improvements_pass=config.getoption("ctsgen_improvements_pass"))
    except CtsgenError as exc:
        raise pytest.UsageError(f"ctsgen: error: {exc}") from None


def _not_the_junit_file(config: pytest.Config, inputs: dict[str, list[str]]) -> None:
    """Refuse an input file that is also ``--junitxml``: pytest would replace the baseline with the
    report of the run it feeds (docs/ci.md, "A baseline is never an output of the run it feeds")."""
    xml = getattr(config.option, "xmlpath", None)
    for flag, paths in inputs.items():
        for given in paths if xml else ():
            if os.path.realpath(given) == os.path.realpath(xml):
                raise pytest.UsageError(f"ctsgen: error: {flag} {given} is also --junitxml, which pytest replaces "
                                        "with its report -> write the report to a file of its own")


def _worker_device(devices: str | None, worker: str | None) -> int | None:
    """The device of xdist worker ``worker`` ("gw3") from ``--ctsgen-devices`` ("0,1"); None without either."""
    if not devices:
        return None
    try:
        ids = [int(d) for d in devices.split(",")]
        if min(ids) < 0:  # a device number counts from 0 (VkPhysicalDevice order)
            raise ValueError(devices)
    except ValueError:
        raise pytest.UsageError(f"--ctsgen-devices {devices!r}: expected device numbers, e.g. 0,1") from None
    k = int(worker[2:]) if worker and worker.startswith("gw") else 0
    return ids[k % len(ids)]


def pytest_configure(config: pytest.Config) -> None:
    state = _PackState(config)
    config.stash[_STATE] = state
    if state.pack is None:
        return
    config.pluginmanager.register(_JunitClassnames(config, state), "ctsgen-junit-classnames")
    if getattr(config.option, "dist", "no") in ("load", "loadgroup"):  # whole variants, planned up front
        state.partition = True
    manifest = str(state.pack.root.resolve() / "manifest.json")
    if config.args_source is not pytest.Config.ArgsSource.ARGS:  # testpaths / cwd: only the pack
        config.args = [manifest]
    elif manifest not in config.args:
        config.args.append(manifest)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist, on the controller: under VariantScheduling, tell each worker its slot
    in the plan (initial workers 0..N-1 in order; a replacement for a crashed worker
    gets a slot past the plan)."""
    state = node.config.stash[_STATE]
    if state.partition:
        node.workerinput[SLOT_KEY] = state.next_slot
        state.next_slot += 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist, on the controller: plan whole variants per worker (when -n chose the scheduling)."""
    if config.stash[_STATE].partition:
        return VariantScheduling(config, config.stash[_STATE].group_of, log)
    return None


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

    def runtest(self) -> None:
        state = self.config.stash[_STATE]
        profile = state.backend.profile()
        self.user_properties += [("device", profile.name), ("driver", profile.driver or "none reported")]
        if state.device is not None:
            self.user_properties.append(("device_index", str(state.device)))
        if state.worker is not None:
            self.user_properties.append(("worker", state.worker))
        result = state.verdict(self.name, self.variant_id)
        if state.prepared:  # the first item of this process reports the up-front build
            self.user_properties += state.prepared
            state.prepared = []
        apply_verdict(result, state.expected)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        if isinstance(excinfo.value, CtsgenError):  # e.g. a backend that cannot be opened
            return f"ctsgen: error: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.name} [{self.config.getoption('ctsgen_backend')}]"


class MissingItem(pytest.Item):
    """A name ``--ctsgen-caselist`` gives that the pack lacks: a failure, deqp-runner's Missing (docs/ci.md)."""

    def runtest(self) -> None:
        raise CaseFailed(f"Missing: {self.name} is listed in --ctsgen-caselist but the pack has no such case")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value) if isinstance(excinfo.value, CaseFailed) else super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.name} [Missing]"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the cases ``--ctsgen-include/-exclude/-caselist/-fraction/-skips`` leave out, as
    ``ctsgen run`` does (the same :func:`~ctsgen.runner.select.select_cases`)."""
    state = config.stash[_STATE]
    opt = config.getoption
    if state.pack is None or not (opt("ctsgen_include") or opt("ctsgen_exclude") or opt("ctsgen_caselist")
                                  or opt("ctsgen_fraction") > 1 or (state.expected and state.expected.skips)):
        return

    selection = Selection(opt("ctsgen_include"), opt("ctsgen_exclude"), opt("ctsgen_caselist"), opt("ctsgen_fraction"),
                          opt("ctsgen_fraction_start"), state.expected.is_skipped if state.expected else
                          (lambda name: False))
    try:
        picked = select_cases(state.pack.cases, selection)
    except CtsgenError as exc:
        raise pytest.UsageError(f"ctsgen: error: {exc}") from None
    keep = {c.name for c in picked.cases}
    manifest = next((i.parent for i in items if isinstance(i, CaseItem)), None)
    dropped = [i for i in items if isinstance(i, CaseItem) and i.name not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if not (isinstance(i, CaseItem) and i.name not in keep)]
    if manifest is not None:
        items += [MissingItem.from_parent(manifest, name=name) for name in picked.missing]


class _JunitClassnames:
    """JUnit XML (``--junitxml``, on the process that writes it): a case's classname is its name
    without the last part, its family and group, instead of the manifest's path."""

    def __init__(self, config: pytest.Config, state: _PackState) -> None:
        self.config, self.state = config, state

    @pytest.hookimpl(tryfirst=True)  # before junitxml's own hook, which ends the testcase at teardown
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        xml = self.config.stash.get(xml_key, None)
        name = report.nodeid.rsplit("::", 1)[-1]
        if xml is not None and name in self.state.variant_of and "." in name:
            xml.node_reporter(report).add_attribute("classname", name.rsplit(".", 1)[0])


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember which cases of each variant survived selection (-k, -m, deselect), and
    plan which pipelines to build up front: all of them in one process; under
    VariantScheduling, those of the variants :func:`assign_groups` gives this
    worker's slot, computed from the same node ids the controller plans with."""
    state = session.config.stash[_STATE]
    cases = [item for item in session.items if isinstance(item, CaseItem)]
    for item in cases:
        state.selected.setdefault(item.variant_id, []).append(item.name)
    if state.worker is None:
        state.plan = set(state.selected)
    elif state.slot is not None and state.slot < state.workers:
        plan = assign_groups([item.nodeid for item in session.items], state.workers, state.group_of)
        state.plan = {item.variant_id for item in cases if plan[state.group_of(item.nodeid)] == state.slot}


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
