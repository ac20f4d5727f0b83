"""Family ``cm2-program``: straight-line programs of cooperative-matrix operations."""

from ctsgen.core.family import FamilySpec
from ctsgen.ops.cm2 import cm2_needs
from ctsgen.families.cm2_program.case import (FAMILY_NAME, FLEXIBLE, ProgramCase, ProgramVariant, expected_on,
                                              tolerance_on)
from ctsgen.families.cm2_program.coverage import tables
from ctsgen.families.cm2_program.debug import intermediates
from ctsgen.families.cm2_program.strategy import omissions, program_cases_for, program_variants, strata
from ctsgen.families.cm2_program.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=ProgramCase, variant_type=ProgramVariant, strata_fn=strata,
    variants_fn=program_variants, cases_for_fn=program_cases_for, coverage=tables,
    expectation=expected_on, tolerance=tolerance_on, intermediates=intermediates, omissions=omissions,
    # Loads and stores go through tensor layouts or (no cm2 feature) KHR pointers. Every matrix is a 16 x 16
    # Subgroup-scope type at the device's subgroup size, which needs requirements naming no size: on every
    # cm2 device with a profile here they come from flexible dimensions (ANV's KHR list has only 8 x 8 x 16
    # and 8 x 8 x 32, and no flexible dimensions); a device listing them without it is refused too
    # (docs/spec-decisions.md "khr-routes").
    needs=cm2_needs(FLEXIBLE),
    batch_cap=48,  # a case takes ~120 bytes of choices on average (~220 in heavy programs): 48 average ones fit 8,192
    mutants=tuple(MUTANTS),
)
