"""Family ``decode-vector``: decode loads with both a DecodeFunc and a DecodeVectorFunc (V = 2, 4, 8)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.decode_vector.case import FAMILY_NAME, DecodeVectorCase, DecodeVectorVariant
from ctsgen.families.decode_vector.strategy import (
    all_decode_vector_cases, decode_vector_cases, decode_vector_variants, strata,
)


class DecodeVectorFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[DecodeVectorVariant]:
        return decode_vector_variants(options, **pinned)

    def cases_for(self, variant: DecodeVectorVariant, options: StrategyOptions
                  ) -> st.SearchStrategy[DecodeVectorCase]:
        return decode_vector_cases(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[DecodeVectorCase]:
        return all_decode_vector_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> DecodeVectorCase:
        return DecodeVectorCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> DecodeVectorVariant:
        return DecodeVectorVariant.from_json(obj)


FAMILY = DecodeVectorFamily()
