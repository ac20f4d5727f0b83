"""Family ``cm2-gemm``: the proposal's GEMM tile through tensor-layout slices (flexible dimensions, workgroup
scope) or through OpCooperativeMatrixLoadKHR / StoreKHR (any device with cooperative matrices)."""

from ctsgen.core.family import FamilySpec
from ctsgen.ops.cm2 import cm2_needs
from ctsgen.families.cm2_gemm.case import FAMILY_NAME, GemmCase, GemmVariant, h100_model
from ctsgen.families.cm2_gemm.coverage import tables
from ctsgen.families.cm2_gemm.strategy import gemm_cases_for, gemm_variants, strata
from ctsgen.families.cm2_gemm.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=GemmCase, variant_type=GemmVariant, strata_fn=strata,
    variants_fn=gemm_variants, cases_for_fn=gemm_cases_for, coverage=tables,
    numeric_model=h100_model,
    needs=cm2_needs(),  # the tensor route's variants need tensor addressing; the khr route's no cm2 feature
    mutants=tuple(MUTANTS), bulk_draws=True,
)
