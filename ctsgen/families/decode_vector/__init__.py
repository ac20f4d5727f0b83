"""Family ``decode-vector``: decode loads with both a DecodeFunc and a DecodeVectorFunc (V = 2, 4, 8)."""

from ctsgen.core.family import FamilySpec
from ctsgen.ops.cm2 import cm2_needs
from ctsgen.ops.decode_case import expected_on, tolerance_on
from ctsgen.families.decode_vector.case import EXTENSION, FAMILY_NAME, DecodeVectorCase, DecodeVectorVariant
from ctsgen.families.decode_vector.coverage import tables
from ctsgen.families.decode_vector.validator import VALIDATOR
from ctsgen.families.decode_vector.strategy import (
    decode_vector_cases, decode_vector_variants, strata,
)

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=DecodeVectorCase, variant_type=DecodeVectorVariant, strata_fn=strata,
    variants_fn=decode_vector_variants, cases_for_fn=decode_vector_cases,
    coverage=tables, expectation=expected_on, tolerance=tolerance_on, validator=VALIDATOR,
    needs=cm2_needs("cooperativeMatrixTensorAddressing", "cooperativeMatrixBlockLoads", extensions=(EXTENSION,)),
)
