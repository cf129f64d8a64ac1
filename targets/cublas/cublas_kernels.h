// The runtime glue's arithmetic, apart from the device: how a row-major
// MatMul or Gemm maps onto one column-major cuBLAS call, and the epilogue
// applied on the host. Split out so that tests check both without a GPU.
//
// cuBLAS is column-major; a row-major [M, N] result is the column-major
// N x M matrix Y^T, and Y^T = op(B)^T op(A)^T. So cuBLAS's first operand is
// our B and its second our A, with m = N, n = M: no copy, no transpose.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/extern_kernel.h"

namespace disco {

// Arguments of cublasSgemm / cublasSgemmStridedBatched (strides in elements).
struct CublasGemmArgs {
  int op_first = 0, op_second = 0;  // 0 = CUBLAS_OP_N, 1 = CUBLAS_OP_T; first = B, second = A
  int m = 0, n = 0, k = 0;
  int ld_first = 0, ld_second = 0, ldc = 0;
  int64_t stride_first = 0, stride_second = 0, stride_c = 0;
  int batch = 1;
};

// The call for Y = op(A) op(B) at these run-time shapes. `gemm`: ONNX Gemm (2-D,
// trans_a/trans_b); else ONNX MatMul (batch dims equal, or B or A 2-D). Throws
// disco::Error starting with `label` when the shapes do not fit.
CublasGemmArgs plan_cublas_gemm(bool gemm, bool trans_a, bool trans_b, const std::vector<int64_t> &a,
                                const std::vector<int64_t> &b, const std::vector<int64_t> &y, const std::string &label);

struct EpilogueStep {
  bool relu = false;  // else: y += scale * operand (broadcast into y)
  double scale = 1.0;
};
// Parses "add:1,relu" (cublas_rules.h's epilogue_to_string).
std::vector<EpilogueStep> parse_epilogue(const std::string &text, const std::string &label);

// Applies the epilogue to y in place; operands[i] belongs to the i-th add.
void apply_epilogue(const std::vector<EpilogueStep> &steps, const std::vector<const ExternTensor *> &operands,
                    const ExternTensor &y, const std::string &label);

}  // namespace disco
