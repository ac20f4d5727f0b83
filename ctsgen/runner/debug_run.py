"""The debug re-run of a failing case: which intermediate value is the first one that differs.

A family that declares ``FamilySpec.intermediates`` (cm2-program: a program's nodes) re-emits
the case's shader so that it also stores each intermediate value to debug buffers. The debug
shader is compiled and validated like any variant (:func:`compile_variant`), run once on the
same backend that failed (:func:`ctsgen.execute.run.run_cases`), and each value read back is compared, in order, with the oracle's
value of it, bit for bit (the case's compare rule's ``signed_zero`` setting kept), or within its
bound where the family gives the intermediates' tolerances (a float-domain program). The first
that differs is where the device first departs from the oracle: a value whose operands all
matched is wrong by itself. With expected deviations the oracle's intermediates are computed
under them (:mod:`ctsgen.mutants.deviations`), as the failure was judged.

The extra stores change the shader, so a driver bug may hide in the debug variant; then no
node differs and the report says the debug re-run did not reproduce the failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ctsgen.backends.base import Backend
from ctsgen.mutants.deviations import applied
from ctsgen.execute.judge import describe, judge_buffer
from ctsgen.execute.run import CaseInput, run_cases
from ctsgen.core.family import Case, Family
from ctsgen.toolchain.variants import compile_variant

#: Differing elements a report quotes.
EXAMPLES = 3


@dataclass
class NodeDifference:
    """The first intermediate that differs: its position, label and how much of it differs."""

    index: int
    label: str
    bad: int
    total: int
    examples: list[str] = field(default_factory=list)  # "(row, col): expected X, got Y"

    def line(self) -> str:
        eg = f", e.g. {'; '.join(self.examples)}" if self.examples else ""
        return f"first differing node: {self.label} ({self.bad} of {self.total} elements differ{eg})"


@dataclass
class DebugRun:
    """What a debug re-run found: the computation's listing, the debug shader's GLSL, the first
    differing node (None if none differs) and, when there is no such node, why."""

    listing: list[str]
    glsl: str
    first: NodeDifference | None
    note: str = ""

    def line(self) -> str:
        return self.first.line() if self.first is not None else self.note


def _value(a: np.ndarray, k: int) -> str:
    return repr(a.ravel()[k].item())


def _position(shape: tuple[int, ...], k: int) -> str:
    at = np.unravel_index(k, shape)
    return "(" + ", ".join(str(int(x)) for x in at) + ")" if len(shape) > 1 else f"[{int(at[0])}]"


def first_difference(labels: Sequence[str], expected: Sequence[np.ndarray], actual: Sequence[np.ndarray],
                     signed_zero: bool | None = None, tolerance: Sequence[np.ndarray] | None = None
                     ) -> NodeDifference | None:
    """The first position k where ``actual[k]`` differs from ``expected[k]`` bit for bit
    (``signed_zero=False``: +0 and -0 count as equal) or, given ``tolerance``, by more than
    ``tolerance[k]`` (values compared), with up to EXAMPLES of its elements."""
    rule = {"rule": "bitwise" if tolerance is None else "tolerance", "signed_zero": signed_zero}
    for k, (label, want, got) in enumerate(zip(labels, expected, actual)):
        got = np.asarray(got).reshape(want.shape)
        bad = judge_buffer(got, want, rule, None if tolerance is None else tolerance[k]).bad
        if bad.size:
            examples = [f"{_position(want.shape, int(e))}: expected {_value(want, int(e))}, got {_value(got, int(e))}"
                        for e in bad[:EXAMPLES]]
            return NodeDifference(k, label, int(bad.size), int(want.size), examples)
    return None


def debug_rerun(family: Family, case: Case, backend: Backend, deviations: Sequence[str] = (),
                timeout_s: float = 10.0) -> DebugRun | None:
    """Run ``case``'s debug variant once on ``backend`` and find its first differing node;
    None if the family declares no intermediates."""
    if family.intermediates is None:
        return None
    data = case.data()  # the case's inputs; deviations change only the expected intermediates
    with applied(deviations):
        probe = family.intermediates(case, data)
    glsl = probe.variant.glsl()
    sv = compile_variant(probe.variant, case.family, validation="if-installed", validator=family.validator)
    # the debug buffers are compared node by node below, not by the judge: none is expected
    unjudged = CaseInput(case.name(), probe.data.params, probe.data.initial, [None] * len(sv.buffers), None,
                         case.compare_rule().to_json())
    done = run_cases(backend, sv, [unjudged], timeout_s)
    if done.outputs is None:
        return DebugRun(probe.listing, glsl, None, f"the debug re-run gave no result: {describe(done.error)}")
    actual = probe.actual(done.outputs[0])
    first = first_difference(probe.labels, probe.expected, actual, case.compare_rule().signed_zero, probe.tolerance)
    note = "" if first else ("every node's value matches the oracle in the debug re-run: the failure did not "
                             "reproduce with the debug stores (they change the shader the driver compiles)")
    return DebugRun(probe.listing, glsl, first, note)
