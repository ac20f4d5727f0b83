"""Family ``cm2-reduce``: OpCooperativeMatrixReduceNV (Row, Column, Row|Column, 2x2)."""

from ctsgen.core.family import FamilySpec
from ctsgen.families.cm2_shared import cm2_needs
from ctsgen.families.cm2_reduce.case import FAMILY_NAME, ReduceCase, ReduceVariant, h100_model
from ctsgen.families.cm2_reduce.coverage import tables
from ctsgen.families.cm2_reduce.strategy import reduce_cases_for, reduce_variants, strata
from ctsgen.families.cm2_reduce.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=ReduceCase, variant_type=ReduceVariant, strata_fn=strata,
    variants_fn=reduce_variants, cases_for_fn=reduce_cases_for, coverage=tables,
    numeric_model=h100_model,
    needs=cm2_needs("cooperativeMatrixReductions"),
    mutants=tuple(MUTANTS),
)
