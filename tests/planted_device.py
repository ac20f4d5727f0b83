"""A planted device for the bucket tests: the reference backend with ``setdimension-floor`` applied
(the H100's documented deviation) that also gives what a real device may give within the spec.

* Float arithmetic rounds toward zero (cm2-program's element-wise +, -, * and
  OpMatrixTimesScalar): the exact result's other faithful neighbour wherever round-to-nearest
  would round away from zero (decision "faithful-rounding"); a float-domain program's later values
  then move within their propagated bounds, as a device's do.
* Float zeros come back with the other sign in the programs whose compare rule ignores it (those
  that compute in a float type, shaders without SignedZeroInfNanPreserve; decision "signed-zero").

``--backend tests.planted_device:PlantedDevice`` names it (from the repository root).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from ctsgen.backends.base import Backend
from ctsgen.errors import BackendError
from ctsgen.core.shader import Dispatch
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.device.profile import DeviceProfile
from ctsgen.families import get_family
from ctsgen.families.cm2_program import oracle
from ctsgen.families.cm2_program.program import MOVES
from ctsgen.mutants.catalogue import get_mutant
from ctsgen.core.mutant import replaced


def toward_zero(exact: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``exact`` (float64) rounded toward zero to ``dtype`` (float16 or float32; others to nearest)."""
    near = exact.astype(dtype)
    if np.dtype(dtype).kind != "f":
        return near
    with np.errstate(invalid="ignore", over="ignore"):
        away = np.isfinite(exact) & (np.abs(near.astype(np.float64)) > np.abs(exact))
        return np.where(away, np.nextafter(near, np.zeros_like(near)), near).astype(dtype)


def _rtz(original: Callable[[oracle.Run, int], np.ndarray], exact: Callable[[oracle.Run, int], np.ndarray]
         ) -> Callable[[oracle.Run, int], np.ndarray]:
    def evaluate(run: oracle.Run, i: int) -> np.ndarray:
        return toward_zero(exact(run, i), run.program.nodes[i].type.component.dtype)
    return evaluate


def _arith(run: oracle.Run, i: int) -> np.ndarray:
    n = run.program.nodes[i]
    x, y = run.arg(i, 0).astype(np.float64), run.arg(i, 1).astype(np.float64)
    return {oracle.Op.add: np.add, oracle.Op.sub: np.subtract, oracle.Op.mul: np.multiply}[n.op](x, y)


def _scale(run: oracle.Run, i: int) -> np.ndarray:
    return run.arg(i, 0).astype(np.float64) * float(run.scalar(i))


@contextmanager
def rounding_toward_zero() -> Iterator[None]:
    module = "ctsgen.families.cm2_program.oracle"
    with replaced({f"{module}:eval_arith": _rtz(oracle.eval_arith, _arith),
                   f"{module}:eval_scale": _rtz(oracle.eval_scale, _scale)}):
        yield


def ignores_zero_sign(family: str, signature: dict) -> bool:
    """Whether the judge ignores the sign of a zero in every case of this variant."""
    if family != "cm2-program":
        return False
    v = get_family(family).variant_type.from_json(signature)
    return any(n.type.component.is_float and n.op not in MOVES for n in v.program.nodes)


class PlantedDevice(Backend):
    """See the module docstring."""

    name = "planted"

    def __init__(self, deviation: str = "setdimension-floor") -> None:
        self.deviation = get_mutant(deviation)
        self._ref = ReferenceBackend()

    def profile(self) -> DeviceProfile:
        return self._ref.profile()

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        with self.deviation.applied(), rounding_toward_zero():
            out = self._ref.run(dispatch, timeout_s)
        v = dispatch.variant
        if ignores_zero_sign(v.family, v.signature):
            out = [o if o.dtype.kind != "f" else np.where(o == 0, -o, o).astype(o.dtype) for o in out]
        return out

    def close(self) -> None:
        self._ref.close()


class PlantedWithGemmBug(PlantedDevice):
    """The planted device with a second, distinct bug: cm2-gemm's epilogue adds C unscaled
    (``gemm-ignores-beta``)."""

    name = "planted-with-gemm-bug"

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        with get_mutant("gemm-ignores-beta").applied():
            return super().run(dispatch, timeout_s)


class SlowToEnd(PlantedDevice):
    """The planted device, each dispatch taking ``CTSGEN_TEST_DISPATCH_S`` seconds more (a pipeline
    build at the deadline) and its close ``CTSGEN_TEST_CLOSE_S`` seconds, a minute unless set (a driver
    publishing its pipeline cache behind every other process of the device)."""

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        time.sleep(float(os.environ.get("CTSGEN_TEST_DISPATCH_S", "0")))
        return super().run(dispatch, timeout_s)

    def close(self) -> None:
        time.sleep(float(os.environ.get("CTSGEN_TEST_CLOSE_S", "60")))
        super().close()


class FailsInWorker(PlantedDevice):
    """A backend whose class the session finds but that fails to open in the workers (as a device
    the host lacks would), while ``CTSGEN_TEST_FAIL_IN_WORKER`` is set."""

    def __init__(self) -> None:
        if os.environ.get("CTSGEN_TEST_FAIL_IN_WORKER"):
            raise BackendError("no such device")
        super().__init__()
