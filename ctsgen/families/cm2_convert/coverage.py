"""Coverage tables of cm2-convert packs (SPV_NV_cooperative_matrix2 conversions and transpose).

* source x result component type: off the diagonal the component conversions
  (Op{F,S,U}Convert and friends), on it OpCooperativeMatrixConvertNV (Use
  change only) and OpCooperativeMatrixTransposeNV; a same-width signedness
  change is a bitcast, no conversion (case.check_pair);
* kind x Use change: a Use change goes from Accumulator to A or B,
  ConvertNV changes the Use only, transpose takes an Accumulator to a B matrix;
* kind x scope.

Component types and scopes: those of the embedded H100 profile's matrix types.
A component pair no two H100 matrix types can join (a conversion keeps the
Use or goes Accumulator -> A / B, and float32 is an Accumulator only, sint8
an A / B only, ...) is excluded with that rule, as is a diagonal cell whose
type the H100 lacks as Accumulator or as A / B (ConvertNV and transpose).
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.device.profile import default_profile
from ctsgen.families.cm2_convert.oracle import Kind
from ctsgen.families.cm2_convert.strategy import KIND_USES, component_pairs, pairs
from ctsgen.families.cm2_shared import profile_components, profile_scopes, scope_label
from ctsgen.model.types import ComponentType, MatrixUse

KINDS = {Kind.convert.value: "component conversion", Kind.use.value: "OpCooperativeMatrixConvertNV",
         Kind.transpose.value: "OpCooperativeMatrixTransposeNV"}
ACC, A, B = MatrixUse.Accumulator.name, MatrixUse.A.name, MatrixUse.B.name
USE_CHANGES = [f"{u} -> {u}" for u in (A, B, ACC)] + [f"{ACC} -> {A}", f"{ACC} -> {B}"]


def _bitcasts() -> dict[tuple[str, str], str]:
    ints = [c for c in ComponentType if not c.is_float]
    return {(s.name, r.name): "a same-width signedness change is a bitcast, not a conversion"
            for s in ints for r in ints if s is not r and s.size == r.size}


def _device_rules() -> dict[tuple[str, str], str]:
    """The component pairs (besides bitcasts) that no H100 conversion, ConvertNV or transpose
    joins, each with why: the Uses the H100 has those component types in."""
    h100 = default_profile()
    held = {(s.name, r.name) for s, r in component_pairs(h100)}
    held |= {(s.component.name, r.component.name) for k, u in KIND_USES if k is not Kind.convert
             for s, r in pairs(h100, k, u)}
    uses = {u: profile_components(u) for u in MatrixUse}
    a_or_b = uses[MatrixUse.A] + uses[MatrixUse.B]
    acc_only = [c for c in uses[MatrixUse.Accumulator] if c not in a_or_b]
    ab_only = [c for c in dict.fromkeys(a_or_b) if c not in uses[MatrixUse.Accumulator]]
    off = (f"no H100 matrix types join them: a conversion keeps the Use or goes Accumulator -> A / B "
           f"(SPV_NV_cooperative_matrix2 3.49.11); {', '.join(acc_only)} are H100 Accumulators only, "
           f"{', '.join(ab_only)} A / B only")
    diagonal = "ConvertNV and transpose keep the type and go Accumulator -> A / B: the H100 lacks it as one of them"
    types = profile_components()
    bitcasts = _bitcasts()
    return {(s, r): diagonal if s == r else off for s in types for r in types
            if (s, r) not in held and (s, r) not in bitcasts}


def _use_rules() -> dict[tuple[str, str], str]:
    out = {(KINDS[Kind.use.value], f"{u} -> {u}"): "OpCooperativeMatrixConvertNV changes the Use"
           for u in (A, B, ACC)}
    out.update({(KINDS[Kind.transpose.value], c): "transpose takes an M x N Accumulator to an N x M B matrix"
                for c in USE_CHANGES if c != f"{ACC} -> {B}"})
    return out


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of cm2-convert cases."""
    v = [p["variant"] for p in cases]
    kinds = [KINDS.get(x["kind"], x["kind"]) for x in v]
    types = profile_components()
    return [
        grid("source x result component type (diagonal: ConvertNV and transpose)", "source", "result", types, types,
             ((x["source"]["componentType"], x["result"]["componentType"]) for x in v),
             excluded={**_bitcasts(), **_device_rules()}),
        grid("kind x Use change", "kind", "source -> result Use", KINDS.values(), USE_CHANGES,
             zip(kinds, (f"{x['source']['use']} -> {x['result']['use']}" for x in v)), excluded=_use_rules()),
        grid("kind x scope", "kind", "scope", KINDS.values(), profile_scopes(),
             zip(kinds, (scope_label(x["source"]) for x in v))),
    ]
