"""Where the time went: a per-stage breakdown shared by ``fuzz``, ``run`` and ``generate``.

Each command times its stages with :meth:`Breakdown.stage` and ends by
printing :meth:`Breakdown.summary`, so a user sees their own bottleneck
(docs/performance.md). The stages, in the order a case passes through them:

* ``draw``: Hypothesis drawing variants and cases;
* ``data+oracle``: a case's input data and expected outputs (the oracle);
* ``compile``: GLSL -> SPIR-V (including cache look-ups);
* ``validate``: SPIR-V validation;
* ``pipeline``: the backend building (or looking up) its pipeline;
* ``dispatch``: the backend executing the work;
* ``read-back``: copying results back from the device;
* ``judge``: comparing outputs with the expected values;
* ``write``: writing pack files (``generate`` only).

Backends that measure their own pipeline, dispatch and read-back times
(``Backend.stats``: ``pipeline_s``, ``prepare_s``, ``dispatch_s``,
``readback_s``) are split by :meth:`Breakdown.split_backend`; whatever a
backend does not account for (process hops, buffer packing) is ``dispatch``.
A pipeline built ahead (``Backend.prepare_soon``, counted in ``ahead_s``)
ran while other stages did: only the part the caller still waited for is
``pipeline``, and the rest is reported as overlapped, outside the stages.
Times are wall-clock seconds from ``time.perf_counter``; stages measured in
worker processes are summed (see :meth:`Breakdown.merge`), so with
``--jobs N`` the stage total can exceed the wall time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

STAGES: tuple[str, ...] = ("draw", "data+oracle", "compile", "validate", "pipeline", "dispatch",
                           "read-back", "judge", "write")


@dataclass
class Breakdown:
    """Seconds per stage, summed over everything a command did."""

    seconds: dict[str, float] = field(default_factory=dict)
    overlapped_s: float = 0.0  # pipeline builds that ran alongside other stages (prepare_soon)

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
        """Add ``seconds`` to stage ``name``."""
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def merge(self, other: Breakdown | Mapping[str, float]) -> None:
        """Add another breakdown (e.g. a worker process's) into this one."""
        items = other.seconds if isinstance(other, Breakdown) else other
        for name, s in items.items():
            self.add(name, s)

    def split_backend(self, backend_s: float, before: Mapping[str, float], after: Mapping[str, float]) -> None:
        """Attribute ``backend_s`` seconds spent in ``Backend.run`` to pipeline, dispatch and read-back,
        from the backend's ``stats`` read ``before`` and ``after`` the call (empty for backends that keep none)."""
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
        self.add("pipeline", pipeline)
        self.add("read-back", readback)
        self.add("dispatch", rest)

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())

    def to_json(self) -> dict[str, float]:
        """Stage -> seconds, in stage order, only the stages that took time."""
        return {s: round(self.seconds[s], 6) for s in STAGES if self.seconds.get(s)}

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
