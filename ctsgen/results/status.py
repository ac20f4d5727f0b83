"""deqp-runner's statuses, and ctsgen's verdicts mapped onto them.

deqp-runner (Mesa's CI runner for VK-GL-CTS) names ten statuses: Pass, Fail, Skip, Crash,
Flake, Warn, Missing, ExpectedFail, UnexpectedPass and Timeout. A run passes when every case's
status is a success (:meth:`DeqpStatus.is_success`). ctsgen's own verdicts
(:class:`ctsgen.core.verdict.Status`, the CTS's result codes plus three of ctsgen's) map onto
them as deqp-runner maps the CTS's (docs/ci.md has the table):

* NotSupported -> Skip, QualityWarning -> Warn (as deqp-runner maps the CTS's);
* BuildTimeout -> Timeout: a pipeline build that exceeded its bound is a Timeout to CI, and the
  JSON-lines record keeps the distinction;
* DeviceLost -> Crash: the device, not one dispatch, is gone, as when the CTS process dies;
* ModelMismatch -> Warn: within the spec's tolerance, only unlike the device model
  ``--numerics`` named, so never a failure, as in ``ctsgen run`` without a baseline;
* ValidationError (``--validation``: the layer reported messages on the case's dispatch) is kept:
  neither a Pass nor a driver Fail, it has no deqp-runner equivalent. A results.csv line with it
  keeps the layout, but deqp-runner itself would not read that status.

One difference from deqp-runner, deliberate: UnexpectedPass is a success here (the run exits 0
and says the baseline can shrink); deqp-runner fails such a run.
"""

from __future__ import annotations

import enum

from ctsgen.core.verdict import Status


class DeqpStatus(str, enum.Enum):
    """A case's status as deqp-runner writes it in ``results.csv``."""

    Pass = "Pass"
    Fail = "Fail"
    Skip = "Skip"
    Crash = "Crash"
    Flake = "Flake"
    Warn = "Warn"
    Missing = "Missing"
    ExpectedFail = "ExpectedFail"
    UnexpectedPass = "UnexpectedPass"
    Timeout = "Timeout"
    #: ctsgen's one status beyond deqp-runner's: the validation layer reported messages (``--validation``)
    ValidationError = "ValidationError"

    @property
    def is_success(self) -> bool:
        """Whether a run with this status among its cases can pass (see the module docstring)."""
        return not self.is_failing

    @property
    def is_unexpected(self) -> bool:
        """Whether failures.csv lists it: a failure nothing expects, or an UnexpectedPass."""
        return not self.is_success or self is DeqpStatus.UnexpectedPass

    @property
    def is_failing(self) -> bool:
        """Whether the case itself did not work (what a baseline may expect, and a re-run may clear)."""
        return self in _FAILING


_FAILING = frozenset({DeqpStatus.Fail, DeqpStatus.Crash, DeqpStatus.Timeout, DeqpStatus.Missing,
                      DeqpStatus.ValidationError})

#: ctsgen verdict -> deqp-runner status (the module docstring says why for each of ctsgen's own).
FROM_CTSGEN: dict[Status, DeqpStatus] = {
    Status.Pass: DeqpStatus.Pass, Status.Fail: DeqpStatus.Fail, Status.NotSupported: DeqpStatus.Skip,
    Status.QualityWarning: DeqpStatus.Warn, Status.Timeout: DeqpStatus.Timeout,
    Status.BuildTimeout: DeqpStatus.Timeout, Status.DeviceLost: DeqpStatus.Crash, Status.Crash: DeqpStatus.Crash,
    Status.ModelMismatch: DeqpStatus.Warn, Status.ValidationError: DeqpStatus.ValidationError,
}


def deqp_status(status: Status) -> DeqpStatus:
    """The deqp-runner status of a ctsgen verdict."""
    return FROM_CTSGEN[status]


def with_baseline(status: DeqpStatus, expected: DeqpStatus | None) -> DeqpStatus:
    """``status`` judged against the status a baseline lists for the case (None: not listed),
    with deqp-runner's rules: a failure the baseline lists is ExpectedFail; a listed case that
    now works, or fails more mildly (Fail where a Crash or Timeout was listed), is
    UnexpectedPass; anything else keeps its status. A listed ExpectedFail (a baseline cut
    from an earlier results.csv) counts as the failure it was."""
    if expected is None:
        return status
    if expected is DeqpStatus.ExpectedFail and status in (DeqpStatus.Fail, DeqpStatus.Crash, DeqpStatus.Timeout):
        return DeqpStatus.ExpectedFail
    if status is expected and status.is_failing:
        return DeqpStatus.ExpectedFail
    improved = {DeqpStatus.Pass: (DeqpStatus.Fail, DeqpStatus.Crash, DeqpStatus.Timeout, DeqpStatus.Missing,
                                  DeqpStatus.ExpectedFail),
                DeqpStatus.Warn: (DeqpStatus.Fail, DeqpStatus.Crash, DeqpStatus.Timeout, DeqpStatus.ExpectedFail),
                DeqpStatus.Fail: (DeqpStatus.Crash, DeqpStatus.Timeout)}
    if expected in improved.get(status, ()):
        return DeqpStatus.UnexpectedPass
    return status
