"""Strategies for cm2-elementwise: a function, a matrix type it is exact for, operands.

Valid by construction: the matrix type is one the profile supports (any
Use, fixed or flexible, subgroup or workgroup scope) and ``op_allows`` it;
``s`` is +-1 or +-2 for floats (exact), any value for integers (wrapping);
r0 / c0 usually inside the matrix, sometimes one past it (no element hit).
Shrinks toward ``affine`` on the smallest float16 subgroup matrix, s = 1,
r0 = c0 = 0, seed 0.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ctsgen.device.profile import default_profile, ProfileLacksError
from ctsgen.core.family import StrategyOptions
from ctsgen.families.cm2_elementwise.case import PerElementCase, PerElementVariant
from ctsgen.ops.cm2_elementwise import Op, op_allows
from ctsgen.ops.cm2 import in_subgroups, most_subgroups, supported_matrices
from ctsgen.model.types import MatrixType, MatrixUse
from ctsgen.strategies.cached import SEEDS, integers


def strata() -> list[dict[str, object]]:
    """Every function x matrix Use."""
    return [{"op": op, "use": use} for op in Op for use in MatrixUse]


@st.composite
def per_element_variants(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(), *,
                         op: Op | None = None, use: MatrixUse | None = None) -> PerElementVariant:
    profile = options.profile or default_profile()

    def matrices(o: Op) -> list[MatrixType]:
        return [m for m in supported_matrices(profile) if (use is None or m.use is use)
                and op_allows(o, m.component, m.rows, m.cols) is None]

    # an unpinned function is drawn among those with a matrix type on the profile
    op = draw(st.sampled_from([o for o in Op if matrices(o)] or list(Op))) if op is None else op
    cands = matrices(op)
    if not cands:
        raise ProfileLacksError(f"device profile {profile.name!r} has no matrix type for {op.value}"
                         f"{'' if use is None else ' with Use ' + use.name}")
    m = draw(st.sampled_from(cands))
    n = draw(st.integers(1, most_subgroups(profile, m)))  # subgroups, each its own tile; shrinks to one
    return PerElementVariant(op, in_subgroups(m, n), n)


_FLOAT_SCALES = st.sampled_from([1.0, 2.0, -1.0, -2.0])


@st.composite
def per_element_cases_for(draw: st.DrawFn, variant: PerElementVariant,
                          options: StrategyOptions = StrategyOptions()) -> PerElementCase:
    m = variant.matrix
    comp = m.component
    if comp.is_float:
        s = draw(_FLOAT_SCALES)
    else:
        info = np.iinfo(comp.dtype)
        s = draw(integers(int(info.min), int(info.max)))
    r0 = draw(integers(0, m.rows))  # == rows: no row selected
    c0 = draw(integers(0, m.cols))
    return PerElementCase(variant, s, r0, c0, draw(SEEDS))
