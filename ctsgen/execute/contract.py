"""What a backend's results must look like before any verdict is drawn from them.

A backend returns one array per buffer of the dispatch (the parameter buffer
first), each at least as long as the buffer it was given
(docs/third-party-backend.md). A backend that breaks this has a bug of its
own: judging its short or mistyped buffers would blame the device with Fail
verdicts, so the run stops with an error naming the backend, the buffer and
the sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ctsgen.core.shader import Dispatch
from ctsgen.errors import UserError


class BackendContractError(UserError):
    """A backend returned results that do not fit the dispatch it was given."""


def check_outputs(backend_name: str, dispatch: Dispatch, out: Sequence[np.ndarray]) -> None:
    names = ["params"] + [spec.name for spec in dispatch.variant.buffers]
    fix = "-> fix the backend's run() to return every buffer it was given, at full size (docs/third-party-backend.md)"
    if len(out) != len(dispatch.buffers):
        raise BackendContractError(f"backend {backend_name} returned {len(out)} buffers for variant "
                                   f"{dispatch.variant.id}, which has {len(dispatch.buffers)} {fix}")
    for name, given, got in zip(names, dispatch.buffers, out):
        got = np.asarray(got)
        if got.size < given.size:
            raise BackendContractError(f"backend {backend_name} returned {got.size} elements for buffer {name} "
                                       f"of variant {dispatch.variant.id}, given {given.size} {fix}")
