"""Family ``decode``: cooperative-matrix tensor loads through a DecodeFunc (probes and block formats)."""

from ctsgen.core.family import FamilySpec
from ctsgen.families.cm2_shared import cm2_needs
from ctsgen.families.decode.case import FAMILY_NAME, DecodeCase, DecodeVariant, expected_on, tolerance_on
from ctsgen.families.decode.coverage import tables
from ctsgen.families.decode.strategy import decode_cases, decode_variants, strata
from ctsgen.families.decode.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=DecodeCase, variant_type=DecodeVariant, strata_fn=strata,
    variants_fn=decode_variants, cases_for_fn=decode_cases, coverage=tables, expectation=expected_on,
    tolerance=tolerance_on,
    needs=cm2_needs("cooperativeMatrixTensorAddressing", "cooperativeMatrixBlockLoads"),
    mutants=tuple(MUTANTS),
)
