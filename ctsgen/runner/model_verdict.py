"""The device-model verdict (``ctsgen run --numerics NAME``).

The spec-tolerance verdict is computed first and stays the conformance verdict. A case that
passes it (Pass or QualityWarning) and whose family predicts it under the selected model
(FamilySpec.numeric_model) is then compared bit for bit with the prediction (the sign of a
zero aside: these shaders do not declare SignedZeroInfNanPreserve); any difference turns the
verdict into ``ModelMismatch``, so a user can tell "wrong by the spec" from "changed from the
known device behaviour".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctsgen.families import get_family
from ctsgen.oracle.models import model_params
from ctsgen.execute.judge import judge_buffer
from ctsgen.core.verdict import CaseResult, Status

MAX_MODEL_MISMATCHES = 8


def model_verdict(result: CaseResult, family: str, parameters: dict[str, Any], buffer_names: list[str],
                  outputs: list[np.ndarray], model: str) -> CaseResult:
    """``result`` (the spec verdict of one case), or ModelMismatch where the outputs differ
    from the model's prediction."""
    if result.status not in (Status.Pass, Status.QualityWarning):
        return result
    fam = get_family(family)
    predict = fam.numeric_model
    if predict is None:
        return result
    expected = predict(fam.case_from_json(parameters), model_params(model))
    if expected is None:
        return result
    for name, got, want in zip(buffer_names, outputs, expected):
        if want is None:
            continue
        bad = judge_buffer(np.asarray(got), np.asarray(want, dtype=got.dtype),
                           {"rule": "bitwise", "signed_zero": False}).bad
        if bad.size:
            mism = [{"buffer": name, "element": int(k), "model": float(want.ravel()[k]),
                     "actual": float(got.ravel()[k])} for k in bad[:MAX_MODEL_MISMATCHES]]
            return CaseResult(result.name, Status.ModelMismatch,
                              f"{bad.size} of {want.size} elements of '{name}' differ from the {model} model "
                              f"(spec verdict: {result.status.value})", mism, result.max_error_ratio)
    return result
