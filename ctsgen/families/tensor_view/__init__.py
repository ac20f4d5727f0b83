"""Family ``tensor-view``: cooperative-matrix loads and stores through a tensor layout and a tensor view."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.tensor_view.case import FAMILY_NAME, TensorViewCase, ViewVariant
from ctsgen.families.tensor_view.strategy import strata, tensor_view_cases, view_cases, view_variants


class TensorViewFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[ViewVariant]:
        return view_variants(options, **pinned)

    def cases_for(self, variant: ViewVariant, options: StrategyOptions) -> st.SearchStrategy[TensorViewCase]:
        return view_cases(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[TensorViewCase]:
        return tensor_view_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> TensorViewCase:
        return TensorViewCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> ViewVariant:
        return ViewVariant.from_json(obj)


FAMILY = TensorViewFamily()
