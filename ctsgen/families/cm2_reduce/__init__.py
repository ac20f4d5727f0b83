"""Family ``cm2-reduce``: OpCooperativeMatrixReduceNV (Row, Column, Row|Column, 2x2)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.cm2_reduce.case import FAMILY_NAME, ReduceCase, ReduceVariant
from ctsgen.families.cm2_reduce.strategy import reduce_cases, reduce_cases_for, reduce_variants, strata


class ReduceFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[ReduceVariant]:
        return reduce_variants(options, **pinned)

    def cases_for(self, variant: ReduceVariant, options: StrategyOptions) -> st.SearchStrategy[ReduceCase]:
        return reduce_cases_for(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[ReduceCase]:
        return reduce_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> ReduceCase:
        return ReduceCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> ReduceVariant:
        return ReduceVariant.from_json(obj)


FAMILY = ReduceFamily()
