"""Family ``coopmat-khr``: VK_KHR_cooperative_matrix alone (loads, stores, element-wise arithmetic,
conversions, MulAdd) through OpCooperativeMatrixLoadKHR / StoreKHR: what every Mesa driver runs."""

from ctsgen.core.family import FamilySpec
from ctsgen.device.profile import Requirements
from ctsgen.families.coopmat_khr.case import EXTENSION, FAMILY_NAME, FEATURE, KhrCase, KhrVariant
from ctsgen.families.coopmat_khr.coverage import tables
from ctsgen.families.coopmat_khr.mutants import MUTANTS
from ctsgen.families.coopmat_khr.strategy import khr_cases_for, khr_variants, strata

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=KhrCase, variant_type=KhrVariant, strata_fn=strata,
    variants_fn=khr_variants, cases_for_fn=khr_cases_for, coverage=tables,
    needs=Requirements(extensions=(EXTENSION,), features=(FEATURE,)),
    mutants=tuple(MUTANTS), bulk_draws=True,
)
