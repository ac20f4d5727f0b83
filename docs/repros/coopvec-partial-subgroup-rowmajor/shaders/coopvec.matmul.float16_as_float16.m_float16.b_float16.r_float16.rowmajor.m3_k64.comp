#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_vector : enable
layout(local_size_x = 8, local_size_y = 1, local_size_z = 1) in;
// ctsgen coopvec.matmul.float16_as_float16.m_float16.b_float16.r_float16.rowmajor.m3_k64
// OpCooperativeVectorMatrixMulNV, M 3, K 64, gl_CooperativeVectorMatrixLayoutRowMajorNV

// Binding 0: one record of 7 uint words per case; workgroup i runs case i.
// Words [0, number of buffers) are the element offsets of this case's data in
// bindings 1..n; the family's own words follow (see the family's case.py).
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
const uint PARAM_WORDS = 7u;
uint P(uint word) { return params.p[gl_WorkGroupID.x * PARAM_WORDS + word]; }

layout(std430, binding = 1) buffer Input { float16_t x[]; } inBuf;
layout(std430, binding = 2) buffer Matrix { uint8_t x[]; } matBuf;
layout(std430, binding = 3) buffer Bias { uint8_t x[]; } biasBuf;
layout(std430, binding = 4) buffer Output { float16_t x[]; } outBuf;

void main()
{
    uint lid = gl_LocalInvocationID.x;
    coopvecNV<float16_t, 64> x;
    coopVecLoadNV(x, inBuf.x, P(0u) * 2u + lid * 128u);
    coopvecNV<float16_t, 3> r;
    coopVecMatMulNV(r, x, gl_ComponentTypeFloat16NV, matBuf.x, P(1u) + P(4u), gl_ComponentTypeFloat16NV,
                    3, 64, gl_CooperativeVectorMatrixLayoutRowMajorNV, false, P(5u));
    coopVecStoreNV(r, outBuf.x, P(3u) * 2u + lid * 16u);
}
