"""Family ``cm2-gemm``: the proposal's GEMM tile through tensor-layout slices (flexible dimensions, workgroup scope)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctsgen.families.base import StrategyOptions
from ctsgen.families.cm2_gemm.case import FAMILY_NAME, GemmCase, GemmVariant
from ctsgen.families.cm2_gemm.strategy import gemm_cases, gemm_cases_for, gemm_variants, strata


class GemmFamily:
    """Entry point the registry finds (see ctsgen.families.base.Family)."""

    name = FAMILY_NAME

    def strata(self) -> list[dict[str, object]]:
        return strata()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[GemmVariant]:
        return gemm_variants(options, **pinned)

    def cases_for(self, variant: GemmVariant, options: StrategyOptions) -> st.SearchStrategy[GemmCase]:
        return gemm_cases_for(variant, options)

    def cases(self, options: StrategyOptions) -> st.SearchStrategy[GemmCase]:
        return gemm_cases(options)

    def case_from_json(self, obj: dict[str, Any]) -> GemmCase:
        return GemmCase.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> GemmVariant:
        return GemmVariant.from_json(obj)


FAMILY = GemmFamily()
