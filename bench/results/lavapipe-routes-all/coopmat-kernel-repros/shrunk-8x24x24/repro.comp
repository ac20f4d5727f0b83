#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 8, local_size_y = 1, local_size_z = 1) in;
// ctsgen kernel 42e81e00e9: 1 subgroup(s); statements from ctsgen/kernel/ir.py
// (docs/pack-format.md "coopmat-kernel": words, regions, slots)

// One case, its run-time parameters baked in (a standalone repro): the element
// offsets of its data in bindings 1..n, then the family's words. Binding 0 is unused.
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
const uint BAKED[4] = uint[](0u, 0u, 0u, 0u);
uint P(uint word) { return BAKED[word]; }

layout(std430, binding = 1) buffer BufA { int8_t x[]; } bufa;
layout(std430, binding = 2) buffer BufB { int8_t x[]; } bufb;
layout(std430, binding = 3) buffer BufC { int32_t x[]; } bufc;
layout(std430, binding = 4) buffer BufOut { int32_t x[]; } bufout;


void main()
{
    coopmat<int8_t, gl_ScopeSubgroup, 8, 24, gl_MatrixUseA> a0;
    coopmat<int8_t, gl_ScopeSubgroup, 24, 24, gl_MatrixUseB> b0;
    coopmat<int32_t, gl_ScopeSubgroup, 8, 24, gl_MatrixUseAccumulator> c0;
    coopmat<int32_t, gl_ScopeSubgroup, 8, 24, gl_MatrixUseAccumulator> r0[2];
    coopMatLoad(a0, bufa.x, P(0u) + ((0u + 0u) * 1u + 0u) * 192u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b0, bufb.x, P(1u) + ((0u + 0u) * 1u + 0u) * 576u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(c0, bufc.x, P(2u) + ((0u + 0u) * 1u + 0u) * 192u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(r0[0], bufc.x, P(2u) + ((1u + 0u) * 1u + 0u) * 192u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(r0[1], bufc.x, P(2u) + ((2u + 0u) * 1u + 0u) * 192u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    c0 = coopMatMulAdd(a0, b0, r0[0]);
    coopMatStore(c0, bufout.x, P(3u) + (0u + 0u) * 192u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(r0[0], bufout.x, P(3u) + (1u + 0u) * 192u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(r0[1], bufout.x, P(3u) + (2u + 0u) * 192u, 24u, gl_CooperativeMatrixLayoutRowMajor);
}
