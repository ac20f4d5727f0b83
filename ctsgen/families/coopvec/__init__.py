"""Family ``coopvec``: SPV_NV_cooperative_vector matrix-vector multiplies and training ops."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.coopvec.case import FAMILY_NAME, CoopVecCase, CoopVecVariant
from ctsgen.families.coopvec.strategy import all_cases, coopvec_cases, coopvec_variants, strata


class CoopVecFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: Any) -> st.SearchStrategy[CoopVecVariant]:
        return coopvec_variants(options, **pinned)

    def cases_for(self, variant: CoopVecVariant, options: StrategyOptions) -> st.SearchStrategy[CoopVecCase]:
        return coopvec_cases(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[CoopVecCase]:
        return all_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> CoopVecCase:
        return CoopVecCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> CoopVecVariant:
        return CoopVecVariant.from_json(obj)


FAMILY = CoopVecFamily()
