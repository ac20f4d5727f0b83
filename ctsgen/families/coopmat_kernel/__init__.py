"""Family ``coopmat-kernel``: kernels (ctsgen.kernel) through VK_KHR_cooperative_matrix alone: loops
that carry matrices, branches, calls, arrays, Workgroup-memory staging between subgroups with
barriers, element access. What every Mesa driver with cooperative matrices runs."""

from ctsgen.core.family import FamilySpec
from ctsgen.device.profile import Requirements
from ctsgen.families.coopmat_kernel.case import EXTENSION, FAMILY_NAME, FEATURE, KernelCase, KernelVariant
from ctsgen.families.coopmat_kernel.coverage import tables
from ctsgen.families.coopmat_kernel.mutants import MUTANTS
from ctsgen.families.coopmat_kernel.strategy import hazardous_kernel_cases, kernel_cases_for, kernel_variants, strata

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=KernelCase, variant_type=KernelVariant, strata_fn=strata,
    variants_fn=kernel_variants, cases_for_fn=kernel_cases_for, coverage=tables,
    needs=Requirements(extensions=(EXTENSION,), features=(FEATURE,)),
    mutants=tuple(MUTANTS), batch_cap=64, hazardous=hazardous_kernel_cases,
)
