"""Coverage tables of coopvec packs (SPV_NV_cooperative_vector, VK_NV_cooperative_vector).

* type combination (inputType, InputInterpretation, MatrixInterpretation,
  BiasInterpretation, resultType) x MemoryLayout, for MatMul / MatMulAdd: the
  domain is the combinations the embedded H100 profile advertises
  (VkCooperativeVectorPropertiesNV), plus any other the pack holds;
* operation (OpCooperativeVectorMatrixMulNV, ...MatrixMulAddNV,
  ...OuterProductAccumulateNV, ...ReduceSumAccumulateNV) x MemoryLayout;
* Transpose x MemoryLayout, for MatMul / MatMulAdd;
* K x M in ranges up to maxCooperativeVectorComponents (512 on the H100);
* how the data are drawn (CoopVecCase.values) x invocations per workgroup
  (each invocation multiplies its own input vector).
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid
from ctsgen.device.profile import default_profile
from ctsgen.families.coopvec.variant import LAYOUTS, LOCAL, MATMUL_OPS, VALUE_KINDS
from ctsgen.families.coopvec.strategy import combinations

OPERATIONS = {"matmul": "MatMul", "matmuladd": "MatMulAdd", "outer_product": "OuterProductAccumulate",
              "reduce_sum": "ReduceSumAccumulate"}
NO_MATRIX = "no matrix"
NO_M = "no M (ReduceSum)"
#: Size ranges of K and M: 1, small, around a 16-element granule, up to 128, and the large sizes.
RANGES = ((1, 1), (2, 4), (5, 16), (17, 64), (65, 128), (129, 512))
FP8 = ("floate4m3", "floate5m2")
OPTIMAL_ONLY_FP8 = ("an E4M3/E5M2 matrix needs an optimal layout "
                    "(VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090)")


def combination_label(v: dict[str, Any]) -> str:
    """``inputType as InputInterpretation, matrix M, bias B -> resultType``."""
    return (f"{v['inputType']} as {v['inputInterpretation']}, matrix {v['matrixInterpretation']}, "
            f"bias {v['biasInterpretation']} -> {v['resultType']}")


def size_range(n: int) -> str:
    """The range of RANGES holding n ('129-512'; a size past them gets its own label)."""
    for lo, hi in RANGES:
        if lo <= n <= hi:
            return str(lo) if lo == hi else f"{lo}-{hi}"
    return f">{RANGES[-1][1]}"


def data_values(p: dict[str, Any]) -> str:
    """How the case's data are drawn (packs written before ``values`` had a boolean ``edges``)."""
    return p.get("values", "edges" if p.get("edges") else "random")


def _profile_combinations() -> list[dict[str, str]]:
    """The H100 profile's combinations as variant fields (its Transpose flag aside)."""
    names = ("inputType", "inputInterpretation", "matrixInterpretation", "biasInterpretation", "resultType")
    return [dict(zip(names, (t.name for t in c[:5]))) for c in combinations(default_profile())]


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of coopvec cases."""
    v = [p["variant"] for p in cases]
    mm = [x for x in v if x["op"] in MATMUL_OPS]
    profile = _profile_combinations()
    combos = list(dict.fromkeys(combination_label(c) for c in profile))
    ranges = [size_range(lo) for lo, _ in RANGES]
    op_excluded = {(OPERATIONS[op], NO_MATRIX): "MatMul and MatMulAdd take a matrix" for op in MATMUL_OPS}
    op_excluded.update({("OuterProductAccumulate", c): "OuterProductAccumulate needs TrainingOptimal "
                        "(VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10093)"
                        for c in (*LAYOUTS[:3], NO_MATRIX)})
    op_excluded.update({("ReduceSumAccumulate", c): "ReduceSumAccumulate has no matrix operand" for c in LAYOUTS})
    return [
        grid(f"type combination x MemoryLayout (MatMul and MatMulAdd: {len(mm)} cases)",
             "inputType as InputInterpretation, matrix, bias -> resultType", "MemoryLayout", combos, LAYOUTS,
             ((combination_label(x), LAYOUTS[x["layout"]]) for x in mm), partition=False,
             excluded={(combination_label(c), lay): OPTIMAL_ONLY_FP8 for c in profile for lay in LAYOUTS[:2]
                       if c["matrixInterpretation"] in FP8}),
        grid("operation x MemoryLayout", "operation", "MemoryLayout", OPERATIONS.values(), (*LAYOUTS, NO_MATRIX),
             ((OPERATIONS[x["op"]], NO_MATRIX if x["op"] == "reduce_sum" else LAYOUTS[x["layout"]]) for x in v),
             excluded=op_excluded),
        grid(f"Transpose x MemoryLayout (MatMul and MatMulAdd: {len(mm)} cases)", "Transpose", "MemoryLayout",
             (False, True), LAYOUTS, ((x["transpose"], LAYOUTS[x["layout"]]) for x in mm), partition=False,
             excluded={(True, lay): "Transpose is not supported for RowMajor/ColumnMajor (SPV_NV_cooperative_vector)"
                       for lay in LAYOUTS[:2]}),
        grid("K x M (size ranges)", "K", "M", ranges, (*ranges, NO_M),
             ((size_range(x["K"]), NO_M if x["op"] == "reduce_sum" else size_range(x["M"])) for x in v)),
        grid("data values x invocations per workgroup", "values", "invocations", VALUE_KINDS, [],
             ((data_values(p), p["variant"].get("invocations", LOCAL)) for p in cases)),
    ]
