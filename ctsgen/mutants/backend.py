"""The mutant backend: the reference backend with one mutant (an injected driver bug) applied.

``ctsgen fuzz --backend mutant:NAME`` and ``ctsgen bench mutation`` run it to
measure whether the suite finds that bug (the catalogue: :mod:`ctsgen.mutants.catalogue`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ctsgen.backends.base import Backend
from ctsgen.core.shader import Dispatch
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.device.profile import DeviceProfile
from ctsgen.mutants.catalogue import get_mutant
from ctsgen.mutants.deviations import reaching


class MutantBackend(Backend):
    """The reference backend with one mutant applied to its semantics.

    Run it in a worker process (``open_backend`` does: it is not ``in_process``): the patch then
    stays out of the process that computes the expected results.
    """

    host_pipelines = True

    def __init__(self, mutant: str) -> None:
        self.mutant = get_mutant(mutant)
        self.name = f"mutant:{mutant}"
        self._ref = ReferenceBackend()

    def profile(self) -> DeviceProfile:
        return self._ref.profile()

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        """The mutant's semantics where the dispatch's module can show it (``Mutant.shows_in``), as the
        driver it models gives them; the spec's elsewhere."""
        if not reaching([self.mutant.name], dispatch.variant):
            return self._ref.run(dispatch, timeout_s)
        with self.mutant.applied():
            return self._ref.run(dispatch, timeout_s)

    def close(self) -> None:
        self._ref.close()


def mutant_backend(mutant: str) -> Callable[[], MutantBackend]:
    """The factory of ``--backend mutant:NAME`` (the registry's ``mutant:`` prefix); an unknown
    name is refused here, in one line, before any worker starts."""
    return functools.partial(MutantBackend, get_mutant(mutant).name)
