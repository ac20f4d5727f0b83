"""Coverage tables of cm2-convert packs (SPV_NV_cooperative_matrix2 conversions and transpose).

* source x result component type: off the diagonal the component conversions
  (Op{F,S,U}Convert and friends), on it OpCooperativeMatrixConvertNV (Use
  change only) and OpCooperativeMatrixTransposeNV; a same-width signedness
  change is a bitcast, no conversion (case.check_pair);
* kind x Use change: a Use change goes from Accumulator to A or B,
  ConvertNV changes the Use only, transpose takes an Accumulator to a B matrix;
* kind x scope.

Component types and scopes: those of the embedded H100 profile's matrix types.
"""

from __future__ import annotations

from typing import Any

from ctsgen.coverage import Table, grid
from ctsgen.families.cm2_convert.oracle import Kind
from ctsgen.families.cm2_reduce.coverage import profile_components, profile_scopes, scope_label
from ctsgen.model.types import ComponentType, MatrixUse

KINDS = {Kind.convert.value: "component conversion", Kind.use.value: "OpCooperativeMatrixConvertNV",
         Kind.transpose.value: "OpCooperativeMatrixTransposeNV"}
ACC, A, B = MatrixUse.Accumulator.name, MatrixUse.A.name, MatrixUse.B.name
USE_CHANGES = [f"{u} -> {u}" for u in (A, B, ACC)] + [f"{ACC} -> {A}", f"{ACC} -> {B}"]


def _bitcasts() -> dict[tuple[str, str], str]:
    ints = [c for c in ComponentType if not c.is_float]
    return {(s.name, r.name): "a same-width signedness change is a bitcast, not a conversion"
            for s in ints for r in ints if s is not r and s.size == r.size}


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
             ((x["source"]["componentType"], x["result"]["componentType"]) for x in v), excluded=_bitcasts()),
        grid("kind x Use change", "kind", "source -> result Use", KINDS.values(), USE_CHANGES,
             zip(kinds, (f"{x['source']['use']} -> {x['result']['use']}" for x in v)), excluded=_use_rules()),
        grid("kind x scope", "kind", "scope", KINDS.values(), profile_scopes(),
             zip(kinds, (scope_label(x["source"]) for x in v))),
    ]
