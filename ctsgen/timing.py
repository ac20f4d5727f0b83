"""Where the time went: a per-stage breakdown shared by ``fuzz``, ``run`` and ``generate``.

Each command times its stages with :meth:`Breakdown.stage` and ends by
printing :meth:`Breakdown.summary`, so a user sees their own bottleneck
(docs/performance.md). The stages, in the order a case passes through them:

* ``draw``: Hypothesis drawing variants and cases;
* ``data+oracle``: a case's input data and expected outputs (the oracle);
* ``compile``: GLSL -> SPIR-V (including cache look-ups);
* ``validate``: SPIR-V validation;
* ``build``: the backend building a variant's pipeline: its creation, and the compile of a driver
  that compiles at the first dispatch (lavapipe; ``Backend.stats`` ``build_s``);
* ``pipeline``: the rest of getting a pipeline (looking it up, layouts, what a backend that does
  not count ``build_s`` spends);
* ``dispatch``: the backend executing the work;
* ``read-back``: copying results back from the device;
* ``judge``: comparing outputs with the expected values;
* ``write``: writing pack files (``generate`` only).

Backends that measure their own pipeline, dispatch and read-back times
(``Backend.stats``: ``pipeline_s``, ``prepare_s``, ``build_s``, ``dispatch_s``,
``readback_s``) are split by :meth:`Breakdown.split_backend`; whatever a
backend does not account for (process hops, buffer packing) is ``dispatch``.
A pipeline built ahead (``Backend.prepare_soon``, counted in ``ahead_s``)
ran while other stages did: only the part the caller still waited for is
``pipeline``, and the rest is reported as overlapped, outside the stages.
Times are wall-clock seconds from ``time.perf_counter``; stages measured in
worker processes are summed (see :meth:`Breakdown.merge`), so with
``--jobs N`` the stage total can exceed the wall time.

A breakdown also keeps its **timeline**: the same seconds, and the cases
counted (:meth:`Breakdown.count`), per minute of the process's life
(``TIMELINE_S``, counted from this module's import or :func:`start_timeline`), so a long fuzz shows how
its rate and its stages drift (a first minute of cheap variants can hide a
slow hour). A stage's time falls in the minute it ended.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

STAGES: tuple[str, ...] = ("draw", "data+oracle", "compile", "validate", "build", "pipeline", "dispatch",
                           "read-back", "judge", "write")
#: Seconds per timeline interval, and where the intervals of every breakdown of this process start.
TIMELINE_S = 60.0
ORIGIN = time.monotonic()
#: The timeline's key for the cases counted in an interval.
CASES = "cases"


def start_timeline(origin: float) -> None:
    """Count this process's timeline intervals from ``origin`` (``time.monotonic()``, not later than
    now): a ``--workers`` worker counts from its parent's start, so that every worker's minute 1 is
    the same minute of the session."""
    global ORIGIN
    ORIGIN = min(origin, time.monotonic())


@dataclass
class Breakdown:
    """Seconds per stage, summed over everything a command did."""

    seconds: dict[str, float] = field(default_factory=dict)
    overlapped_s: float = 0.0  # pipeline builds that ran alongside other stages (prepare_soon)
    #: per TIMELINE_S interval since ORIGIN: stage -> seconds, and CASES -> cases counted
    timeline: list[dict[str, float]] = field(default_factory=list)

    def _interval(self) -> dict[str, float]:
        i = int((time.monotonic() - ORIGIN) // TIMELINE_S)
        while len(self.timeline) <= i:
            self.timeline.append({})
        return self.timeline[i]

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the wall time of the ``with`` body to stage ``name``."""
        if name not in STAGES:
            raise ValueError(f"unknown stage {name!r}; the stages are {', '.join(STAGES)}")
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to stage ``name``, now and in the timeline."""
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        now = self._interval()
        now[name] = now.get(name, 0.0) + seconds

    def count(self, cases: int) -> None:
        """Count ``cases`` checked now, in the timeline."""
        now = self._interval()
        now[CASES] = now.get(CASES, 0) + cases

    def merge(self, other: Breakdown | Mapping[str, float]) -> None:
        """Add another breakdown (e.g. a worker process's) into this one; a Breakdown's timeline is
        added interval by interval (:meth:`merge_timeline`); a mapping (stage -> seconds) has none."""
        items = other.seconds if isinstance(other, Breakdown) else other
        for name, s in items.items():
            self.seconds[name] = self.seconds.get(name, 0.0) + s
        if isinstance(other, Breakdown):
            self.overlapped_s += other.overlapped_s
            self.merge_timeline(other.timeline)

    def merge_timeline(self, timeline: list[dict[str, float]]) -> None:
        """Add another timeline (a worker process's, from its report) interval by interval."""
        while len(self.timeline) < len(timeline):
            self.timeline.append({})
        for mine, theirs in zip(self.timeline, timeline):
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0.0) + value

    def split_backend(self, backend_s: float, before: Mapping[str, float], after: Mapping[str, float]) -> None:
        """Attribute ``backend_s`` seconds spent in ``Backend.run`` to build, pipeline, dispatch and
        read-back, from the backend's ``stats`` read ``before`` and ``after`` the call (empty for backends
        that keep none). ``build`` is the part of the pipeline seconds the backend counts as builds
        (``build_s``), never more than the pipeline seconds the caller waited for."""
        def delta(key: str) -> float:
            return max(0.0, float(after.get(key, 0.0)) - float(before.get(key, 0.0)))

        pipeline = delta("pipeline_s") + delta("prepare_s")
        readback = delta("readback_s")
        rest = max(0.0, backend_s - pipeline - readback)
        ahead = delta("ahead_s")
        if ahead:  # the caller waited at most what its dispatch's own time leaves for the build
            waited = min(ahead, max(0.0, rest - delta("dispatch_s")))
            pipeline, rest = pipeline + waited, rest - waited
            self.overlapped_s += ahead - waited
        build = min(delta("build_s"), pipeline)
        self.add("build", build)
        self.add("pipeline", pipeline - build)
        self.add("read-back", readback)
        self.add("dispatch", rest)

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())

    def to_json(self) -> dict[str, float]:
        """Stage -> seconds, in stage order, only the stages that took time."""
        return {s: round(self.seconds[s], 6) for s in STAGES if self.seconds.get(s)}

    def timeline_json(self) -> list[dict[str, float]]:
        """The timeline, rounded: a worker's report carries it to its parent."""
        return [{k: round(v, 6) for k, v in interval.items()} for interval in self.timeline]

    def timeline_summary(self, wall_s: float, workers: int = 1) -> str:
        """One line per minute: cases, cases/s over the minute's wall (the last minute's share of
        ``wall_s``), and each stage's ms per case (summed over ``workers`` processes: ms of a
        worker's time per case), then the last whole minute's rate against the first's."""
        used = [s for s in STAGES if any(i.get(s) for i in self.timeline)]
        head = f"  {'minute':>6} {'cases':>9} {'cases/s':>9}  " + " ".join(f"{s:>11}" for s in used)
        lines = [f"per minute ({workers} worker(s); stages in ms of a worker's time per case):", head]
        rates = []
        for i, interval in enumerate(self.timeline):
            span = min(TIMELINE_S, max(wall_s - i * TIMELINE_S, 0.0)) or TIMELINE_S
            cases = interval.get(CASES, 0)
            rate = cases / span
            if span >= TIMELINE_S:
                rates.append(rate)
            per_case = [f"{1000.0 * interval.get(s, 0.0) / cases:11.3f}" if cases else f"{'-':>11}" for s in used]
            lines.append(f"  {i + 1:>6} {cases:>9.0f} {rate:>9.0f}  " + " ".join(per_case)
                         + ("" if span >= TIMELINE_S else f"  (last {span:.0f} s)"))
        if len(rates) >= 2 and rates[0]:
            lines.append(f"  last whole minute {rates[-1]:.0f} cases/s, {rates[-1] / rates[0]:.0%} of the first's "
                         f"{rates[0]:.0f}")
        return "\n".join(lines)

    def summary(self, wall_s: float | None = None, cases: int | None = None,
                title: str = "where the time went") -> str:
        """One line per stage: seconds, share of the measured total, and per-case milliseconds."""
        total = self.total_s
        head = title
        if wall_s is not None:
            head += f" ({wall_s:.2f} s wall"
            head += f", {total:.2f} s in stages)" if abs(total - wall_s) > 0.01 else ")"
        lines = [head + ":"]
        for s in STAGES:
            secs = self.seconds.get(s, 0.0)
            if not secs:
                continue
            share = 100.0 * secs / total if total else 0.0
            per_case = f"  {1000.0 * secs / cases:8.3f} ms/case" if cases else ""
            lines.append(f"  {s:<12} {secs:8.3f} s  {share:5.1f}%{per_case}")
        if wall_s and total < wall_s:
            other = wall_s - total
            lines.append(f"  {'(other)':<12} {other:8.3f} s  (outside the stages: bookkeeping, progress, I/O)")
        if self.overlapped_s:
            lines.append(f"  {'(ahead)':<12} {self.overlapped_s:8.3f} s  (pipelines built while other stages ran; "
                         "not in the stages)")
        return "\n".join(lines)
