#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;
// ctsgen cm2_reduce.row.sum.sint32.accumulator_16x24.subgroup.to_16x24
// OpCooperativeMatrixReduceNV: Row (1), CombineFunc sum

// Binding 0: one record of 2 uint words per case; workgroup i runs case i.
// Words [0, number of buffers) are the element offsets of this case's data in
// bindings 1..n; the family's own words follow (see the family's case.py).
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
const uint PARAM_WORDS = 2u;
uint P(uint word) { return params.p[gl_WorkGroupID.x * PARAM_WORDS + word]; }

layout(std430, binding = 1) buffer Source { int32_t x[]; } srcBuf;
layout(std430, binding = 2) buffer Result { int32_t x[]; } dstBuf;

int32_t combineOp(const in int32_t a, const in int32_t b)
{
    return a + b;
}

void main()
{
    coopmat<int32_t, gl_ScopeSubgroup, 16, 24, gl_MatrixUseAccumulator> source;
    coopMatLoad(source, srcBuf.x, P(0u), 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int32_t, gl_ScopeSubgroup, 16, 24, gl_MatrixUseAccumulator> result;
    coopMatReduceNV(result, source, gl_CooperativeMatrixReduceRowNV, combineOp);
    coopMatStore(result, dstBuf.x, P(1u), 24u, gl_CooperativeMatrixLayoutRowMajor);
}
