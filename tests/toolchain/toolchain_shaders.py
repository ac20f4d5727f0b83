"""Known-good GL_NV_cooperative_matrix2 compute shaders for the toolchain tests."""

#: 2-D tensor layout, Constant clamping, f16 A matrix loaded and stored back.
TENSOR_LAYOUT_SHADER = """\
#version 450
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
layout(std430, binding = 1) buffer In { float16_t x[]; } inBuf;
layout(std430, binding = 2) buffer Out { float16_t x[]; } outBuf;
void main() {
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  t = setTensorLayoutDimensionNV(t, params.p[0], params.p[1]);
  t = sliceTensorLayoutNV(t, params.p[2], 16, params.p[3], 16);
  t = setTensorLayoutClampValueNV(t, params.p[4]);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> m;
  coopMatLoadTensorNV(m, inBuf.x, 0, t);
  coopMatStore(m, outBuf.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
"""

#: 3-D MirrorRepeat layout viewed through a permutation, stored through a layout.
TENSOR_VIEW_SHADER = """\
#version 450
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
layout(std430, binding = 1) buffer In { float x[]; } inBuf;
layout(std430, binding = 2) buffer Out { float x[]; } outBuf;
void main() {
  tensorLayoutNV<3, gl_CooperativeMatrixClampModeMirrorRepeatNV> t =
      createTensorLayoutNV(3, gl_CooperativeMatrixClampModeMirrorRepeatNV);
  t = setTensorLayoutDimensionNV(t, params.p[0], params.p[1], params.p[2]);
  tensorViewNV<3, false, 2, 0, 1> v = createTensorViewNV(3, false, 2, 0, 1);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoadTensorNV(m, inBuf.x, 0, sliceTensorLayoutNV(t, 0, 1, 0, 16, 0, 16), v);
  tensorLayoutNV<2> o = createTensorLayoutNV(2);
  o = setTensorLayoutDimensionNV(o, 16, 16);
  coopMatStoreTensorNV(m, outBuf.x, 0, o);
}
"""
