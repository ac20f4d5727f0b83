"""Coverage tables of tensor-layout packs, along the axes of the spec.

SPV_NV_tensor_addressing / GLSL_NV_cooperative_matrix2 ``tensorLayoutNV``:
the grid Dim (1..5) x clampMode (the five Tensor Clamp Mode values) x
operation (coopMatLoadTensorNV / coopMatStoreTensorNV), the matrix component
types, uses x scopes, block sizes, and which of the optional layout calls a
case makes (setTensorLayoutBlockSizeNV, setTensorLayoutStrideNV,
sliceTensorLayoutNV, a Constant clampValue) per Dim. The default pack's
stratification puts at least one case in every Dim x clampMode x operation cell.
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid, one_way
from ctsgen.families.tensor_layout.case import Operation
from ctsgen.model.tensor import MAX_DIM, ClampMode
from ctsgen.model.types import MatrixUse, Scope

DIMS = tuple(range(1, MAX_DIM + 1))
CALLS = (("setTensorLayoutBlockSizeNV", "blockSize"), ("setTensorLayoutStrideNV", "stride"),
         ("sliceTensorLayoutNV", "offset"), ("clampValue (Constant)", "clampValue"))


def _block(p: dict[str, Any]) -> str:
    return "not set" if not p.get("blockSize") else f"largest edge {max(p['blockSize'])}"


def _calls(p: dict[str, Any]) -> list[str]:
    """The optional layout calls the case makes (a clampValue counts only under Constant clamping)."""
    constant = p["variant"]["clampMode"] == ClampMode.Constant.name
    return [call for call, key in CALLS if p.get(key) is not None and (key != "clampValue" or constant)]


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of tensor-layout cases."""
    v = [p["variant"] for p in cases]
    return [
        grid("Dim x clampMode x operation", "Dim", "clampMode/operation", DIMS,
             [f"{m.name}/{op.value}" for m in ClampMode for op in Operation],
             ((x["Dim"], f"{x['clampMode']}/{x['operation']}") for x in v)),
        one_way("component types", "componentType", [x["matrix"]["componentType"] for x in v]),
        grid("matrix use x scope", "use", "scope", [u.name for u in MatrixUse],
             [Scope.Subgroup.name, Scope.Workgroup.name],
             ((x["matrix"]["use"], x["matrix"]["scope"]) for x in v)),
        one_way("block sizes", "blockSize", [_block(p) for p in cases]),
        grid("optional layout calls x Dim (a case counts once per call it makes)", "call", "Dim",
             [call for call, _ in CALLS], DIMS,
             ((call, p["variant"]["Dim"]) for p in cases for call in _calls(p)), partition=False),
        one_way("matrix shapes", "rows x cols", [f"{x['matrix']['rows']}x{x['matrix']['cols']}" for x in v]),
    ]
