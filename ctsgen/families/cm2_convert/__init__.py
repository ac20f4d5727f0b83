"""Family ``cm2-convert``: component and Use conversions (Op*Convert, OpCooperativeMatrixConvertNV) and OpCooperativeMatrixTransposeNV."""

from ctsgen.core.family import FamilySpec
from ctsgen.families.cm2_shared import cm2_needs
from ctsgen.families.cm2_convert.case import FAMILY_NAME, ConvertCase, ConvertVariant, h100_model
from ctsgen.families.cm2_convert.coverage import tables
from ctsgen.families.cm2_convert.strategy import convert_cases_for, convert_variants, strata
from ctsgen.families.cm2_convert.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=ConvertCase, variant_type=ConvertVariant, strata_fn=strata,
    variants_fn=convert_variants, cases_for_fn=convert_cases_for, coverage=tables,
    numeric_model=h100_model,
    needs=cm2_needs(),
    mutants=tuple(MUTANTS),
)
