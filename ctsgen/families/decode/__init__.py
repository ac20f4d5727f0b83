"""Family ``decode``: cooperative-matrix tensor loads through a DecodeFunc (probes and block formats)."""

from ctsgen.core.family import FamilySpec
from ctsgen.ops.cm2 import cm2_needs
from ctsgen.ops.decode_case import FAMILY_NAME, DecodeCase, DecodeVariant, expected_on, tolerance_on
from ctsgen.ops.decode_coverage import tables
from ctsgen.strategies.decode import decode_cases, decode_variants, strata
from ctsgen.families.decode.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=DecodeCase, variant_type=DecodeVariant, strata_fn=strata,
    variants_fn=decode_variants, cases_for_fn=decode_cases, coverage=tables, expectation=expected_on,
    tolerance=tolerance_on,
    needs=cm2_needs("cooperativeMatrixTensorAddressing", "cooperativeMatrixBlockLoads"),
    mutants=tuple(MUTANTS), bulk_draws=True,
)
