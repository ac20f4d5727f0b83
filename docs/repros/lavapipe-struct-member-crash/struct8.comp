#version 450 core
// Passes: struct.comp at 8 x 8, lavapipe's granule (nothing to split). One 8 x 8 float32 Accumulator
// held in a local struct, loaded from binding 0 into the member and stored from it to binding 1.
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
// glslang declares the Vulkan memory model on its own where a variable is a matrix (plain.comp), not
// where the only matrix is a struct member; spirv-val (vulkan1.3) requires it with CooperativeMatrixKHR.
#pragma use_vulkan_memory_model
layout(local_size_x = 8) in;
layout(std430, binding = 0) readonly buffer In { float x[]; } src;
layout(std430, binding = 1) buffer Out { float x[]; } dst;

struct S { coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> m; };

void main()
{
    S s;
    coopMatLoad(s.m, src.x, 0u, 8u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(s.m, dst.x, 0u, 8u, gl_CooperativeMatrixLayoutRowMajor);
}
