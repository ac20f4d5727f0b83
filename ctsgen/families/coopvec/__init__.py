"""Family ``coopvec``: SPV_NV_cooperative_vector matrix-vector multiplies and training ops."""

from ctsgen.device.profile import Requirements
from ctsgen.core.family import FamilySpec
from ctsgen.families.coopvec.case import CoopVecCase, h100_model
from ctsgen.families.coopvec.variant import FAMILY_NAME, CoopVecVariant
from ctsgen.families.coopvec.coverage import tables
from ctsgen.families.coopvec.strategy import (coopvec_cases, coopvec_variants,
                                              hazardous_coopvec_cases, strata)
from ctsgen.families.coopvec.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=CoopVecCase, variant_type=CoopVecVariant, strata_fn=strata,
    variants_fn=coopvec_variants, cases_for_fn=coopvec_cases, coverage=tables,
    hazardous=hazardous_coopvec_cases, numeric_model=h100_model,
    needs=Requirements(extensions=("VK_NV_cooperative_vector",), features=("cooperativeVector",)),
    mutants=tuple(MUTANTS),
)
