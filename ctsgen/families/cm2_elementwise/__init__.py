"""Family ``cm2-elementwise``: OpCooperativeMatrixPerElementOpNV with coordinate-dependent functions."""

from ctsgen.core.family import FamilySpec
from ctsgen.ops.cm2 import cm2_needs
from ctsgen.families.cm2_elementwise.case import FAMILY_NAME, PerElementCase, PerElementVariant
from ctsgen.families.cm2_elementwise.coverage import tables
from ctsgen.families.cm2_elementwise.strategy import (
    per_element_cases_for,
    per_element_variants,
    strata,
)
from ctsgen.families.cm2_elementwise.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=PerElementCase, variant_type=PerElementVariant, strata_fn=strata,
    variants_fn=per_element_variants, cases_for_fn=per_element_cases_for, coverage=tables,
    needs=cm2_needs("cooperativeMatrixPerElementOperations"),
    mutants=tuple(MUTANTS), bulk_draws=True,
)
