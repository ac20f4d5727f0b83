"""The coopvec-elementwise coverage tables: hand-placed cases, N ranges at their edges, and the excluded
cells are exactly the signatures the case model refuses (conversions' ieee cells aside: a gap, not a rule)."""

from __future__ import annotations

import pytest

from ctsgen.families.coopvec_elementwise.case import ElementwiseCase, ElementwiseVariant
from ctsgen.families.coopvec_elementwise.coverage import op_label, size_range, tables
from ctsgen.ops.coopvec_elementwise_ops import ELEMENT_TYPES, OPS, Op
from ctsgen.model.types import CoopVecType as T


@pytest.mark.parametrize(("n", "expected"), [(1, "1"), (2, "2-16"), (16, "2-16"), (17, "17-128"), (128, "17-128"),
                                             (129, "129-512"), (512, "129-512"), (513, ">512")])
def test_size_range(n: int, expected: str) -> None:
    assert size_range(n) == expected


def test_labels_name_the_instruction_and_both_integer_twins() -> None:
    assert op_label(Op.fadd) == "OpFAdd"
    assert op_label(Op.idiv) == "OpSDiv / OpUDiv"
    assert op_label(Op.imin) == "GLSL.std.450 SMin / UMin"
    assert op_label(Op.shr) == "OpShiftRightArithmetic / OpShiftRightLogical"


def test_cells_of_three_hand_placed_cases() -> None:
    shr = ElementwiseCase(ElementwiseVariant(Op.shr, T.uint8, T.uint8, 300), 16, 112, edges=True)
    conv = ElementwiseCase(ElementwiseVariant(Op.convert, T.float32, T.uint8, 1))
    nmin = ElementwiseCase(ElementwiseVariant(Op.nmin, T.float16, T.float16, 16, ieee=True), 48, 0)
    by_type, conversions, sizes, controls, offsets, data = tables([c.to_json() for c in (shr, conv, nmin)])

    assert by_type.counts[("OpShiftRightArithmetic / OpShiftRightLogical", "uint8")] == 1
    assert by_type.counts[("conversions (by source type)", "float32")] == 1  # counted by its source type
    assert by_type.counts[("GLSL.std.450 NMin", "float16")] == 1
    assert conversions.counts == {("float32", "uint8"): 1}  # the other two are no conversions
    assert sizes.counts == {("129-512", "bits"): 1, ("1", "convert"): 1, ("2-16", "float min/max"): 1}
    # only float vectors: the uint8 shift is not in the table, the fp32 -> uint8 conversion is
    assert controls.counts == {("conversions (by source type)", "float32"): 1, ("GLSL.std.450 NMin", "float16 ieee"): 1}
    assert offsets.counts == {(16, 112): 1, (0, 0): 1, (48, 0): 1}
    assert data.counts == {("edges", "bits"): 1, ("random", "convert"): 1, ("random", "float min/max"): 1}


def test_excluded_cells_and_their_rules() -> None:
    by_type, conversions, _, controls, _, _ = tables([])
    # 18 float-only ops on 4 integer types, 8 integer arithmetic and 6 bit ops on 2 float types
    assert len(by_type.excluded) == 18 * 4 + 8 * 2 + 6 * 2
    assert "bit instructions" in by_type.excluded[("OpBitwiseAnd", "float16")]
    assert "take float components" in by_type.excluded[("GLSL.std.450 Exp", "sint32")]
    assert "integer arithmetic" in by_type.excluded[("OpIAdd", "float32")]
    assert set(conversions.excluded) == {(t.name, t.name) for t in ELEMENT_TYPES}
    assert set(controls.excluded) == {(op_label(op), f"{t} ieee") for op in (Op.fma, Op.exp, Op.log, Op.tanh, Op.atan)
                                      for t in ("float16", "float32")}
    # an empty pack: every cell outside the exclusions is listed, the conversions' ieee cells among them
    assert ("conversions (by source type)", "float32 ieee") in controls.empty_cells()
    assert len(by_type.empty_cells()) == len(OPS) * len(ELEMENT_TYPES) - len(by_type.excluded)


def _accepts(op: Op, t: T, ieee: bool) -> bool:
    r = next(x for x in ELEMENT_TYPES if x is not t) if op is Op.convert else t
    try:
        ElementwiseVariant(op, t, r, 4, ieee)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("op", list(Op))
def test_an_excluded_cell_is_a_signature_the_case_model_refuses(op: Op) -> None:
    """operation x component type: excluded exactly where ElementwiseVariant refuses the type; float
    controls (ops on float vectors): an ieee cell is excluded only where the variant refuses ieee,
    and every refusal but the conversions' is excluded."""
    by_type, _, _, controls, _, _ = tables([])
    for t in ELEMENT_TYPES:
        assert ((op_label(op), t.name) in by_type.excluded) == (not _accepts(op, t, False)), t.name
    floats = [t for t in (T.float16, T.float32) if t in OPS[op].types]
    assert (op_label(op) in controls.rows) == bool(floats)
    for t in floats:
        excluded = (op_label(op), f"{t.name} ieee") in controls.excluded
        assert not (excluded and _accepts(op, t, True))
        assert excluded or _accepts(op, t, True) or op is Op.convert
