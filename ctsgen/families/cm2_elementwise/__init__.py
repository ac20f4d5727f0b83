"""Family ``cm2-elementwise``: OpCooperativeMatrixPerElementOpNV with coordinate-dependent functions."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.cm2_elementwise.case import FAMILY_NAME, PerElementCase, PerElementVariant
from ctsgen.families.cm2_elementwise.strategy import per_element_cases, per_element_cases_for, per_element_variants, strata


class PerElementFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[PerElementVariant]:
        return per_element_variants(options, **pinned)

    def cases_for(self, variant: PerElementVariant, options: StrategyOptions) -> st.SearchStrategy[PerElementCase]:
        return per_element_cases_for(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[PerElementCase]:
        return per_element_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> PerElementCase:
        return PerElementCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> PerElementVariant:
        return PerElementVariant.from_json(obj)


FAMILY = PerElementFamily()
