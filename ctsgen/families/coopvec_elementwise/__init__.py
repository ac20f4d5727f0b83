"""Family ``coopvec-elementwise``: SPV_NV_cooperative_vector loads, stores, conversions, arithmetic and bit ops."""

from ctsgen.device.profile import Requirements
from ctsgen.core.family import FamilySpec
from ctsgen.families.coopvec_elementwise.case import (
    FAMILY_NAME,
    ElementwiseCase,
    ElementwiseVariant,
    outputs_on,
)
from ctsgen.families.coopvec_elementwise.coverage import tables
from ctsgen.families.coopvec_elementwise.strategy import (
    elementwise_cases,
    elementwise_variants,
    strata,
)
from ctsgen.families.coopvec_elementwise.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=ElementwiseCase, variant_type=ElementwiseVariant, strata_fn=strata,
    variants_fn=elementwise_variants, cases_for_fn=elementwise_cases,
    coverage=tables,
    # the oracle on given inputs (decision "expected-deviation"): a load or store deviation moves the result
    expectation=lambda case, params, initial: [None, outputs_on(case, params, initial)[0]],
    tolerance=lambda case, params, initial: [None, outputs_on(case, params, initial)[1]],
    needs=Requirements(extensions=("VK_NV_cooperative_vector",), features=("cooperativeVector",)),
    mutants=tuple(MUTANTS),
)
