"""Family ``coopvec-program``: chains of cooperative-vector layers, the way neural shaders run them."""

from ctsgen.device.profile import Requirements
from ctsgen.core.family import FamilySpec
from ctsgen.families.coopvec_program.case import FAMILY_NAME, ProgramCase, ProgramVariant, expected_on, tolerance_on
from ctsgen.families.coopvec_program.coverage import tables
from ctsgen.families.coopvec_program.strategy import program_cases_for, program_variants, strata
from ctsgen.families.coopvec_program.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=ProgramCase, variant_type=ProgramVariant, strata_fn=strata,
    variants_fn=program_variants, cases_for_fn=program_cases_for, coverage=tables,
    expectation=expected_on, tolerance=tolerance_on,
    # Hypothesis's budget is 8,192 bytes of choices: a variant takes up to ~80, a case ~36 on average
    # (+2 for "another?"), so 192 median cases fit where 256 overran (10 of 35 batches in one run drawn,
    # then discarded); a variant with heavier cases still can (its builds are fast, unlike tensor-layout's)
    batch_cap=192,
    needs=Requirements(extensions=("VK_NV_cooperative_vector",), features=("cooperativeVector",)),
    mutants=tuple(MUTANTS),
)
