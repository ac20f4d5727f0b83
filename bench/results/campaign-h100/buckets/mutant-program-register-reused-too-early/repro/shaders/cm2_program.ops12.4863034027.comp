#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;
// ctsgen cm2_program.ops12.4863034027
// A straight-line program over cooperative matrices (ctsgen family cm2-program):
//   v0 = load(tensorLayoutNV<1, Constant>)  : float16 A
//   v1 = sub(v0, v0)  : float16 A
//   v2 = load(tensorLayoutNV<2, Undefined>)  : float16 A
//   v3 = load(tensorLayoutNV<1, Constant>)  : float16 B
//   v4 = generate()  : float16 B
//   v5 = add(v4, v4)  : float16 B
//   v6 = const()  : float32 Accumulator
//   v7 = convert(v6)  : float16 A
//   v8 = convert(v6)  : float16 B
//   v9 = scale(v0)  : float16 A
//   v10 = convert(v6)  : float16 A
//   v11 = mul(v9, v1)  : float16 A
//   store(v11) through tensorLayoutNV<2, Undefined>
//   store(v10) through tensorLayoutNV<2, Undefined>
//   store(v8) through tensorLayoutNV<2, Undefined>

// Binding 0: one record of 181 uint words per case; workgroup i runs case i.
// Words [0, number of buffers) are the element offsets of this case's data in
// bindings 1..n; the family's own words follow (see the family's case.py).
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
const uint PARAM_WORDS = 181u;
uint P(uint word) { return params.p[gl_WorkGroupID.x * PARAM_WORDS + word]; }

