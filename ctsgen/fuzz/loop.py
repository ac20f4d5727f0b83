"""The fuzz loop: each Hypothesis example is a batch of cases sharing one shader.

An example draws a family, a shader variant of it, then 1..``max_batch``
cases of that variant, runs them in one dispatch, and judges each case
with the same rules as ``ctsgen run``. Each case after the first is drawn
as one unit with a "one more?" choice that rarely stops the batch
(``st.lists`` would stop after about 6 cases whatever its bound), so one
compiled shader checks about 50 cases (at least ``min_batch`` once there is
more than one, where each shader costs a pipeline build); the shrinker deletes any case (its
unit) or ends the batch early (a choice at its minimum), so shrinking
still ends on a single case. The cases sit inside a one-element unique
list, which keeps Hypothesis's mutator from replaying a batch with one case
copied over another (:func:`_case_batch`): each example draws a new
variant. Where ``min_batch`` > 1 a
family's floor grows, round by round, with what its pipelines have cost (:meth:`Fuzzer.floor`),
so an expensive pipeline serves more cases. Cases that come out identical are judged once. Any failure (a wrong element, a
hang, a lost device, a crash of the supervised worker) fails the example,
and Hypothesis shrinks it: to one case, then toward the smallest readable
one (the family strategies decide what "small" means: fewer elements,
smaller dims, blockSize 1, simplest clamp mode, iota data). The minimal
case is exported as a standalone repro.

A family that declares ``bulk_draws`` (FamilySpec) has only the first :data:`FULL_CASES` cases
of a batch drawn by Hypothesis; the rest are its same case strategy walked without Hypothesis from a seed
Hypothesis draws (:mod:`ctsgen.strategies.bulk`), each case's choices recorded. A failing bulk
case ends the round unshrunk (:class:`Reexpress`); the next round replays it first as the one-case
batch Hypothesis would have drawn (the batch's own family and variant choices, then the case's
recorded ones) and shrinks that as any failure (:meth:`Fuzzer.run`).

Failing examples are saved in a Hypothesis example database (a directory,
``.ctsgen/fuzz-db`` by default, or ``redis://host:port`` to share one
between machines) and replayed first on the next run with the same
families and backend.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase, InMemoryExampleDatabase, MultiplexedDatabase
from hypothesis.errors import Flaky

from ctsgen.backends.base import Backend, as_backend
from ctsgen.backends.registry import capabilities
from ctsgen.core.shader import ShaderVariant
from ctsgen.device.profile import DeviceProfile, drawing_profile
from ctsgen.errors import UserError
from ctsgen.families import DEFAULT_FAMILY, get_family
from ctsgen.core.family import Case, Family, StrategyOptions, Variant
from ctsgen.families.gating import families_it_runs, omitted, split_runnable
from ctsgen.mutants.deviations import check_deviations, data_under, moved, reaching, spec_and_under
from ctsgen.fuzz.buckets import RouteBuckets, case_size
from ctsgen.fuzz.database import WriteOnlyDatabase, open_database
from ctsgen.execute.judge import judge, output_buffers
from ctsgen.execute.run import drawn, drawn_cases, run_cases
from ctsgen.runner.options import RunOptions
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.strategies.bulk import BulkDraw
from ctsgen.strategies.cached import SEEDS
from ctsgen.strategies.hypothesis_reach import (bulk_draws_reachable, choices_left, drawn_choices,
                                                end_as_overrun, pinned_constants, save_for_shrinking,
                                                set_database_key)
from ctsgen.timing import Breakdown
from ctsgen.toolchain.routes import DEFAULT_ROUTE, Route, RouteRefusedError, ToolchainFinding, check_available, get_route
from ctsgen.toolchain.variants import compile_variant, route_refusal


@dataclass
class FuzzOptions:
    families: tuple[str, ...] = (DEFAULT_FAMILY,)
    max_examples: int = 200
    time_s: float | None = None  # keep drawing fresh examples until this many seconds have passed
    seed: int = 0
    max_batch: int = 256
    min_batch: int = 1  # cases an example has at least once it has more than one (see _case_batch)
    database: str | ExampleDatabase | None = ".ctsgen/fuzz-db"  # a spec for open_database, or an open one
    expect_deviations: tuple[str, ...] = ()
    include_hazardous: bool = False
    shrink_time_s: float = 120.0  # after the first failure, stop shrinking after this long
    keep_going: bool = False  # after a failure, record it and fuzz on (with --time) in fresh rounds
    #: compiler routes (:mod:`ctsgen.toolchain.routes`): each example runs along every one, the first as the
    #: baseline; a case that passes along one and fails along another is a route finding
    routes: tuple[str, ...] = (DEFAULT_ROUTE,)
    run: RunOptions = field(default_factory=RunOptions)


#: ``--min-batch`` on a backend that builds a pipeline per variant (see :func:`_case_batch`): enough
#: cases an example that each build serves many, so that workers do not spend most of their time
#: waiting for builds (docs/validation.md, "Fuzz rate and CTS-scale packs on the H100").
DEVICE_MIN_BATCH = 128


#: The build cost an example's pipeline may have at the ``--min-batch`` floor: a family whose builds
#: average more (per example, cache hits included) gets a floor that many times higher, up to its
#: largest batch, so that an expensive pipeline serves more cases (:meth:`Fuzzer.floor`).
PIPELINE_REF_S = 0.1
#: Weight of the latest example in a family's running mean build cost.
BUILD_EMA = 0.2


def built_s(times: Breakdown) -> float:
    """Seconds spent getting pipelines so far: the build and pipeline stages, and builds that ran ahead."""
    return times.seconds.get("build", 0.0) + times.seconds.get("pipeline", 0.0) + times.overlapped_s


def default_min_batch(backend: str) -> int:
    """``--min-batch`` when not given: 1 on a backend whose "pipeline" costs nothing (the reference
    and its mutants: many small batches there mean more variants a second), else DEVICE_MIN_BATCH."""
    return 1 if capabilities(backend).host_pipelines else DEVICE_MIN_BATCH


@dataclass
class FuzzReport:
    examples: int = 0
    cases: int = 0
    wall_s: float = 0.0
    first_failure_example: int | None = None  # 1-based index of the first failing example
    first_failure_s: float | None = None  # seconds from the run's start to the first failure's verdict
    case: Case | None = None  # the minimal failing case, after shrinking
    result: CaseResult | None = None
    failures: list[tuple[Case, CaseResult]] = field(default_factory=list)  # every failure, with keep_going
    #: failures that did not recur when Hypothesis replayed them: flakes (deqp-runner's Flake), not bugs
    flakes: list[tuple[Case, CaseResult]] = field(default_factory=list)
    times: Breakdown = field(default_factory=Breakdown)  # where the time went, per stage
    skipped: dict[str, str] = field(default_factory=dict)  # family -> why the device runs none of it
    #: expectations that absorbed failures: ``deviation:NAME`` -> cases that fail by the spec and pass under
    #: the expected deviation; what ``known`` passed over is counted by its caller
    absorbed: Counter = field(default_factory=Counter)
    route_findings: RouteBuckets = field(default_factory=RouteBuckets)
    #: (route, variant id) -> the finding: a module a route made that the validator rejects, or a failing optimizer
    toolchain_findings: dict[tuple[str, str], ToolchainFinding] = field(default_factory=dict)
    route_cases: Counter = field(default_factory=Counter)  # route -> cases run along it
    route_skips: dict[str, str] = field(default_factory=dict)  # "ROUTE FAMILY" -> why the route skips the family

    @property
    def cases_per_s(self) -> float:
        return self.cases / self.wall_s if self.wall_s else 0.0


def runnable_families(asked: list[Family], profile: DeviceProfile, backend: str
                      ) -> tuple[list[Family], dict[str, str]]:
    """The families of ``asked`` the device can run, and why it runs none of each other one
    (``Family.needs``). Raises :class:`UserError` when it runs none of them."""
    kept, skipped = split_runnable(asked, profile)
    if not kept:
        why = "; ".join(f"{name}: {reason}" for name, reason in skipped.items())
        can = families_it_runs(profile)
        raise UserError(f"the {backend} backend's device ({profile.name}) runs none of the families asked for "
                        f"({why}) -> choose a family it runs: {', '.join(can) or 'none'}")
    return kept, skipped


class StopFuzzing(BaseException):
    """Raised through Hypothesis (a BaseException, so it is not a test failure)
    to end a run: the shrink budget is spent, or the process was told to stop."""


class FuzzFailure(AssertionError):
    """One case of a batch failed; carries the case and its verdict."""

    def __init__(self, case: Case, result: CaseResult, alone: bool = True) -> None:
        super().__init__(f"{result.status.value}: {case.name()}: {result.detail}")
        #: ``alone``: False where no failing case of the batch failed when run by itself
        self.case, self.result, self.alone = case, result, alone


class Reexpress(BaseException):
    """A case drawn in bulk failed: ends the round (a BaseException, so Hypothesis does not shrink
    a batch whose failing case its choices do not hold) with the Hypothesis choices of that case
    as a one-case batch, for :meth:`Fuzzer.run` to replay and shrink."""

    def __init__(self, failure: FuzzFailure, choices: tuple) -> None:
        super().__init__(str(failure))
        self.failure, self.choices = failure, choices


class Fuzzer:
    """Runs Hypothesis against one backend (see the module docstring)."""

    def __init__(self, backend: Backend, options: FuzzOptions,
                 progress: Callable[[FuzzReport], None] | None = None,
                 on_failure: Callable[[FuzzFailure], None] | None = None,
                 known: Callable[[FuzzFailure], bool] | None = None) -> None:
        """``known(failure)`` True: a failure already accounted for (a campaign's bucket
        with an exact explanation): it is counted there and the example passes."""
        self.backend, self.options, self.progress = as_backend(backend), options, progress
        self.on_failure, self.known = on_failure, known
        self.report = FuzzReport()
        self._database: ExampleDatabase | None = None
        self._first_failure_at: float | None = None
        self._run_started = time.monotonic()  # run() sets it again: time_s and wall_s count from there
        self._smallest: FuzzFailure | None = None  # the smallest failure seen, if shrinking is cut short
        check_deviations(options.expect_deviations)  # an unknown name: one line now, not a failing example
        self.profile: DeviceProfile = drawing_profile(backend.profile())
        self.families, self.report.skipped = runnable_families(
            [get_family(f) for f in options.families], self.profile, self.backend.name)
        self.strategy_options = StrategyOptions(profile=self.profile, include_hazardous=options.include_hazardous)
        self.routes: list[Route] = [get_route(r) for r in options.routes]  # an unknown one: one line, exit 2
        check_available(self.routes)
        if len(self.routes) == 1:  # a lone route must take every family asked (several: each skips what it refuses)
            for f in self.families:
                why = route_refusal(self.routes[0], f)
                if why is not None:
                    raise UserError(f"{f.name}: {why} -> fuzz {f.name} along another --route")
        self._shaders: dict[tuple[str, str], ShaderVariant | None] = {}
        self._check_ended: float | None = None  # perf_counter when the last check ended
        self._stop_requested = False  # request_stop(): end at the next example
        self._shrinking = False  # a failure of this round was raised to Hypothesis: it is shrinking
        #: family -> running mean pipeline seconds per example (learn_build; a campaign shares it between rounds)
        self.build_s: dict[str, float] = {}

    def omissions(self) -> list[str]:
        """``FAMILY: what it leaves out`` for each family fuzzed that runs only in part on the device."""
        return [f"{f.name}: {why}" for f in self.families if (why := omitted(f, self.profile))]

    # -- strategies ------------------------------------------------------
    def batches(self) -> st.SearchStrategy[tuple[Variant, list[Case]]]:
        """A family, a variant of it, then 1..max_batch cases of that variant (see the module docstring)."""
        opts = self.strategy_options
        most = {f.name: min(self.options.max_batch, f.batch_cap or self.options.max_batch) for f in self.families}
        least = {f.name: self.floor(f.name, most[f.name]) for f in self.families}  # fixed for the round
        bulk_reachable = bulk_draws_reachable()  # else every case is a Hypothesis draw

        @st.composite
        def batch(draw: st.DrawFn) -> tuple[Variant, list[Case]]:
            fam = draw(st.sampled_from(self.families))
            v = draw(fam.variants(opts))
            (cases,) = draw(_case_batch(fam.cases_for(v, opts), least[fam.name], most[fam.name],
                                        fam.bulk_draws and bulk_reachable))  # a list of one batch
            return v, cases

        return batch()

    def shader(self, v: Variant, family: str, route: Route | None = None) -> ShaderVariant | None:
        """The compiled variant of ``family`` along ``route`` (default: the first of the run's),
        compiled and validated once per process; the backend starts building the pipeline of one
        the device supports at once (``prepare_soon``), so the build overlaps the batch's data and
        oracle. None where the route made a toolchain finding of it (recorded in the report) or
        cannot take the family (its reason recorded); the default route's errors are raised.

        Validation is ``in-process`` (:data:`ctsgen.toolchain.variants.Validation`): the
        glslang library's SPIRV-Tools, not a ``spirv-val`` subprocess per shader.
        """
        route = route or self.routes[0]
        key = (route.name, v.id)
        if key not in self._shaders:
            try:
                sv = compile_variant(v, family, validation="in-process", times=self.report.times, route=route,
                                     validator=get_family(family).validator)
            except ToolchainFinding as finding:
                self.report.toolchain_findings.setdefault((route.name, v.id), finding)
                sv = None
            except RouteRefusedError as exc:
                self.report.route_skips.setdefault(f"{route.name} {family}", str(exc))
                sv = None
            self._shaders[key] = sv
            if sv is not None and self.profile.unsupported_reason(sv.requirements) is None:
                self.backend.prepare_soon([sv])
        return self._shaders[key]

    # -- one example -------------------------------------------------------
    def request_stop(self) -> None:
        """End the run at the next example, as an interrupt does (for a signal handler, which
        also raises KeyboardInterrupt: an interrupt raised inside a ctypes callback, such as
        glslang's output callbacks, is printed and dropped, and the run would go on)."""
        self._stop_requested = True

    def check(self, batch: tuple[Variant, list[Case]]) -> None:
        """Run one batch; raise FuzzFailure for the first failing case."""
        if self._stop_requested:
            raise KeyboardInterrupt
        if self._first_failure_at is not None and \
                time.monotonic() - self._first_failure_at > self.options.shrink_time_s:
            raise StopFuzzing("shrink budget spent")
        if self._first_failure_at is None and self.options.time_s is not None and \
                time.monotonic() - self._run_started >= self.options.time_s:
            raise StopFuzzing("time budget spent")  # a round of many examples ends on time, not on its count
        times = self.report.times
        if self._check_ended is not None:  # Hypothesis drew this example since the last check ended
            times.add("draw", time.perf_counter() - self._check_ended)
        try:
            self._check(batch)
        finally:
            self._check_ended = time.perf_counter()

    def _check(self, batch: tuple[Variant, list[Case]]) -> None:
        variant, batch_cases = batch
        named: dict[str, Case] = {}
        for c in batch_cases:  # an identical case is judged once, as the first of them (Hypothesis's, if any)
            named.setdefault(c.name(), c)
        cases, names = list(named.values()), list(named)
        sv = self.shader(variant, cases[0].family)
        assume(sv is not None and self.profile.unsupported_reason(sv.requirements) is None)
        self.report.examples += 1
        times = self.report.times
        with times.stage("data+oracle"):
            family = get_family(cases[0].family)
            # the spec case's inputs; a documented deviation changes only what they must give
            deviations = reaching(self.options.expect_deviations, sv)
            spec, datas = spec_and_under(family, cases, deviations)
        self.report.cases += len(cases)
        buffers = [b.name for b in sv.buffers]
        inputs = drawn_cases(cases, datas, names)

        def absorbed(i: int, r: CaseResult, outputs: list) -> CaseResult:
            """Count a case the expected deviations let pass that fails by the spec (judged without
            locating its mismatches: only whether it fails counts)."""
            if not r.status.is_failure and moved(spec[i], datas[i]) and judge(
                    names[i], output_buffers(buffers, outputs, spec[i].expected, spec[i].tolerance),
                    inputs[i].rule).status.is_failure:
                self.report.absorbed["+".join(f"deviation:{d}" for d in deviations)] += 1
            return r

        times.count(len(cases))
        built = built_s(times)
        results = run_cases(self.backend, sv, inputs, self.options.run.timeout_for(len(cases)), times,
                            absorbed if deviations else None).results
        built = built_s(times) - built
        self.report.route_cases[self.routes[0].name] += len(cases)
        for route in self.routes[1:]:
            self._along(route, variant, cases, (names, deviations, inputs), results)
        # while Hypothesis shrinks, only the cases it drew can fail: a bulk case's failure is not in
        # the choices it shrinks, so a "smaller" example failing in bulk would end it unshrunk
        bulk = batch_cases.replay if isinstance(batch_cases, DrawnBatch) and self._shrinking else None
        failure = self._culprit(sv, cases, datas, results, None if bulk is None else lambda c: bulk(c) is None)
        if failure is not None and self.known is not None and self.known(failure):
            failure = None
        self.learn_build(family.name, built)
        if self.progress:
            self.progress(self.report)
        if failure is not None:
            if self._first_failure_at is None:  # this round's first: its shrink budget starts now
                self._first_failure_at = time.monotonic()
            if self.report.first_failure_example is None:
                self.report.first_failure_example = self.report.examples
                self.report.first_failure_s = self._first_failure_at - self._run_started
                if self.on_failure:
                    self.on_failure(failure)
            if self._smallest is None or case_size(failure.case) < case_size(self._smallest.case):
                self._smallest = failure
            replay = batch_cases.replay(failure.case) if isinstance(batch_cases, DrawnBatch) else None
            if replay is not None and not self._shrinking:  # while shrinking, Hypothesis's own failure stands
                raise Reexpress(failure, replay)
            raise failure

    def _along(self, route: Route, variant: Variant, cases: list[Case],
               judged_as: tuple[list[str], tuple[str, ...], list], baseline: list[CaseResult]) -> None:
        """Run the batch again along ``route`` and bucket each case whose verdict's failing or not
        differs from the baseline route's (a route finding: both verdicts kept). At most
        :data:`ISOLATION_TRIES` disagreements of a batch are bucketed (each needs the case's
        signature); every one is counted. ``judged_as``: the cases' names, the expected deviations
        that reached the baseline route's module and the inputs judged by them; a route whose module
        an expected deviation reaches otherwise (``Mutant.shows_in``) has its cases judged again."""
        sv = self.shader(variant, cases[0].family, route)
        if sv is None or self.profile.unsupported_reason(sv.requirements) is not None:
            return
        names, deviations, inputs = judged_as
        here = reaching(self.options.expect_deviations, sv)
        if here != deviations:
            inputs = drawn_cases(cases, data_under(get_family(cases[0].family), cases, here), names)
        results = run_cases(self.backend, sv, inputs, self.options.run.timeout_for(len(cases)),
                            self.report.times).results
        self.report.route_cases[route.name] += len(cases)
        base = self.routes[0].name
        differ = [i for i, (a, b) in enumerate(zip(baseline, results)) if a.status.is_failure != b.status.is_failure]
        for i in differ[:ISOLATION_TRIES]:
            failing, passing = ((route.name, results[i]), (base, baseline[i])) if results[i].status.is_failure \
                else ((base, baseline[i]), (route.name, results[i]))
            self.report.route_findings.add(cases[i], failing, passing)

    def learn_build(self, family: str, seconds: float) -> None:
        """Add an example's pipeline seconds (cache hits included) to ``family``'s running mean."""
        self.build_s[family] = (1 - BUILD_EMA) * self.build_s.get(family, seconds) + BUILD_EMA * seconds

    def floor(self, family: str, most: int) -> int:
        """``family``'s batch floor for the next round, sized by what its pipelines cost: ``min_batch``
        times its mean build seconds per example over :data:`PIPELINE_REF_S`, never below ``min_batch``
        nor above ``most``. Only where ``min_batch`` > 1 (a backend whose pipelines cost builds; the
        reference's batches stay as drawn). Fixed for a round, so that Hypothesis reads a choice
        sequence as the same batch whenever it replays it; a shrunk example is one case whatever
        the floor (its first choice), so the database replays it alike."""
        least = min(self.options.min_batch, most)
        if least <= 1:
            return least
        return min(most, max(least, round(least * self.build_s.get(family, 0.0) / PIPELINE_REF_S)))

    def _culprit(self, sv: ShaderVariant, cases: list[Case], datas: list, results: list[CaseResult],
                 counts: Callable[[Case], bool] | None = None) -> FuzzFailure | None:
        """The failure to report for a batch: the first failing case that also fails alone.

        Cases of a batch share the dispatch's buffers, so a fault in one case (a store
        written out of bounds) can show up as wrong elements of its neighbour. A failing
        case is run again by itself (at most :data:`ISOLATION_TRIES` of them) and the first
        that still fails is the culprit; if none does, the batch's first failure stands
        (the fault needs the cases together). A BuildTimeout is the variant's build, not a case's:
        no case is run again (each would wait out the build budget again). ``counts``: only the
        cases it holds true of can fail (the others' failures are passed over)."""
        failing = [i for i, r in enumerate(results) if r.status.is_failure and (counts is None or counts(cases[i]))]
        if not failing:
            return None
        if len(cases) > 1 and results[failing[0]].status is not Status.BuildTimeout:  # a build is the variant's
            for i in failing[:ISOLATION_TRIES]:
                alone = run_cases(self.backend, sv, [drawn(cases[i], datas[i])], self.options.run.timeout_for(1),
                                  self.report.times).results[0]
                if alone.status.is_failure:
                    return FuzzFailure(cases[i], alone)
        return FuzzFailure(cases[failing[0]], results[failing[0]], alone=len(cases) == 1)

    # -- the whole run -----------------------------------------------------
    def run(self) -> FuzzReport:
        """Fuzz until a failure (shrunk to its minimal case) or the budget is spent."""
        self._run_started = time.monotonic()
        round_no = 0
        use_database = True
        try:
            while True:
                try:
                    self._round_replaying(self.options.seed + round_no, use_database)
                except FuzzFailure as final:  # Hypothesis re-raises the minimal example's failure last
                    self._record(final.case, final.result)
                    if not self.options.keep_going:
                        break
                    use_database = False  # a stored failure would replay at once in every new round: later
                    # rounds only save to the database
                    self._first_failure_at = self._smallest = None
                except (StopFuzzing, Flaky) as stop:  # shrink budget spent: keep the smallest failure seen;
                    # or it did not recur when Hypothesis replayed it (a dispatch that hung once): a flake
                    if self._smallest is not None and isinstance(stop, Flaky):
                        self.report.flakes.append((self._smallest.case, self._smallest.result))
                    elif self._smallest is not None:
                        self._record(self._smallest.case, self._smallest.result)
                    if not self.options.keep_going:
                        break
                    use_database = False
                    self._first_failure_at = self._smallest = None
                round_no += 1
                if self.options.time_s is None or time.monotonic() - self._run_started >= self.options.time_s:
                    break
        except KeyboardInterrupt:  # told to stop: report what there is
            if self._smallest is not None:
                self._record(self._smallest.case, self._smallest.result)
        self.report.wall_s = time.monotonic() - self._run_started
        return self.report

    def _round_replaying(self, round_seed: int, use_database: bool) -> None:
        """One round; where a bulk case fails (:class:`Reexpress`), a second round that replays it
        first, as the one-case batch of the choices it recorded, then shrinks it. Where the replay
        passes: a case that had failed by itself did not recur (a flake, raised as Hypothesis's
        :class:`Flaky` is); a fault that needs the batch's other cases stands unshrunk."""
        try:
            self._one_round(round_seed, use_database)
        except Reexpress as bulk:
            self._one_round(round_seed, use_database, replay=bulk.choices)
            if bulk.failure.alone:
                raise Flaky(f"{bulk.failure} did not recur when replayed") from None
            raise bulk.failure from None

    def _record(self, case: Case, result: CaseResult) -> None:
        self.report.failures.append((case, result))
        if self.report.case is None:
            self.report.case, self.report.result = case, result

    def _one_round(self, round_seed: int, use_database: bool = True, replay: tuple | None = None) -> None:
        """One Hypothesis run of up to ``max_examples`` examples. ``replay``: the choices of a bulk
        case's one-case batch (:class:`Reexpress`), replayed first from a database of its own beside
        the run's (Hypothesis's reuse phase, which extends a short choice sequence:
        :func:`~ctsgen.strategies.hypothesis_reach.save_for_shrinking`), then shrunk; no new
        examples are drawn."""
        if self._database is None:  # opened once: a shared database that went away stays replaced
            spec = self.options.database
            self._database = spec if isinstance(spec, ExampleDatabase) else open_database(spec)
        db = self._database if use_database or self._database is None else WriteOnlyDatabase(self._database)
        # Hypothesis's own key digests this function's source, the same whatever is fuzzed; this
        # one (what is fuzzed, on which backend, along which routes) lets a rerun replay the failures
        # stored for it first.
        key = repr((sorted(f.name for f in self.families), self.backend.name, self.options.include_hazardous)
                   + ((tuple(self.options.routes),) if list(self.options.routes) != [DEFAULT_ROUTE] else ()))
        digest = hashlib.sha256(key.encode()).digest()
        phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink]
        if replay is not None:
            # replayed first and shrunk (not reported as it is, as a failure already minimal would be)
            first = InMemoryExampleDatabase()
            save_for_shrinking(first, digest, replay)
            db = first if db is None else MultiplexedDatabase(first, WriteOnlyDatabase(db))
            phases = [Phase.reuse, Phase.shrink]
        self._check_ended = time.perf_counter()  # the first example's draw starts now
        self._shrinking = False

        @settings(database=db, max_examples=self.options.max_examples, deadline=None,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False, phases=phases)
        @seed(round_seed)
        @given(self.batches())
        def fuzz(batch: tuple[Variant, list[Case]]) -> None:
            try:
                self.check(batch)
            except FuzzFailure:
                self._shrinking = True
                raise

        set_database_key(fuzz, digest)
        with pinned_constants():  # a seed draws the same examples whatever else is imported
            fuzz()


#: "one more case?": 0 of 0..255 stops the batch (and is where the shrinker takes it). Hypothesis
#: draws a range's bounds far more often than uniformly, so batches average about 50 cases: enough
#: to amortise the per-example work, few enough that shrinking a batch to one case stays fast.
_MORE = st.integers(0, 255)

#: failing cases of a batch re-run alone, in order, to find one that fails by itself
ISOLATION_TRIES = 4


#: where a family draws in bulk, the cases of a batch Hypothesis draws in full (the first, then up
#: to this many in all): the edges of its strategy and the shrinker's starting points live in them
FULL_CASES = 3
#: where a family draws in bulk, each case after the full ones stops the batch with this chance:
#: what a "one more?" of :data:`_MORE` reads as 0 (Hypothesis draws 0 of 0..255 with weight 2/128,
#: and every value with (1 - 6/128)/256 more), so batches keep the size they have when every case
#: is drawn by Hypothesis
BULK_STOP = 2 / 128 + (1 - 6 / 128) / 256


class DrawnBatch(list):
    """The cases of a batch, with what re-expresses each bulk-drawn one as Hypothesis choices:
    ``prefix``, the example's choices before the batch's (its family and variant), and
    ``bulk``, the choices each of the last ``len(bulk)`` cases' strategy recorded (:class:`BulkDraw`)."""

    def __init__(self, cases: list[Case], prefix: tuple = (), bulk: list[tuple] | None = None) -> None:
        super().__init__(cases)
        self.prefix, self.bulk = prefix, bulk or []

    def replay(self, case: Case) -> tuple | None:
        """The choices of the one-case batch of ``case`` (this very object) where it was drawn in
        bulk, else None: ``prefix``, "no more" (0), the case's choices."""
        drawn = self[len(self) - len(self.bulk):]
        at = next((i for i, c in enumerate(drawn) if c is case), None)
        return None if at is None else (*self.prefix, 0, *self.bulk[at])


def _case_batch(cases: st.SearchStrategy[Case], min_batch: int, max_batch: int, bulk: bool = False
                ) -> st.SearchStrategy[list[list[Case]]]:
    """1 or min_batch..max_batch cases, drawn as the one element of a unique list: a "more than
    one?" choice (:data:`_MORE` not 0), the first case, then units of one more case and its own
    "another?", which ends the batch only once it has ``min_batch`` cases.

    ``min_batch`` is for backends where each compiled variant costs a pipeline build (a GPU
    driver: tens of milliseconds to seconds per variant, docs/validation.md, "Fuzz rate and
    CTS-scale packs on the H100"): a few dozen cases a variant leave such a fuzzer waiting for
    builds most of its time; hundreds amortise them. The shrinker still ends
    a batch at one case (the first choice at 0) and deletes units, down to ``min_batch``.

    Hypothesis's generator follows each new example with up to six mutations that copy a span
    over another span of the same label, except inside a unique collection. Without the
    wrapper every batch offers ~50 same-label case spans, so about five of six examples were
    the previous batch with one case copied over another: the same variant and ~49 cases judged
    before, and a new variant only every ~6 examples (coopvec-elementwise-vts-drops-last, which
    needs a VectorTimesScalar variant, went from ~85 examples to kill to ~850). Inside the
    wrapper only the family and variant choices are mutated, which draws a new variant, as
    ``st.lists(..., unique_by=...)`` batches did before batches grew to ~50 cases.

    The "more than one?" choice comes first because Hypothesis's early size probes (a new
    variant with the "simplest" continuation) enumerate 0, 1, 2, ... choice by choice inside a
    unique collection instead of repeating the minimum. A stop choice after the first case reads
    "go on" there, so every probe was a ~200-case batch, and its size let the example drawn
    next from the same prefix run too, reusing the probe's variant (coopvec-bias-ignored, which
    needs one operation, took twice as many examples). The first choice still reads 0: a probe
    is one case of a new variant, as without the wrapper. The shrinker ends a batch by setting
    that first choice to 0.

    ``bulk`` (the family's ``bulk_draws``): once :data:`FULL_CASES` cases are drawn and the batch
    goes on, a seed (one choice) and the rest of the batch from it, the case strategy walked by
    a seeded generator (:class:`BulkDraw`), as many as the "one more?" chain would have drawn
    (:data:`BULK_STOP`), within ``min_batch``..``max_batch``."""
    # no .map: Hypothesis prints a lambda's call
    return st.lists(_batch_run(cases, min_batch, max_batch, bulk), min_size=1, max_size=1, unique_by=len)


# Module-level composites, called with arguments: ``@st.composite`` on a function defined per
# example reads that function's source each time (about 1 ms an example, bench/throughput.py).
@st.composite
def _batch_run(draw: st.DrawFn, cases: st.SearchStrategy[Case], min_batch: int, max_batch: int,
               bulk: bool = False) -> list[Case]:
    """The batch of :func:`_case_batch`: a "more than one?" choice, the first case, then units of
    :func:`_one_more` up to ``max_batch`` cases, whose "another?" counts from ``min_batch`` cases on;
    with ``bulk``, the cases after :data:`FULL_CASES` drawn in bulk (:func:`_bulk_rest`)."""
    # the example's choices so far (family, variant): a bulk case's replay starts with them
    # (None where this Hypothesis does not give them: every case is drawn in full)
    so_far = drawn_choices(draw) if bulk else None
    bulk, prefix = so_far is not None, so_far or ()
    then = _one_more(cases)
    go_on = draw(_MORE) != 0
    drawn = [draw(cases)]
    # each full case's choices (a unit's last is its "another?"): the templates of the bulk cases
    now = drawn_choices(draw) or () if bulk and go_on else ()
    templates = [now[len(prefix) + 1:]]
    while go_on and len(drawn) < max_batch:
        if bulk and len(drawn) >= FULL_CASES:
            left = choices_left(draw)  # before the seed: the choices the full batch would make instead
            rest = _bulk_rest(draw(SEEDS), cases, drawn, templates, prefix, min_batch, max_batch, left)
            if rest is None:
                end_as_overrun(draw)
            return rest
        c, another = draw(then)
        drawn.append(c)
        go_on = another or len(drawn) < min_batch
        if bulk:
            before, now = len(now), drawn_choices(draw) or ()
            templates.append(now[before:-1])
    return DrawnBatch(drawn) if bulk else drawn


def _bulk_rest(seed_: int, cases: st.SearchStrategy[Case], drawn: list[Case], templates: list[tuple],
               prefix: tuple, min_batch: int, max_batch: int, left: int | None = None) -> DrawnBatch | None:
    """``drawn`` and the rest of its batch from ``seed_``: one case, then one more while a
    :data:`BULK_STOP` coin says so, at least ``min_batch`` and at most ``max_batch`` in all; each a
    mutation of the choices of one of the full cases (``templates``), in turn.

    None where the batch drawn in full would pass ``left``, the choices Hypothesis allows the example
    (:func:`~ctsgen.strategies.hypothesis_reach.choices_left`): each bulk case's recorded choices and
    its unit's "another?". Hypothesis's early generation caps a new example at five times its
    prefix's simplest continuation (a one-case batch), so a full batch of more than a few cases
    overruns there, is not run and is not mutated, and the next example is a new variant's one case;
    a bulk batch ran instead, with up to six mutations of its variant after it, and khr-sdiv-floors,
    which needs a signed division variant, took 174 examples to kill against 47 (docs/validation.md,
    "Host cost per case (issue 43)")."""
    rng = np.random.default_rng(seed_)
    size = min(max_batch, max(min_batch, len(drawn) + int(rng.geometric(BULK_STOP))))
    walk, bulk = BulkDraw(int(rng.integers(2**63))), []
    out, seen = list(drawn), set(templates)
    for i in range(size - len(drawn)):
        for _ in range(_TRIES):  # the choices of a case the batch holds already are drawn again
            walk.start(templates[i % len(templates)])
            case = walk(cases)
            choices = tuple(walk.choices)
            if choices not in seen:  # the same choices draw the same case
                break
        seen.add(choices)
        out.append(case)
        bulk.append(choices)
        if left is not None:
            left -= len(choices) + 1
            if left < 0:
                return None
    return DrawnBatch(out, prefix, bulk)


#: draws of a bulk case whose choices may be those of a case the batch holds before the last is kept
_TRIES = 4


@st.composite
def _one_more(draw: st.DrawFn, cases: st.SearchStrategy[Case]) -> tuple[Case, bool]:
    """One more case and whether another follows, drawn as one unit the shrinker can delete whole."""
    return draw(cases), draw(_MORE) != 0
