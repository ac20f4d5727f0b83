#version 450
// Row reduction (sum) of a 16x24 int matrix of ones: every result element must be 24.
// lavapipe (Mesa 26.2.6, LLVM 22.1.8) gives 8 in rows 8-15 (docs/validation.md,
// "lavapipe: Row and Column reductions").
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Source { int src[]; };
layout(set = 0, binding = 1) buffer Result { int dst[]; };

int combineOp(const in int a, const in int b) { return a + b; }

void main()
{
    coopmat<int, gl_ScopeSubgroup, 16, 24, gl_MatrixUseAccumulator> source, result;
    coopMatLoad(source, src, 0u, 24u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceNV(result, source, gl_CooperativeMatrixReduceRowNV, combineOp);
    coopMatStore(result, dst, 0u, 24u, gl_CooperativeMatrixLayoutRowMajor);
}
