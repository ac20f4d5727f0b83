"""Family ``cm2-program``: straight-line programs of cooperative-matrix operations."""

from ctsgen.core.family import FamilySpec
from ctsgen.families.cm2_shared import cm2_needs
from ctsgen.families.cm2_program.case import FAMILY_NAME, ProgramCase, ProgramVariant, expected_on, tolerance_on
from ctsgen.families.cm2_program.coverage import tables
from ctsgen.families.cm2_program.debug import intermediates
from ctsgen.families.cm2_program.strategy import omissions, program_cases_for, program_variants, strata
from ctsgen.families.cm2_program.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=ProgramCase, variant_type=ProgramVariant, strata_fn=strata,
    variants_fn=program_variants, cases_for_fn=program_cases_for, coverage=tables,
    expectation=expected_on, tolerance=tolerance_on, intermediates=intermediates, omissions=omissions,
    needs=cm2_needs("cooperativeMatrixTensorAddressing"),
    batch_cap=48,  # a case takes ~120 bytes of choices on average (~220 in heavy programs): 48 average ones fit 8,192
    mutants=tuple(MUTANTS),
)
