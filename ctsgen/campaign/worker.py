"""One campaign worker: a process that owns one device and fuzzes it round after round.

A round is one Hypothesis run of ``round_examples`` examples with the seed
:func:`~ctsgen.campaign.store.round_seed` gives it, batched as ``ctsgen fuzz``
batches (``max_batch``, ``min_batch``), judged under the campaign's expected
deviations; it ends early at its first failure, shrunk (for at most
``shrink_time_s``), and at the budget's deadline, shrinking or not. The
compiled shaders (and the backend with its pipelines) serve every round.
Each failing case goes into its bucket (:mod:`ctsgen.fuzz.buckets`, given
the buffers the device gave for it): a new bucket is announced at once,
and a bucket's repro under ``DIR/buckets/`` is replaced whenever a smaller
case arrives. A failure that an existing bucket's mutant explains is
counted in that bucket without shrinking, so a frequent known deviation
does not eat the campaign's time.

While it runs, the worker prints a ``@progress {json}`` line about once a
second (its cases and examples this session) for the session's live line
(:mod:`ctsgen.campaign.run`), and at its end the report ``ctsgen fuzz
--workers`` workers write (:func:`ctsgen.fuzz.workers.write_worker_report`).

Stopping: :meth:`Worker.stop` (the signal handlers call it) ends the round
in progress as Ctrl-C ends ``ctsgen fuzz``: the smallest failure seen so
far is kept, the round's counts are journalled as done, and a resumed
campaign starts with the next round, so no seed is fuzzed twice. A hard
stop loses at most the last ``CHECKPOINT_S`` seconds of counts; findings
are journalled as they are bucketed, and the example database (local
directory, or redis mirrored into it) keeps what was being shrunk.

The deadline bounds the whole process (:func:`serve`), not only its rounds:
no example begins after it, the example in flight (a pipeline build, a
dispatch) is ended ``OVERTIME_S`` after it as a stop signal ends it, and a
backend still closing ``CLOSE_BY_S`` after it has its process stopped
(:mod:`ctsgen.fuzz.deadline`, which ``ctsgen fuzz --time`` follows too): a
session ends within seconds of its budget.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from ctsgen.backends.base import Backend
from ctsgen.backends.registry import capabilities, open_backend
from ctsgen.core.shader import ShaderVariant
from ctsgen.campaign.store import CampaignDir, append, round_seed, worker_id
from ctsgen.core.family import Case, Variant
from ctsgen.toolchain.routes import Route
from ctsgen.fuzz.buckets import Bucket, Buckets, Outputs, case_size, observe
from ctsgen.fuzz.database import WriteOnlyDatabase, open_database
from ctsgen.fuzz.loop import Fuzzer, FuzzFailure, FuzzOptions, FuzzReport, StopFuzzing, default_min_batch
from ctsgen.fuzz.workers import write_worker_report
from ctsgen.repro import export_case
from ctsgen.runner.options import RunOptions
from ctsgen.fuzz.deadline import close_by, example_bound, examples_deadline, overtime_message
from ctsgen.signals import on_stop
from ctsgen.core.verdict import CaseResult

#: Seconds between a round's progress checkpoints in the journal.
CHECKPOINT_S = 10.0
#: Seconds between the ``@progress`` lines for the session's live line.
PROGRESS_S = 1.0
#: What a progress line starts with.
PROGRESS = "@progress "


class _CountingFuzzer(Fuzzer):
    """The fuzz loop, counting the cases it checks per family, sampling one case per batch,
    keeping compiled shaders across rounds (``kept``) and stopping at ``deadline`` (monotonic)."""

    def __init__(self, *args: Any, sample: Callable[[Case], None], kept: dict[str, ShaderVariant],
                 deadline: float | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.by_family: Counter = Counter()
        self._sample = sample
        self.kept, self.deadline = kept, deadline

    def shader(self, v: Variant, family: str, route: Route | None = None) -> ShaderVariant | None:
        if route is not None and route is not self.routes[0]:  # a campaign keeps its one route's shaders
            return super().shader(v, family, route)
        if v.id not in self.kept:
            self.kept[v.id] = super().shader(v, family)
        return self.kept[v.id]

    def check(self, batch: tuple[Variant, list[Case]]) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise StopFuzzing("the campaign's budget is spent")  # shrinking or not: the smallest so far stands
        before = self.report.cases
        try:
            super().check(batch)
        finally:
            if self.report.cases > before:
                self.by_family[batch[1][0].family] += self.report.cases - before
                self._sample(batch[1][0])


class Worker:
    """Worker ``index`` of this host in campaign ``cdir``, fuzzing ``backend``."""

    def __init__(self, cdir: CampaignDir, index: int, backend: Backend,
                 say: Callable[[str], None] = print) -> None:
        self.cdir, self.index, self.backend, self.say = cdir, index, backend, say
        self.config = cdir.config()
        self.wid = worker_id(self.config.host, index)
        self.stopping = False
        self.in_round = False
        self.buckets = Buckets()  # new buckets are announced once per campaign, by _keep_smallest
        self.round = -1
        spec = self.config.database or str(cdir.database_dir)
        self.database = open_database(spec, local=cdir.database_dir, on_fallback=lambda line: self.say(line))
        self.kept: dict[str, ShaderVariant] = {}  # compiled shaders, for every round
        self.build_s: dict[str, float] = {}  # each family's mean build seconds an example, for every round
        self.fuzzer: _CountingFuzzer | None = None  # the round in progress
        self.total = FuzzReport()  # this session's rounds together: counts and time breakdown

    # -- stopping ------------------------------------------------------------
    def stop(self) -> None:
        """Finish the round in progress now (from a signal handler: raises KeyboardInterrupt
        inside the fuzz loop, which ends the round as Ctrl-C ends ``ctsgen fuzz``)."""
        self.stopping = True
        self._interrupt()

    def overtime(self) -> None:
        """The deadline has passed by ``OVERTIME_S`` with an example still in flight: end its
        round as :meth:`stop` does (from SIGALRM; a worker between rounds has none to end)."""
        if self.in_round:
            self.say(overtime_message() + "; its round ends there")
        self._interrupt()

    def _interrupt(self) -> None:
        if self.in_round:
            self.in_round = False
            if self.fuzzer is not None:
                self.fuzzer.request_stop()  # where the interrupt is dropped (a ctypes callback), the next example
            raise KeyboardInterrupt

    # -- buckets -------------------------------------------------------------
    def _announce(self, bucket: Bucket) -> None:
        self.say(f"new bucket {bucket.key}: {bucket.title} (round {self.round}, worker {self.wid})")

    def _load_buckets(self) -> None:
        """Buckets other workers found since (so their mutants are tried first here too)."""
        for b in self.cdir.buckets():
            if b["key"] not in self.buckets.buckets:
                self.buckets.buckets[b["key"]] = Bucket(b["key"], b["title"], b["explained_by"], b["signature"],
                                                        0, b["size"], b["case"], b["result"])

    def outputs(self, case: Case) -> Outputs:
        """The buffers this worker's device gives for ``case`` run alone (what a mutant must explain)."""
        sv = self.fuzzer.shader(case.variant(), case.family) if self.fuzzer is not None else None
        return observe(self.backend, case, sv, timeout_s=self.config.timeout_s)[1]

    def place(self, case: Case, result: CaseResult, absorbed: bool = False, outputs: Outputs = None) -> None:
        """Bucket one failure, journal it, and keep the bucket's smallest repro on disk (the
        buckets other workers have found since are tried first, so a failure two mutants
        explain joins the bucket one of them already has)."""
        if not absorbed:
            self._load_buckets()
        p = self.buckets.add(case, result, outputs if outputs is not None else self.outputs(case))
        b = p.bucket
        append(self.cdir.findings(self.wid), {
            "t": time.time(), "worker": self.wid, "round": self.round, "bucket": b.key, "title": b.title,
            "explained_by": b.explained_by, "case": case.to_json(), "name": case.name(), "size": case_size(case),
            "result": result.to_json(), "shrunk": not absorbed})
        self._keep_smallest(b, case, result)

    def _keep_smallest(self, b: Bucket, case: Case, result: CaseResult) -> None:
        root = self.cdir.bucket_dir(b.key)
        root.parent.mkdir(parents=True, exist_ok=True)
        with open(root.parent / ".lock", "w") as lock:  # workers of a host share the buckets
            fcntl.flock(lock, fcntl.LOCK_EX)
            meta = root / "bucket.json"
            size = case_size(case)
            if not meta.exists():  # the first of this host's workers to find it says so, the others see its file
                self._announce(b)
            elif json.loads(meta.read_text())["size"] <= size:
                return
            tmp = root.parent / f".{root.name}.{self.wid}"
            shutil.rmtree(tmp, ignore_errors=True)
            export_case(case, tmp / "repro", failure=result.to_json(), backend=self.config.backend,
                        origin={"campaign": str(self.cdir.root), "worker": self.wid, "round": self.round},
                        final_dir=root / "repro", expect_deviations=tuple(self.config.expect_deviations),
                        debug_backend=self.backend)  # a program's first differing node, on this device
            record = {"key": b.key, "title": b.title, "explained_by": b.explained_by, "signature": b.signature,
                      "size": size, "case": case.to_json(), "name": case.name(), "result": result.to_json(),
                      "found_by": self.wid, "round": self.round, "t": time.time()}
            (tmp / "bucket.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
            old = root.parent / f".{root.name}.old.{self.wid}"
            if root.exists():
                root.rename(old)
            tmp.rename(root)
            shutil.rmtree(old, ignore_errors=True)

    def _known(self, failure: FuzzFailure) -> bool:
        outputs = self.outputs(failure.case)
        b = self.buckets.explained(failure.case, failure.result, outputs)
        if b is None:
            return False
        self.place(failure.case, failure.result, absorbed=True, outputs=outputs)
        return True

    # -- rounds --------------------------------------------------------------
    def run(self, deadline: float | None) -> FuzzReport:
        """Fuzz round after round until ``deadline`` (time.monotonic()) or :meth:`stop`; this
        session's rounds together."""
        cfg = self.config
        first = True
        self.round = self.cdir.next_round(self.wid) - 1
        began = time.monotonic()
        while not self.stopping and (deadline is None or time.monotonic() < deadline):
            self.round += 1
            self._load_buckets()
            seed = round_seed(cfg.seed, cfg.host, self.index, self.round)
            journal = self.cdir.journal(self.wid)
            append(journal, {"event": "begin", "round": self.round, "seed": seed, "t": time.time()})
            samples = self.cdir.samples(self.wid)
            last = [time.monotonic(), time.monotonic()]
            begun = time.monotonic()

            pending: list[dict[str, Any]] = []

            def checkpoint(fz: _CountingFuzzer, event: str = "progress") -> None:
                if pending:
                    append(samples, *pending, sync=False)
                    pending.clear()
                append(journal, {"event": event, "round": self.round, "t": time.time(),
                                 "examples": fz.report.examples, "cases": dict(fz.by_family),
                                 "wall_s": time.monotonic() - begun, "stopped": self.stopping,
                                 "first_failure_example": fz.report.first_failure_example,
                                 "skipped": fz.report.skipped})

            def progress(report: FuzzReport) -> None:
                now = time.monotonic()
                if now - last[1] >= PROGRESS_S:
                    last[1] = now
                    self.say(PROGRESS + json.dumps({"cases": self.total.cases + report.cases,
                                                    "examples": self.total.examples + report.examples}))
                if now - last[0] >= CHECKPOINT_S:
                    last[0] = now
                    checkpoint(self.fuzzer)

            options = FuzzOptions(families=tuple(cfg.families), max_examples=cfg.round_examples, seed=seed,
                                  max_batch=cfg.max_batch, min_batch=cfg.min_batch or default_min_batch(cfg.backend),
                                  include_hazardous=cfg.include_hazardous,
                                  expect_deviations=tuple(cfg.expect_deviations),
                                  database=self.database if first else WriteOnlyDatabase(self.database),
                                  shrink_time_s=cfg.shrink_time_s, run=RunOptions(timeout_base_s=cfg.timeout_s))
            self.fuzzer = fuzzer = _CountingFuzzer(
                self.backend, options, progress=progress, known=self._known, kept=self.kept, deadline=deadline,
                sample=lambda c: pending.append({"family": c.family, "parameters": c.to_json()}))
            fuzzer.build_s = self.build_s  # batches sized by what the family's pipelines have cost so far
            self.in_round = True
            if self.stopping:  # a stop that landed while the round was set up ends it at its first example
                fuzzer.request_stop()
            try:
                report = fuzzer.run()
                self.in_round = False  # from here a stop interrupts nothing (_interrupt raises only in a round)
            except KeyboardInterrupt:  # a stop that landed in the round but outside the fuzz loop's own
                # handler (before it, or after it recorded the smallest failure): the round ends with
                # what the loop has reported, journalled as stopped like any other
                self.in_round = False
                report = fuzzer.report
            finally:  # any other error: no stop may raise into what handles it
                self.in_round = False
            for case, result in report.failures:
                self.place(case, result)
            checkpoint(fuzzer, "done")
            self.total.examples += report.examples
            self.total.cases += report.cases
            self.total.times.merge(report.times)
            self.total.failures += report.failures
            # the database is replayed by the first round that draws an example: a round the deadline
            # ended before its first example replayed nothing, so the next one still reads the database
            first = first and not report.examples
        self.total.wall_s = time.monotonic() - began
        return self.total


def serve(cdir: CampaignDir, index: int, device: int | None, until: float | None,
          report: str | None = None) -> int:
    """Worker process ``index`` of a session (``ctsgen campaign worker``): open the campaign's backend
    on ``device``, fuzz until ``until`` (time.time(), the session's deadline) or SIGTERM/SIGINT,
    write the report for the session (:func:`ctsgen.fuzz.workers.write_worker_report`) to ``report``,
    and close the backend, the whole within seconds of ``until`` (see the module docstring)."""
    def say(line: str) -> None:
        print(line, flush=True)

    config = cdir.config()
    end = None if until is None else time.monotonic() + (until - time.time())
    deadline = None if end is None else \
        examples_deadline(end, max(end - time.monotonic(), 0.0), not capabilities(config.backend).host_pipelines)
    with cdir.worker_lock(worker_id(config.host, index)):
        backend = open_backend(config.backend, "auto", device)
        try:
            worker = Worker(cdir, index, backend, say=say)
            with on_stop(lambda signum, frame: worker.stop()), \
                    example_bound(deadline, worker.overtime):
                total = worker.run(deadline)
            if report is not None:
                write_worker_report(report, total)
        finally:
            close_by(backend, deadline, say)
    return 0
