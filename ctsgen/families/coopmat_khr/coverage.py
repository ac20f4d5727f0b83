"""Coverage tables of coopmat-khr packs (SPV_KHR_cooperative_matrix through KHR loads and stores).

* operation x component type of the result (component types: the embedded H100 profile's KHR list;
  GLSL has no bfloat16 arithmetic, so those cells are excluded with that rule);
* each load's and the store's stride: 0 (one line repeated), overlapping lines (a load only), the
  packed stride (the least disjoint one), or a gap between lines; by MemoryLayout;
* pointee type x load / store (the component's own, or a wider uint32 / uvec2 / uvec4);
* MulAdd: every VkCooperativeMatrixPropertiesKHR entry of the H100 profile (sizes, types and
  saturatingAccumulation); a pack drawn for another device adds that device's entries as extra rows.
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid, one_way
from ctsgen.device.profile import default_profile
from ctsgen.families.coopmat_khr.case import KhrCase
from ctsgen.families.coopmat_khr.operation import Op
from ctsgen.families.coopmat_khr.strategy import Signature, khr_entries
from ctsgen.model.types import ComponentType
from ctsgen.ops.cm2 import profile_components
from ctsgen.ops.khr_addressing import Layout, min_disjoint_stride

STRIDES = ("0", "overlapping", "packed", "gap")
ROLES = ("load", "store")


def entry_label(operands: list[dict[str, Any]], saturating: bool) -> str:
    """``sint8 x uint8 + sint32 16x16x32 saturating``: one KHR property entry."""
    a, b, c = operands
    sat = " saturating" if saturating else ""
    return f"{a['componentType']} x {b['componentType']} + {c['componentType']} {a['rows']}x{b['cols']}x{a['cols']}{sat}"


def _entry_of(sig: Signature) -> str:
    return entry_label([m.to_json() for m in sig[0]], sig[2])


def stride_class(case: KhrCase, k: int) -> str:
    a = case.accesses()[k]
    m = case.shader.matrices[k]
    packed = min_disjoint_stride(a.layout, m.rows, m.cols, m.component, a.pointee_for(m.component))
    return "0" if a.stride == 0 else "overlapping" if a.stride < packed else "packed" if a.stride == packed else "gap"


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of coopmat-khr cases."""
    parsed = [KhrCase.from_json(p) for p in cases]
    ops = [o.value for o in Op]
    arith = [o.value for o in Op if o not in (Op.copy, Op.convert, Op.muladd)]
    bf16 = ComponentType.bfloat16.name
    access = [(c, k) for c in parsed for k in range(len(c.shader.matrices))]
    role = lambda c, k: ROLES[k == len(c.shader.matrices) - 1]  # noqa: E731
    muladds = [p for p in cases if p["variant"]["op"] == Op.muladd.value]
    entries = khr_entries(default_profile())
    results = {sig[1].component.name for sig in entries}
    no_result = {(Op.muladd.value, c): "no H100 KHR entry has this ResultType"
                 for c in profile_components() if c not in results}
    no_arith = {(o, bf16): "GLSL has no bfloat16 arithmetic" for o in arith}
    store_rules = {("overlapping", f"store {lay.value}"): "a store's lines stay disjoint" for lay in Layout}
    store_rules |= {("0", f"store {lay.value}"): "a store's stride is greater than 0" for lay in Layout}
    return [
        grid("operation x result component type", "operation", "componentType", ops, profile_components(),
             ((c.shader.op.value, c.shader.result.component.name) for c in parsed),
             excluded=no_arith | no_result),
        grid("stride x MemoryLayout (every load and store)", "stride", "layout", STRIDES,
             [f"{r} {lay.value}" for r in ROLES for lay in Layout],
             ((stride_class(c, k), f"{role(c, k)} {c.shader.layouts[k].value}") for c, k in access),
             excluded=store_rules, partition=False),
        grid("pointee x load / store", "pointee", "access", ["component", "uint32_t", "uvec2", "uvec4"], ROLES,
             (("component" if c.shader.pointees[k] is None else c.shader.pointees[k].glsl, role(c, k))
              for c, k in access), partition=False),
        one_way(f"MulAdd: KHR property entry ({len(muladds)} cases)", "entry",
                (entry_label(p["variant"]["operands"], bool(p["variant"].get("saturating"))) for p in muladds),
                [_entry_of(s) for s in entries], partition=False),
    ]
