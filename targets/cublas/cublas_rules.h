// What the cuBLAS backend takes: float32 MatMul and Gemm (the anchor), with a
// constant bias Add and a Relu after it as the epilogue.
//
// MatMul's batch dims must not broadcast against each other, so that one
// strided-batched GEMM covers them: B 2-D (a weight; A's batch dims fold into
// its rows), A 2-D (A shared by every batch), or A and B of one rank with
// batch dims the shape store proves equal. Everything else (1-D operands,
// broadcast batch dims, other dtypes) is declined with the reason and goes to
// the next backend.
//
// Each rule's match (a CublasUnit) is the unit's payload, which the codegen
// reads, so the two cannot disagree about a unit.
#pragma once
#include <string>
#include <vector>

#include "targets/backend.h"

namespace disco {

struct CublasEpilogueOp {
  enum Kind { Add, Relu } kind = Add;
  int operand = -1;    // Add: the value added, broadcast into the result
  double scale = 1.0;  // Add: y += scale * operand (Gemm's beta)
};

struct CublasUnit : MatchPayload {
  enum Anchor { MatMul, Gemm } anchor = MatMul;
  std::vector<int> nodes;  // anchor first, then the epilogue in graph order
  int a = -1, b = -1;      // the anchor's operands
  bool trans_a = false, trans_b = false;  // Gemm
  double alpha = 1.0;                     // Gemm
  std::vector<CublasEpilogueOp> epilogue;
  int output = -1;  // the value after the last epilogue op
};

// One rule per anchor op; each takes a unit with its CublasUnit as the payload.
std::vector<SupportRule> cublas_rules();

// The epilogue as a step param ("add:1,relu") and back; see cublas_kernels.cc.
std::string epilogue_to_string(const std::vector<CublasEpilogueOp> &ops);

}  // namespace disco
