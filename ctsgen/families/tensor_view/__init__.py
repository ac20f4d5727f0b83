"""Family ``tensor-view``: cooperative-matrix loads and stores through a tensor layout and a tensor view."""

from ctsgen.core.family import FamilySpec
from ctsgen.ops.cm2 import cm2_needs
from ctsgen.ops.tensor_view_case import FAMILY_NAME, TensorViewCase, ViewVariant, expected_on
from ctsgen.families.tensor_view.coverage import tables
from ctsgen.strategies.tensor_view import strata, view_cases, view_variants
from ctsgen.families.tensor_view.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=TensorViewCase, variant_type=ViewVariant, strata_fn=strata,
    variants_fn=view_variants, cases_for_fn=view_cases, coverage=tables, expectation=expected_on,
    needs=cm2_needs("cooperativeMatrixTensorAddressing"),
    mutants=tuple(MUTANTS), bulk_draws=True,
)
