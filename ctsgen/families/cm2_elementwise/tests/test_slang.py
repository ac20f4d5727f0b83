"""cm2-elementwise along the slang route: every stratum's drawn variants compile through Slang and pass
spirv-val with the same signature as the GLSL, a small slang pack passes on the reference backend,
and a tile that would break Slang's ``Aligned 16`` is refused in one line."""

from __future__ import annotations

import pytest

from ctsgen.families.cm2_elementwise.case import PerElementVariant
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.cm2_elementwise import Op
from ctsgen.toolchain.routes import RouteRefusedError
from tests.slang_route import slang_pack_passes_on_the_reference, strata_compile_along_slang

OP_PER_ELEMENT = 5369  # OpCooperativeMatrixPerElementOpNV


def test_every_stratum_compiles_along_slang_with_the_glsl_signature() -> None:
    assert strata_compile_along_slang("cm2-elementwise", OP_PER_ELEMENT) >= 12


def test_the_run_time_values_reach_the_function_without_a_functor() -> None:
    """A functor would reach Func as a value where Func takes a pointer (docs/repros/
    slang-mapelement-functor): lavapipe read its ``s`` as 0. The values are static globals instead."""
    m = MatrixType(ComponentType.float16, Scope.Subgroup, 8, 8, MatrixUse.A, 8)
    for op in Op:
        source = PerElementVariant(op, m).slang()
        assert "struct" not in source and "MapElement(elemOp)" in source
        assert "static half s;" in source


def test_a_slang_pack_passes_on_the_reference(tmp_path) -> None:
    slang_pack_passes_on_the_reference("cm2-elementwise", tmp_path)


def test_a_tile_off_slangs_16_byte_alignment_is_refused_in_one_line() -> None:
    m = MatrixType(ComponentType.uint8, Scope.Subgroup, 2, 4, MatrixUse.A, 64)  # 8 bytes a tile
    assert "struct" not in PerElementVariant(Op.select, m, 1).slang()  # one tile starts where the case does
    with pytest.raises(RouteRefusedError) as info:
        PerElementVariant(Op.select, m, 2).slang()
    assert "\n" not in str(info.value) and "Aligned 16" in str(info.value)
