#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;
// ctsgen cm2_program.ops12.d23211d541
// A straight-line program over cooperative matrices (ctsgen family cm2-program):
//   v0 = generate()  : float16 A
//   v1 = scale(v0)  : float16 A
//   v2 = mul(v1, v0)  : float16 A
//   v3 = load(tensorLayoutNV<1, Repeat>)  : float32 Accumulator
//   v4 = generate()  : float32 Accumulator
//   v5 = load(tensorLayoutNV<3, ClampToEdge>)  : float16 Accumulator
//   v6 = transpose(v5)  : float16 B
//   v7 = const()  : float32 Accumulator
//   v8 = scale(v7)  : float32 Accumulator
//   v9 = scale(v8)  : float32 Accumulator
//   v10 = scale(v5)  : float16 Accumulator
//   v11 = load(tensorLayoutNV<2, Constant>)  : float32 Accumulator
//   store(v10) through tensorLayoutNV<1, Repeat>

// Binding 0: one record of 130 uint words per case; workgroup i runs case i.
// Words [0, number of buffers) are the element offsets of this case's data in
// bindings 1..n; the family's own words follow (see the family's case.py).
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
const uint PARAM_WORDS = 130u;
uint P(uint word) { return params.p[gl_WorkGroupID.x * PARAM_WORDS + word]; }

layout(std430, binding = 1) buffer in_float16_block { float16_t x[]; } in_float16;
layout(std430, binding = 2) buffer in_float32_block { float x[]; } in_float32;
layout(std430, binding = 3) buffer out_float16_block { float16_t x[]; } out_float16;

float16_t affine_float16(const in uint32_t row, const in uint32_t col, const in float16_t x, const in float16_t s, const in float16_t m)
{
    return x * s + m + float16_t(row * 16u + col);
}
float16_t select_float16(const in uint32_t row, const in uint32_t col, const in float16_t x, const in uint32_t r0, const in uint32_t c0, const in float16_t s)
{
    return (row == r0 || col == c0) ? s : x;
}
float16_t sum_float16(const in float16_t a, const in float16_t b) { return a + b; }
float16_t max_float16(const in float16_t a, const in float16_t b) { return max(a, b); }
float16_t min_float16(const in float16_t a, const in float16_t b) { return min(a, b); }
float affine_float32(const in uint32_t row, const in uint32_t col, const in float x, const in float s, const in float m)
{
    return x * s + m + float(row * 16u + col);
}
float select_float32(const in uint32_t row, const in uint32_t col, const in float x, const in uint32_t r0, const in uint32_t c0, const in float s)
{
    return (row == r0 || col == c0) ? s : x;
}
float sum_float32(const in float a, const in float b) { return a + b; }
float max_float32(const in float a, const in float b) { return max(a, b); }
float min_float32(const in float a, const in float b) { return min(a, b); }

