#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;
// ctsgen tensor_layout.load.dim2.clamp_undefined.float16.b_8x8.subgroup
// OpCooperativeMatrixLoadTensorNV through tensorLayoutNV<2, Undefined>

// Binding 0: one record of 30 uint words per case; workgroup i runs case i.
// Words [0, number of buffers) are the element offsets of this case's data in
// bindings 1..n; the family's own words follow (see the family's case.py).
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
const uint PARAM_WORDS = 30u;
uint P(uint word) { return params.p[gl_WorkGroupID.x * PARAM_WORDS + word]; }

layout(std430, binding = 1) buffer Input { float16_t x[]; } inBuf;
layout(std430, binding = 2) buffer Output { float16_t x[]; } outBuf;

void main()
{
    uint flags = P(2u);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
    if ((flags & 1u) != 0u) {
        t = setTensorLayoutBlockSizeNV(t, P(5u), P(6u));
    }
    t = setTensorLayoutDimensionNV(t, P(10u), P(11u));
    if ((flags & 2u) != 0u) {
        t = setTensorLayoutStrideNV(t, P(15u), P(16u));
    }
    if ((flags & 4u) != 0u) {
        t = sliceTensorLayoutNV(t, P(20u), P(25u), P(21u), P(26u));
    }
    if ((flags & 8u) != 0u) {
        t = setTensorLayoutClampValueNV(t, P(3u));
    }
    // poison the matrix first, so an element the load leaves alone is visible
    coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseB> mat = coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseB>(uint16BitsToFloat16(uint16_t(P(4u))));
    coopMatLoadTensorNV(mat, inBuf.x, P(0u), t);
    coopMatStore(mat, outBuf.x, P(1u), 8u, gl_CooperativeMatrixLayoutRowMajor);
}
