"""Planted backends whose pipeline builds are slow, as a driver's compile of a large flexible-size
variant is (docs/validation.md, "lavapipe build time"), for tests/test_build_time.py: built in a
supervised worker (which imports them from here) or named ``build_time_support:CLASS`` on the command
line (with tests/ on PYTHONPATH)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.shader import ShaderVariant
from ctsgen.errors import BuildTimeout


class SlowBuilds(ReferenceBackend):
    """The reference backend whose every variant's build (``prepare``) takes ``BUILD_S`` seconds and is
    counted as the Vulkan backend counts one (``stats`` ``build_s`` and ``prepare_s``, ``build_seconds``).
    Not in-process: under ``--isolation auto`` it runs in a supervised worker, whose supervisor bounds
    its builds. Like the Vulkan backend it bounds a build by its own ``build_budget_s`` too, which the
    worker sets to the supervisor's bound: past it, it raises BuildTimeout at once."""

    name = "slow-builds"
    in_process = False
    BUILD_S = 30.0

    def __init__(self) -> None:
        super().__init__()
        self.build_budget_s = 10_000.0
        self.stats = {"builds": 0, "build_s": 0.0, "prepare_s": 0.0}
        self._builds: dict[str, float] = {}

    def prepare(self, variants: Sequence[ShaderVariant]) -> None:
        for v in variants:
            if self.BUILD_S > self.build_budget_s:
                raise BuildTimeout(v.id, 0.0, self.build_budget_s)
            time.sleep(self.BUILD_S)
            self._builds[v.id] = self.BUILD_S
            self.stats["builds"] += 1
            for key in ("build_s", "prepare_s"):
                self.stats[key] += self.BUILD_S

    def build_seconds(self, variant_id: str) -> float | None:
        return self._builds.get(variant_id)


class QuickBuilds(SlowBuilds):
    """:class:`SlowBuilds` whose builds take 0.2 s: within any budget the tests give."""

    name = "quick-builds"
    BUILD_S = 0.2


class UnboundedSlowBuilds(SlowBuilds):
    """:class:`SlowBuilds` that does not bound its own builds (no ``build_budget_s`` the worker could
    set): only the supervisor's bound ends its 30 s build."""

    name = "unbounded-slow-builds"

    def __init__(self) -> None:
        super().__init__()
        del self.build_budget_s

    def prepare(self, variants: Sequence[ShaderVariant]) -> None:
        time.sleep(self.BUILD_S * len(variants))
