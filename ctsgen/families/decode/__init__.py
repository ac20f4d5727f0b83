"""Family ``decode``: cooperative-matrix tensor loads through a DecodeFunc (probes and block formats)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.decode.case import FAMILY_NAME, DecodeCase, DecodeVariant
from ctsgen.families.decode.strategy import all_decode_cases, decode_cases, decode_variants, strata


class DecodeFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[DecodeVariant]:
        return decode_variants(options, **pinned)

    def cases_for(self, variant: DecodeVariant, options: StrategyOptions) -> st.SearchStrategy[DecodeCase]:
        return decode_cases(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[DecodeCase]:
        return all_decode_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> DecodeCase:
        return DecodeCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> DecodeVariant:
        return DecodeVariant.from_json(obj)


FAMILY = DecodeFamily()
