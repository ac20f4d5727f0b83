#version 450
// One straight-line MulAdd D = A x B + C: A is M x K float16, B is K x N float16, C and D are M x N
// float32, Subgroup scope, one subgroup of 8 invocations (lavapipe's subgroup size). M, N and K are
// specialization constants 0, 1 and 2 (multiples of 8, lavapipe's flexible-dimension granularity),
// so one module serves every size: run.c times the build of each.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 8) in;
layout(constant_id = 0) const uint M = 16;
layout(constant_id = 1) const uint N = 16;
layout(constant_id = 2) const uint K = 16;
layout(set = 0, binding = 0) buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BufC { float c[]; };
layout(set = 0, binding = 3) buffer BufD { float d[]; };

void main()
{
    coopmat<float16_t, gl_ScopeSubgroup, M, K, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, K, N, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, 0u, K, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0u, N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, 0u, N, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, d, 0u, N, gl_CooperativeMatrixLayoutRowMajor);
}
