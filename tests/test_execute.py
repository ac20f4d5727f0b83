"""The one dispatch-and-judge step (ctsgen.execute): every path that runs drawn cases gets what
``ctsgen run`` gives a pack's cases, bisection isolates a culprit in log2(n) + 1 dispatches, and
compile_variant's validation modes differ only in how the module is checked."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from ctsgen.errors import BackendError
from ctsgen.core.shader import Dispatch
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.execute.bisect import Bisection
from ctsgen.execute.contract import BackendContractError
from ctsgen.execute.run import Dispatched
from ctsgen.families import get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.strategies.sampling import draw_examples
from ctsgen.testing import check_case
from ctsgen.toolchain import ToolchainError
from ctsgen.toolchain.variants import compile_variant


@functools.cache
def cases() -> tuple:
    return tuple(draw_examples(get_family("tensor-layout").cases(StrategyOptions()), 20, 5))


class UnderValidation(ReferenceBackend):
    """A driver under the validation layer that reports a message on every dispatch."""

    def validation_messages(self) -> list[str]:
        return ["VUID-planted: a message"]


class ShortBuffers(ReferenceBackend):
    """A backend that breaks the protocol: its last buffer comes back one element short."""

    name = "short-buffers"

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        out = super().run(dispatch, timeout_s)
        return [*out[:-1], out[-1][:-1]]


def test_a_drawn_case_under_a_validation_message_is_a_validation_error_as_in_a_pack_run() -> None:
    case = cases()[0]
    assert check_case(ReferenceBackend(), case).status is Status.Pass
    result = check_case(UnderValidation(), case)
    assert result.status is Status.ValidationError
    assert result.detail.startswith("1 validation message(s) on its dispatch (outputs: Pass)")


def test_a_backend_returning_short_buffers_is_named_not_judged_as_a_failing_device() -> None:
    with pytest.raises(BackendContractError, match="backend short-buffers returned .* elements for buffer"):
        check_case(ShortBuffers(), cases()[0])


def _planted(culprit: int, dispatched: list[int]):
    """A dispatch over integers that fails whole (a hang) when it holds ``culprit``."""
    def dispatch(group: list[int]) -> Dispatched:
        dispatched.append(len(group))
        if culprit in group:
            exc = BackendError("planted hang")
            return Dispatched([CaseResult(str(i), Status.Crash) for i in group], None, exc, 0.0)
        return Dispatched([CaseResult(str(i), Status.Pass) for i in group], [], None, 0.0)
    return dispatch


def test_bisection_isolates_one_culprit_of_eight_in_four_dispatches_and_runs_every_other_case() -> None:
    recorded: list[CaseResult] = []
    dispatched: list[int] = []
    bisection = Bisection(_planted(5, dispatched), str, recorded.append)
    bisection.run(list(range(8)))
    assert bisection.steps == 4 and bisection.culprits == 1
    assert sorted(int(r.name) for r in recorded) == list(range(8))
    bad = [r for r in recorded if r.status is not Status.Pass]
    assert [r.name for r in bad] == ["5"]
    assert "culprit isolated by bisection from a batch of 8 in 4 dispatches" in bad[0].detail
    assert dispatched[0] == 8 and sum(dispatched) < 8 * 3  # not case by case


def test_validation_modes_differ_only_in_how_the_module_is_checked() -> None:
    case = cases()[0]
    v = case.variant()
    checked = compile_variant(v, case.family, validation="if-installed")
    fast = compile_variant(v, case.family, validation="in-process")
    bare = compile_variant(v, case.family, validation="no-module")
    assert fast == checked and checked.spirv[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number
    assert bare.spirv == b"" and bare == dataclasses.replace(checked, spirv=b"")
    with pytest.raises(ToolchainError, match="unknown validation 'fast' -> use one of required, if-installed"):
        compile_variant(v, case.family, validation="fast")  # type: ignore[arg-type]
