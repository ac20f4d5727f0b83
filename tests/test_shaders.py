"""Every tensor-layout shader variant compiles (glslang) and validates (spirv-val)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctsgen.device.profile import default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.families.tensor_layout import FAMILY
from ctsgen.ops.tensor_layout_case import LayoutVariant
from ctsgen.ops.tensor_layout import Operation
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType, Scope
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import compile_glsl, validate_spirv

PROFILE = default_profile()


def _stratum_variants() -> list[LayoutVariant]:
    """One deterministic draw per operation x Dim x clampMode cell."""
    out = []
    for i, cell in enumerate(FAMILY.strata()):
        out.append(draw_examples(FAMILY.variants(StrategyOptions(), **cell), 1, 1000 + i)[0])
    return out


def _component_variants() -> list[LayoutVariant]:
    """Every component type (listed or flexible types of the H100), load and store, incl. workgroup scope."""
    types = PROFILE.matrix_types() + PROFILE.flexible_granules()
    out = []
    for comp in ComponentType:
        sub = next(m for m in types if m.component is comp and m.scope is Scope.Subgroup)
        wg = next(m for m in types if m.component is comp and m.scope is Scope.Workgroup)
        out.append(LayoutVariant(Operation.load, 2, ClampMode.Constant, sub))
        out.append(LayoutVariant(Operation.store, 3, ClampMode.Repeat, wg))
    return out


STRATA = _stratum_variants()
COMPONENTS = _component_variants()


def test_the_sample_covers_every_cell_and_type():
    cells = {(v.operation, v.Dim, v.clampMode) for v in STRATA}
    assert len(cells) == len(FAMILY.strata()) == 2 * 5 * 5
    assert {v.matrix.component for v in COMPONENTS} == set(ComponentType)


def _compile_and_validate(v: LayoutVariant) -> None:
    glsl = v.glsl()
    assert v.id in glsl
    assert f"tensorLayoutNV<{v.Dim}, {v.clampMode.glsl}>" in glsl
    assert ("coopMatLoadTensorNV" in glsl) == (v.operation is Operation.load)
    assert ("coopMatStoreTensorNV" in glsl) == (v.operation is Operation.store)
    spirv = compile_glsl(glsl, f"{v.id}.comp")
    assert spirv[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic, little endian
    validate_spirv(spirv)


@pytest.mark.usefixtures("session_spirv_cache")
@pytest.mark.parametrize("v", STRATA, ids=lambda v: v.id)
def test_stratum_variant_compiles_and_validates(v):
    _compile_and_validate(v)


@pytest.mark.usefixtures("session_spirv_cache")
@pytest.mark.parametrize("v", COMPONENTS, ids=lambda v: v.id)
def test_component_variant_compiles_and_validates(v):
    _compile_and_validate(v)


@pytest.mark.usefixtures("session_spirv_cache")
@pytest.mark.parametrize("mode", list(ClampMode), ids=lambda m: m.name)
def test_flexible_size_compiles(mode):
    m = replace(next(g for g in PROFILE.flexible_granules() if g.scope is Scope.Subgroup), rows=48, cols=32)
    assert PROFILE.supports_matrix(m) is None
    _compile_and_validate(LayoutVariant(Operation.load, 5, mode, m))
