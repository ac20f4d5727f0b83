"""The fuzz loop: each Hypothesis example is a batch of cases sharing one shader.

An example draws a family, a shader variant of it, then 1..``max_batch``
cases of that variant, runs them in one dispatch, and judges each case
with the same rules as ``ctsgen run``. Any failure (a wrong element, a
hang, a lost device, a crash of the supervised worker) fails the example,
and Hypothesis shrinks it: to one case, then toward the smallest readable
one (the family strategies decide what "small" means: fewer elements,
smaller dims, blockSize 1, simplest clamp mode, iota data). The minimal
case is exported as a standalone repro.

Failing examples are saved in a Hypothesis example database (a directory,
``.ctsgen/fuzz-db`` by default, or ``redis://host:port`` to share one
between machines) and replayed first on the next run with the same
families and backend.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase
from hypothesis.errors import Flaky

from ctsgen.backends.base import Backend, ShaderVariant
from ctsgen.device.profile import DeviceProfile, drawing_profile
from ctsgen.families import DEFAULT_FAMILY, get_family
from ctsgen.families.base import Case, Family, StrategyOptions, Variant
from ctsgen.fuzz.buckets import case_size
from ctsgen.fuzz.database import WriteOnlyDatabase, open_database
from ctsgen.mutants import get_mutant
from ctsgen.runner.execute import execute_cases
from ctsgen.runner.options import RunOptions
from ctsgen.runner.verdict import CaseResult
from ctsgen.toolchain.variants import compile_variant


@dataclass
class FuzzOptions:
    families: tuple[str, ...] = (DEFAULT_FAMILY,)
    max_examples: int = 200
    time_s: float | None = None  # keep drawing fresh examples until this many seconds have passed
    seed: int = 0
    max_batch: int = 16
    database: str | ExampleDatabase | None = ".ctsgen/fuzz-db"  # a spec for open_database, or an open one
    expect_deviations: tuple[str, ...] = ()
    include_hazardous: bool = False
    shrink_time_s: float = 120.0  # after the first failure, stop shrinking after this long
    keep_going: bool = False  # after a failure, record it and fuzz on (with --time) in fresh rounds
    run: RunOptions = field(default_factory=RunOptions)


@dataclass
class FuzzReport:
    examples: int = 0
    cases: int = 0
    wall_s: float = 0.0
    first_failure_example: int | None = None  # 1-based index of the first failing example
    case: Case | None = None  # the minimal failing case, after shrinking
    result: CaseResult | None = None
    failures: list[tuple[Case, CaseResult]] = field(default_factory=list)  # every failure, with keep_going

    @property
    def cases_per_s(self) -> float:
        return self.cases / self.wall_s if self.wall_s else 0.0


class StopFuzzing(BaseException):
    """Raised through Hypothesis (a BaseException, so it is not a test failure)
    to end a run: the shrink budget is spent, or the process was told to stop."""


class FuzzFailure(AssertionError):
    """One case of a batch failed; carries the case and its verdict."""

    def __init__(self, case: Case, result: CaseResult) -> None:
        super().__init__(f"{result.status.value}: {case.name()}: {result.detail}")
        self.case, self.result = case, result




class Fuzzer:
    """Runs Hypothesis against one backend (see the module docstring)."""

    def __init__(self, backend: Backend, options: FuzzOptions,
                 progress: Callable[[FuzzReport], None] | None = None,
                 on_failure: Callable[[FuzzFailure], None] | None = None,
                 known: Callable[[FuzzFailure], bool] | None = None) -> None:
        """``known(failure)`` True: a failure already accounted for (a campaign's bucket
        with an exact explanation): it is counted there and the example passes."""
        self.backend, self.options, self.progress = backend, options, progress
        self.on_failure, self.known = on_failure, known
        self._database: ExampleDatabase | None = None
        self._first_failure_at: float | None = None
        self._smallest: FuzzFailure | None = None  # the smallest failure seen, if shrinking is cut short
        self.families: list[Family] = [get_family(f) for f in options.families]
        self.profile: DeviceProfile = drawing_profile(backend.profile())
        self.strategy_options = StrategyOptions(profile=self.profile, include_hazardous=options.include_hazardous)
        self._shaders: dict[str, ShaderVariant] = {}
        self.report = FuzzReport()

    # -- strategies ------------------------------------------------------
    def batches(self) -> st.SearchStrategy[tuple[Variant, list[Case]]]:
        """A family, a variant of it, then 1..max_batch distinct cases of that variant."""
        opts = self.strategy_options

        def of_family(fam: Family) -> st.SearchStrategy[tuple[Variant, list[Case]]]:
            return fam.variants(opts).flatmap(
                lambda v: st.tuples(st.just(v), st.lists(fam.cases_for(v, opts), min_size=1,
                                                         max_size=self.options.max_batch,
                                                         unique_by=lambda c: c.name())))

        return st.sampled_from(self.families).flatmap(of_family)

    def shader(self, v: Variant, family: str) -> ShaderVariant:
        """The compiled variant of ``family`` (compiled once; validated where a validator is installed)."""
        if v.id not in self._shaders:
            # no validator on a GPU host compiling on the fly: the module is then used as compiled
            self._shaders[v.id] = compile_variant(v, family, require_validator=False)
        return self._shaders[v.id]

    # -- one example -------------------------------------------------------
    def check(self, batch: tuple[Variant, list[Case]]) -> None:
        """Run one batch; raise FuzzFailure for the first failing case."""
        if self._first_failure_at is not None and \
                time.monotonic() - self._first_failure_at > self.options.shrink_time_s:
            raise StopFuzzing("shrink budget spent")
        variant, cases = batch
        sv = self.shader(variant, cases[0].family)
        assume(self.profile.unsupported_reason(sv.requirements) is None)
        self.report.examples += 1
        with ExitStack() as stack:
            for name in self.options.expect_deviations:  # the documented behaviour is the expectation
                stack.enter_context(get_mutant(name).applied())
            datas = [c.data() for c in cases]
        self.report.cases += len(cases)
        results = execute_cases(self.backend, sv, cases, datas, self.options.run.timeout_for(len(cases)))
        failure = next((FuzzFailure(c, r) for c, r in zip(cases, results) if r.status.is_failure), None)
        if failure is not None and self.known is not None and self.known(failure):
            failure = None
        if self.progress:
            self.progress(self.report)
        if failure is not None:
            if self.report.first_failure_example is None:
                self.report.first_failure_example = self.report.examples
                self._first_failure_at = time.monotonic()
                if self.on_failure:
                    self.on_failure(failure)
            if self._smallest is None or case_size(failure.case) < case_size(self._smallest.case):
                self._smallest = failure
            raise failure

    # -- the whole run -----------------------------------------------------
    def run(self) -> FuzzReport:
        """Fuzz until a failure (shrunk to its minimal case) or the budget is spent."""
        start = time.monotonic()
        round_no = 0
        use_database = True
        try:
            while True:
                try:
                    self._one_round(self.options.seed + round_no, use_database)
                except FuzzFailure as final:  # Hypothesis re-raises the minimal example's failure last
                    self._record(final.case, final.result)
                    if not self.options.keep_going:
                        break
                    use_database = False  # a stored failure would replay at once in every new round: later
                    # rounds only save to the database
                    self._first_failure_at = self._smallest = None
                except (StopFuzzing, Flaky):  # shrink budget spent, or the failure did not recur when
                    # Hypothesis replayed it (a dispatch that hung once): keep the smallest failure seen
                    if self._smallest is not None:
                        self._record(self._smallest.case, self._smallest.result)
                    if not self.options.keep_going:
                        break
                    use_database = False
                    self._first_failure_at = self._smallest = None
                round_no += 1
                if self.options.time_s is None or time.monotonic() - start >= self.options.time_s:
                    break
        except KeyboardInterrupt:  # told to stop: report what there is
            if self._smallest is not None:
                self._record(self._smallest.case, self._smallest.result)
        self.report.wall_s = time.monotonic() - start
        return self.report

    def _record(self, case: Case, result: CaseResult) -> None:
        self.report.failures.append((case, result))
        if self.report.case is None:
            self.report.case, self.report.result = case, result

    def _one_round(self, round_seed: int, use_database: bool = True) -> None:
        if self._database is None:  # opened once: a shared database that went away stays replaced
            spec = self.options.database
            self._database = spec if isinstance(spec, ExampleDatabase) else open_database(spec)
        db = self._database if use_database or self._database is None else WriteOnlyDatabase(self._database)

        @settings(database=db, max_examples=self.options.max_examples, deadline=None,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                  phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
        @seed(round_seed)
        @given(self.batches())
        def fuzz(batch: tuple[Variant, list[Case]]) -> None:
            self.check(batch)

        # With a forced seed Hypothesis would not use the database; this key (what is
        # fuzzed, on which backend) lets a rerun replay stored failures first.
        key = repr((sorted(self.options.families), self.backend.name, self.options.include_hazardous))
        fuzz._hypothesis_internal_database_key = hashlib.sha256(key.encode()).digest()
        fuzz()
