"""Family ``tensor-layout``: cooperative-matrix loads and stores through a tensor layout."""

from ctsgen.core.family import FamilySpec
from ctsgen.ops.cm2 import cm2_needs
from ctsgen.ops.tensor_layout_case import FAMILY_NAME, LayoutVariant, TensorLayoutCase, expected_on
from ctsgen.families.tensor_layout.coverage import tables
from ctsgen.strategies.tensor_layout import (
    hazardous_layout_cases,
    layout_cases,
    layout_variants,
    strata,
)
from ctsgen.families.tensor_layout.mutants import MUTANTS

FAMILY = FamilySpec(
    name=FAMILY_NAME, case_type=TensorLayoutCase, variant_type=LayoutVariant, strata_fn=strata,
    variants_fn=layout_variants, cases_for_fn=layout_cases,
    hazardous=hazardous_layout_cases, coverage=tables, expectation=expected_on,
    needs=cm2_needs("cooperativeMatrixTensorAddressing"),
    mutants=tuple(MUTANTS), bulk_draws=True,
)
