"""Family ``cm2-convert``: component and Use conversions (Op*Convert, OpCooperativeMatrixConvertNV) and OpCooperativeMatrixTransposeNV."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.cm2_convert.case import FAMILY_NAME, ConvertCase, ConvertVariant
from ctsgen.families.cm2_convert.strategy import convert_cases, convert_cases_for, convert_variants, strata


class ConvertFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[ConvertVariant]:
        return convert_variants(options, **pinned)

    def cases_for(self, variant: ConvertVariant, options: StrategyOptions) -> st.SearchStrategy[ConvertCase]:
        return convert_cases_for(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[ConvertCase]:
        return convert_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> ConvertCase:
        return ConvertCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> ConvertVariant:
        return ConvertVariant.from_json(obj)


FAMILY = ConvertFamily()