void main()
{
    // v0 = generate()  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v0;
    coopMatPerElementNV(v0, coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(float16_t(0)), select_float16, P(4u), P(5u), uint16BitsToFloat16(uint16_t(P(3u))));
    // v1 = scale(v0)  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v1 = v0 * uint16BitsToFloat16(uint16_t(P(6u)));
    // v2 = mul(v1, v0)  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v2 = v1 * v0;
    // v3 = load(tensorLayoutNV<1, Repeat>)  : float32 Accumulator
    tensorLayoutNV<1, gl_CooperativeMatrixClampModeRepeatNV> t3 = createTensorLayoutNV(1, gl_CooperativeMatrixClampModeRepeatNV);
    {
        uint flags = P(8u);
        if ((flags & 1u) != 0u) { t3 = setTensorLayoutBlockSizeNV(t3, P(11u)); }
        t3 = setTensorLayoutDimensionNV(t3, P(16u));
        if ((flags & 2u) != 0u) { t3 = setTensorLayoutStrideNV(t3, P(21u)); }
        if ((flags & 4u) != 0u) {
            t3 = sliceTensorLayoutNV(t3, P(26u), P(31u));
        }
        if ((flags & 8u) != 0u) { t3 = setTensorLayoutClampValueNV(t3, P(9u)); }
    }
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v3 = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float(0));
    coopMatLoadTensorNV(v3, in_float32.x, P(1u) + P(7u), t3);
    // v4 = generate()  : float32 Accumulator
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v4;
    coopMatPerElementNV(v4, coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float(0)), select_float32, P(37u), P(38u), uintBitsToFloat(P(36u)));
    // v5 = load(tensorLayoutNV<3, ClampToEdge>)  : float16 Accumulator
    tensorLayoutNV<3, gl_CooperativeMatrixClampModeClampToEdgeNV> t5 = createTensorLayoutNV(3, gl_CooperativeMatrixClampModeClampToEdgeNV);
    {
        uint flags = P(40u);
        if ((flags & 1u) != 0u) { t5 = setTensorLayoutBlockSizeNV(t5, P(43u), P(44u), P(45u)); }
        t5 = setTensorLayoutDimensionNV(t5, P(48u), P(49u), P(50u));
        if ((flags & 2u) != 0u) { t5 = setTensorLayoutStrideNV(t5, P(53u), P(54u), P(55u)); }
        if ((flags & 4u) != 0u) {
            t5 = sliceTensorLayoutNV(t5, P(58u), P(63u), P(59u), P(64u), P(60u), P(65u));
        }
        if ((flags & 8u) != 0u) { t5 = setTensorLayoutClampValueNV(t5, P(41u)); }
    }
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v5 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float16_t(0));
    coopMatLoadTensorNV(v5, in_float16.x, P(0u) + P(39u), t5);
    // v6 = transpose(v5)  : float16 B
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> v6;
    coopMatTransposeNV(v6, v5);
    // v7 = const()  : float32 Accumulator
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v7 = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(uintBitsToFloat(P(68u)));
    // v8 = scale(v7)  : float32 Accumulator
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v8 = v7 * uintBitsToFloat(P(69u));
    // v9 = scale(v8)  : float32 Accumulator
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v9 = v8 * uintBitsToFloat(P(70u));
    // v10 = scale(v5)  : float16 Accumulator
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v10 = v5 * uint16BitsToFloat16(uint16_t(P(71u)));
    // v11 = load(tensorLayoutNV<2, Constant>)  : float32 Accumulator
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t11 = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    {
        uint flags = P(73u);
        if ((flags & 1u) != 0u) { t11 = setTensorLayoutBlockSizeNV(t11, P(76u), P(77u)); }
        t11 = setTensorLayoutDimensionNV(t11, P(81u), P(82u));
        if ((flags & 2u) != 0u) { t11 = setTensorLayoutStrideNV(t11, P(86u), P(87u)); }
        if ((flags & 4u) != 0u) {
            t11 = sliceTensorLayoutNV(t11, P(91u), P(96u), P(92u), P(97u));
        }
        if ((flags & 8u) != 0u) { t11 = setTensorLayoutClampValueNV(t11, P(74u)); }
    }
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v11 = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float(0));
    coopMatLoadTensorNV(v11, in_float32.x, P(1u) + P(72u), t11);
    // store(v10) through tensorLayoutNV<1, Repeat>
    tensorLayoutNV<1, gl_CooperativeMatrixClampModeRepeatNV> t12 = createTensorLayoutNV(1, gl_CooperativeMatrixClampModeRepeatNV);
    {
        uint flags = P(102u);
        if ((flags & 1u) != 0u) { t12 = setTensorLayoutBlockSizeNV(t12, P(105u)); }
        t12 = setTensorLayoutDimensionNV(t12, P(110u));
        if ((flags & 2u) != 0u) { t12 = setTensorLayoutStrideNV(t12, P(115u)); }
        if ((flags & 4u) != 0u) {
            t12 = sliceTensorLayoutNV(t12, P(120u), P(125u));
        }
        if ((flags & 8u) != 0u) { t12 = setTensorLayoutClampValueNV(t12, P(103u)); }
    }
    coopMatStoreTensorNV(v10, out_float16.x, P(2u) + P(101u), t12);
}