layout(std430, binding = 1) buffer in_float16_block { float16_t x[]; } in_float16;
layout(std430, binding = 2) buffer out_float16_block { float16_t x[]; } out_float16;

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
    // v0 = load(tensorLayoutNV<1, Constant>)  : float16 A
    tensorLayoutNV<1, gl_CooperativeMatrixClampModeConstantNV> t0 = createTensorLayoutNV(1, gl_CooperativeMatrixClampModeConstantNV);
    {
        uint flags = P(3u);
        if ((flags & 1u) != 0u) { t0 = setTensorLayoutBlockSizeNV(t0, P(6u)); }
        t0 = setTensorLayoutDimensionNV(t0, P(11u));
        if ((flags & 2u) != 0u) { t0 = setTensorLayoutStrideNV(t0, P(16u)); }
        if ((flags & 4u) != 0u) {
            t0 = sliceTensorLayoutNV(t0, P(21u), P(26u));
        }
        if ((flags & 8u) != 0u) { t0 = setTensorLayoutClampValueNV(t0, P(4u)); }
    }
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v0 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(float16_t(0));
    coopMatLoadTensorNV(v0, in_float16.x, P(0u) + P(2u), t0);
    // v1 = sub(v0, v0)  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v1 = v0 - v0;
    // v2 = load(tensorLayoutNV<2, Undefined>)  : float16 A
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> t2 = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
    {
        uint flags = P(32u);
        if ((flags & 1u) != 0u) { t2 = setTensorLayoutBlockSizeNV(t2, P(35u), P(36u)); }
        t2 = setTensorLayoutDimensionNV(t2, P(40u), P(41u));
        if ((flags & 2u) != 0u) { t2 = setTensorLayoutStrideNV(t2, P(45u), P(46u)); }
        if ((flags & 4u) != 0u) {
            t2 = sliceTensorLayoutNV(t2, P(50u), P(55u), P(51u), P(56u));
        }
        if ((flags & 8u) != 0u) { t2 = setTensorLayoutClampValueNV(t2, P(33u)); }
    }
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v2 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(float16_t(0));
    coopMatLoadTensorNV(v2, in_float16.x, P(0u) + P(31u), t2);
    // v3 = load(tensorLayoutNV<1, Constant>)  : float16 B
    tensorLayoutNV<1, gl_CooperativeMatrixClampModeConstantNV> t3 = createTensorLayoutNV(1, gl_CooperativeMatrixClampModeConstantNV);
    {
        uint flags = P(61u);
        if ((flags & 1u) != 0u) { t3 = setTensorLayoutBlockSizeNV(t3, P(64u)); }
        t3 = setTensorLayoutDimensionNV(t3, P(69u));
        if ((flags & 2u) != 0u) { t3 = setTensorLayoutStrideNV(t3, P(74u)); }
        if ((flags & 4u) != 0u) {
            t3 = sliceTensorLayoutNV(t3, P(79u), P(84u));
        }
        if ((flags & 8u) != 0u) { t3 = setTensorLayoutClampValueNV(t3, P(62u)); }
    }
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> v3 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(float16_t(0));
    coopMatLoadTensorNV(v3, in_float16.x, P(0u) + P(60u), t3);
    // v4 = generate()  : float16 B
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> v4;
    coopMatPerElementNV(v4, coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(float16_t(0)), select_float16, P(90u), P(91u), uint16BitsToFloat16(uint16_t(P(89u))));
    // v5 = add(v4, v4)  : float16 B
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> v5 = v4 + v4;
    // v6 = const()  : float32 Accumulator
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> v6 = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(uintBitsToFloat(P(92u)));
    // v7 = convert(v6)  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v7 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(v6);
    // v8 = convert(v6)  : float16 B
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> v8 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(v6);
    // v9 = scale(v0)  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v9 = v0 * uint16BitsToFloat16(uint16_t(P(93u)));
    // v10 = convert(v6)  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v10 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(v6);
    // v11 = mul(v9, v1)  : float16 A
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> v11 = v9 * v1;
    // store(v11) through tensorLayoutNV<2, Undefined>
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> t12 = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
    {
        uint flags = P(95u);
        if ((flags & 1u) != 0u) { t12 = setTensorLayoutBlockSizeNV(t12, P(98u), P(99u)); }
        t12 = setTensorLayoutDimensionNV(t12, P(103u), P(104u));
        if ((flags & 2u) != 0u) { t12 = setTensorLayoutStrideNV(t12, P(108u), P(109u)); }
        if ((flags & 4u) != 0u) {
            t12 = sliceTensorLayoutNV(t12, P(113u), P(118u), P(114u), P(119u));
        }
        if ((flags & 8u) != 0u) { t12 = setTensorLayoutClampValueNV(t12, P(96u)); }
    }
    coopMatStoreTensorNV(v11, out_float16.x, P(1u) + P(94u), t12);
    // store(v10) through tensorLayoutNV<2, Undefined>
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> t13 = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
    {
        uint flags = P(124u);
        if ((flags & 1u) != 0u) { t13 = setTensorLayoutBlockSizeNV(t13, P(127u), P(128u)); }
        t13 = setTensorLayoutDimensionNV(t13, P(132u), P(133u));
        if ((flags & 2u) != 0u) { t13 = setTensorLayoutStrideNV(t13, P(137u), P(138u)); }
        if ((flags & 4u) != 0u) {
            t13 = sliceTensorLayoutNV(t13, P(142u), P(147u), P(143u), P(148u));
        }
        if ((flags & 8u) != 0u) { t13 = setTensorLayoutClampValueNV(t13, P(125u)); }
    }
    coopMatStoreTensorNV(v10, out_float16.x, P(1u) + P(123u), t13);
    // store(v8) through tensorLayoutNV<2, Undefined>
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeUndefinedNV> t14 = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeUndefinedNV);
    {
        uint flags = P(153u);
        if ((flags & 1u) != 0u) { t14 = setTensorLayoutBlockSizeNV(t14, P(156u), P(157u)); }
        t14 = setTensorLayoutDimensionNV(t14, P(161u), P(162u));
        if ((flags & 2u) != 0u) { t14 = setTensorLayoutStrideNV(t14, P(166u), P(167u)); }
        if ((flags & 4u) != 0u) {
            t14 = sliceTensorLayoutNV(t14, P(171u), P(176u), P(172u), P(177u));
        }
        if ((flags & 8u) != 0u) { t14 = setTensorLayoutClampValueNV(t14, P(154u)); }
    }
    coopMatStoreTensorNV(v8, out_float16.x, P(1u) + P(152u), t14);
}
