"""Family ``tensor-layout``: cooperative-matrix loads and stores through a tensor layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.tensor_layout.case import FAMILY_NAME, LayoutVariant, TensorLayoutCase
from ctsgen.families.tensor_layout.strategy import (
    hazardous_layout_cases,
    layout_cases,
    layout_variants,
    strata,
    tensor_layout_cases,
)


class TensorLayoutFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[LayoutVariant]:
        return layout_variants(options, **pinned)

    def cases_for(self, variant: LayoutVariant, options: StrategyOptions) -> st.SearchStrategy[TensorLayoutCase]:
        return layout_cases(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[TensorLayoutCase]:
        return tensor_layout_cases(options)

    def hazardous_cases(self, options: StrategyOptions, variants: Sequence[LayoutVariant] = ()
                        ) -> st.SearchStrategy[TensorLayoutCase]:
        return hazardous_layout_cases(options, variants)

    def case_from_json(self, obj: dict[str, Any]) -> TensorLayoutCase:
        return TensorLayoutCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> LayoutVariant:
        return LayoutVariant.from_json(obj)


FAMILY = TensorLayoutFamily()
