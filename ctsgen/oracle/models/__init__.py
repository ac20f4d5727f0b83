"""Device numeric models: bit-exact predictions of how one device rounds, where the spec
leaves the order and precision of float arithmetic open (docs/spec-decisions.md, cm2-float-sum-bound).

A model is selected per run (``ctsgen run --numerics h100``); a family that can predict a
case under it declares ``numeric_model`` in its FamilySpec. The spec-tolerance verdict stays
the conformance verdict; a result inside the spec's tolerance that the model does not
reproduce bit for bit is reported as ``ModelMismatch`` ("changed from the known device
behaviour"), never as Fail.
"""

from __future__ import annotations

from ctsgen.oracle.models.h100 import H100, H100Params

#: Models a run may select, by name.
MODELS: dict[str, H100Params] = {"h100": H100}


def model_params(name: str) -> H100Params:
    """The parameters of the named model (ValueError naming the known ones otherwise)."""
    if name not in MODELS:
        raise ValueError(f"unknown numeric model {name!r}; use one of {', '.join(sorted(MODELS))}")
    return MODELS[name]
