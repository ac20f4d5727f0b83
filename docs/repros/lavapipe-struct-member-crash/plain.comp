#version 450 core
// The control: struct.comp without the struct. The same 16 x 16 float32 Accumulator in a variable of
// its own, loaded from binding 0 and stored to binding 1.
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#pragma use_vulkan_memory_model
layout(local_size_x = 8) in;
layout(std430, binding = 0) readonly buffer In { float x[]; } src;
layout(std430, binding = 1) buffer Out { float x[]; } dst;

void main()
{
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, src.x, 0u, 16u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, dst.x, 0u, 16u, gl_CooperativeMatrixLayoutRowMajor);
}
