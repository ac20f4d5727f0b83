"""deqp-runner's statuses, its baseline rules, and ctsgen's verdicts mapped onto them.

Followed: deqp-runner 0.20.3 (``src/runner_results.rs``: ``RunnerStatus``, its ``FromStr``,
``is_success`` and ``with_baseline``; docs/ci.md cites it). It names Pass, Fail, Skip, Crash,
Flake, KnownFlake, Warn, Missing, ExpectedFail, Timeout and ``UnexpectedImprovement(S)``, S one of
the test statuses Pass, Fail, Crash, Skip, Warn, Timeout: a case the baseline lists as failing that
now gives S. A run passes when every case's status is a success (:attr:`DeqpStatus.is_success`).
ctsgen's own verdicts (:class:`ctsgen.core.verdict.Status`, the CTS's result codes plus three of
ctsgen's) map onto them as deqp-runner maps the CTS's (docs/ci.md has the table):

* NotSupported -> Skip, QualityWarning -> Warn (as deqp-runner maps the CTS's);
* BuildTimeout -> Timeout: a pipeline build that exceeded its bound is a Timeout to CI, and the
  JSON-lines record keeps the distinction;
* DeviceLost -> Crash: the device, not one dispatch, is gone, as when the CTS process dies;
* ModelMismatch -> Warn: within the spec's tolerance, only unlike the device model
  ``--numerics`` named, so never a failure, as in ``ctsgen run`` without a baseline;
* ValidationError (``--validation``: the layer reported messages on the case's dispatch) is kept:
  neither a Pass nor a driver Fail, it has no deqp-runner equivalent; against a baseline it is
  judged as a Fail is (listed ValidationError: ExpectedFail), and a listed one that now passes
  or skips is an UnexpectedImprovement.

``UnexpectedPass``, the spelling of deqp-runner 0.1-0.5 (and of ctsgen before it followed 0.20),
is still read in a baseline, as a status that expects nothing; it is never written.
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
    KnownFlake = "KnownFlake"
    Warn = "Warn"
    Missing = "Missing"
    ExpectedFail = "ExpectedFail"
    Timeout = "Timeout"
    ImprovedPass = "UnexpectedImprovement(Pass)"
    ImprovedFail = "UnexpectedImprovement(Fail)"
    ImprovedCrash = "UnexpectedImprovement(Crash)"
    ImprovedSkip = "UnexpectedImprovement(Skip)"
    ImprovedWarn = "UnexpectedImprovement(Warn)"
    ImprovedTimeout = "UnexpectedImprovement(Timeout)"
    #: read in old baselines only (module docstring)
    UnexpectedPass = "UnexpectedPass"
    #: ctsgen's one status beyond deqp-runner's: the validation layer reported messages (``--validation``)
    ValidationError = "ValidationError"

    @property
    def is_success(self) -> bool:
        """deqp-runner's ``is_success``: whether a run with this status among its cases can pass."""
        return self in _SUCCESS

    @property
    def is_improvement(self) -> bool:
        """An ``UnexpectedImprovement(...)``: the baseline lists the case as failing and it did better."""
        return self.value.startswith("UnexpectedImprovement(")

    @property
    def is_failing(self) -> bool:
        """Whether the case itself did not work (what a baseline may expect, and a re-run may clear)."""
        return self in _FAILING


_SUCCESS = frozenset({DeqpStatus.Pass, DeqpStatus.Skip, DeqpStatus.Warn, DeqpStatus.Flake, DeqpStatus.KnownFlake,
                      DeqpStatus.ExpectedFail})
_FAILING = frozenset({DeqpStatus.Fail, DeqpStatus.Crash, DeqpStatus.Timeout, DeqpStatus.Missing,
                      DeqpStatus.ValidationError, DeqpStatus.ImprovedFail, DeqpStatus.ImprovedCrash,
                      DeqpStatus.ImprovedTimeout})
#: improvements ``--improvements-pass`` lets pass: the case ran and did better. An
#: UnexpectedImprovement(Skip) never passes: a listed failure that no longer runs proved nothing.
RAN_BETTER = frozenset({DeqpStatus.ImprovedPass, DeqpStatus.ImprovedWarn, DeqpStatus.ImprovedFail})


def lets_pass(status: DeqpStatus, improvements_pass: bool) -> bool:
    """Whether a case of ``status`` lets a run pass: a success, or under ``--improvements-pass`` one
    of :data:`RAN_BETTER`."""
    return status.is_success or (improvements_pass and status in RAN_BETTER)


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


_S = DeqpStatus
_LISTED_FAILING = frozenset({_S.Fail, _S.Crash, _S.Missing, _S.Timeout, _S.ValidationError})
#: deqp-runner's ``with_baseline``: a run's status -> (what the baseline lists -> the status judged).
#: A pair not in the table keeps the run's status. ValidationError rows are ctsgen's (module docstring).
WITH_BASELINE: dict[DeqpStatus, dict[DeqpStatus, DeqpStatus]] = {
    _S.Fail: {_S.Fail: _S.ExpectedFail, _S.ExpectedFail: _S.ExpectedFail,
              _S.Crash: _S.ImprovedFail, _S.Timeout: _S.ImprovedFail},
    _S.Pass: {s: _S.ImprovedPass for s in _LISTED_FAILING},
    _S.Crash: {_S.Crash: _S.ExpectedFail, _S.ExpectedFail: _S.ExpectedFail},
    _S.Warn: {_S.Fail: _S.ImprovedWarn, _S.Crash: _S.ImprovedWarn, _S.Warn: _S.ExpectedFail},
    _S.Skip: {s: _S.ImprovedSkip for s in _LISTED_FAILING},
    _S.Timeout: {_S.Timeout: _S.ExpectedFail},
    _S.ValidationError: {_S.ValidationError: _S.ExpectedFail, _S.ExpectedFail: _S.ExpectedFail},
}


def with_baseline(status: DeqpStatus, expected: DeqpStatus | None) -> DeqpStatus:
    """``status`` judged against the status a baseline lists for the case (None: not listed), by
    deqp-runner's ``with_baseline`` (:data:`WITH_BASELINE`). Missing, Flake and KnownFlake are never
    judged against a baseline, as there."""
    if expected is None:
        return status
    return WITH_BASELINE.get(status, {}).get(expected, status)
