#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 8, local_size_y = 1, local_size_z = 1) in;
// ctsgen cm2_elementwise.affine.float16.a_8x8.subgroup
// OpCooperativeMatrixPerElementOpNV with Func "affine"

// Binding 0: one record of 6 uint words per case; workgroup i runs case i.
// Words [0, number of buffers) are the element offsets of this case's data in
// bindings 1..n; the family's own words follow (see the family's case.py).
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
const uint PARAM_WORDS = 6u;
uint P(uint word) { return params.p[gl_WorkGroupID.x * PARAM_WORDS + word]; }

layout(std430, binding = 1) buffer Source { float16_t x[]; } srcBuf;
layout(std430, binding = 2) buffer Operand { float16_t x[]; } opBuf;
layout(std430, binding = 3) buffer Result { float16_t x[]; } dstBuf;

float16_t elemOp(const in uint32_t row, const in uint32_t col, const in float16_t x, const in float16_t s, const in float16_t m)
{
    return x * s + m + float16_t(row * 8u + col);
}

void main()
{
    coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseA> source;
    coopMatLoad(source, srcBuf.x, P(0u), 8u, gl_CooperativeMatrixLayoutRowMajor);
    float16_t s = uint16BitsToFloat16(uint16_t(P(3u)));
    coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseA> result;
    coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseA> operand;
    coopMatLoad(operand, opBuf.x, P(1u), 8u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatPerElementNV(result, source, elemOp, s, operand);
    coopMatStore(result, dstBuf.x, P(2u), 8u, gl_CooperativeMatrixLayoutRowMajor);
}
