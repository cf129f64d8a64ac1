// The epilogue of a oneDNN step: the list of post-ops that the compile side
// matched after a MatMul, Gemm or Conv and that the glue hands to oneDNN.
// It travels in the plan as one text param, e.g. "linear:0.5:0,add,gelu_erf".
// Binary post-ops read the step's extra inputs in list order. This header has
// no oneDNN in it: the compile side writes the list, the glue reads it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "targets/onednn/panel_gemm.h"

namespace disco {

struct OnednnPostOp {
  enum Kind {
    // Elementwise on the running value.
    Relu,     // a: slope below zero (LeakyRelu), 0 for Relu
    GeluErf,  // x * 0.5 * (1 + erf(x / sqrt(2)))
    Sigmoid,
    Tanh,
    Swish,      // x * sigmoid(a * x); SiLU is a = 1
    HardSwish,  // x * clip(x / 6 + 1/2, 0, 1), ONNX's HardSwish (oneDNN's takes no parameters)
    Clip,    // a: lower bound, b: upper bound
    Linear,  // a * x + b: scalar Mul, Div, Add, Sub and Gemm's alpha/beta
    // With one operand, broadcast into the running value (a bias, a residual).
    Add,
    Sub,  // value - operand
    Mul,
    Div,  // value / operand
    Max,  // the glue's stand-ins for a repeated Clip (see onednn_step.cc)
    Min,
    // Inference BatchNormalization over dim 1, with four operands: scale, B, mean, var. a: epsilon.
    BatchNorm,
  };
  Kind kind = Relu;
  double a = 0, b = 0;

  // How many of the step's inputs this post-op reads.
  int num_operands() const;
};

// The post-op as a step of disco's own epilogue (panel_gemm.h's PanelOp:
// the panel products and eltwise_tail.h), or false where that has none
// (Tanh, Clip, Sub, Div, Max, Min, BatchNorm). An Add's or Mul's operand
// strides are the caller's to set.
bool to_panel_op(const OnednnPostOp &op, PanelOp *p);

std::string post_ops_to_string(const std::vector<OnednnPostOp> &ops);
// Throws disco::Error naming `where` on text that is not a post-op list.
std::vector<OnednnPostOp> parse_post_ops(const std::string &text, const std::string &where);

// An operand of a binary post-op at run time: data and dims, already padded
// with leading 1s to the rank of the value it is applied to.
struct PostOpOperand {
  const float *data = nullptr;
  std::vector<int64_t> dims;
};

// Applies the post-ops to a dense row-major tensor with plain scalar code.
// The glue uses it where oneDNN has nothing to compute: an empty reduction
// (K == 0) leaves zeros, or the conv bias, for the epilogue. BatchNorm must
// have been expanded into Mul and Add with their operands first.
void apply_post_ops_scalar(float *data, const std::vector<int64_t> &dims, const std::vector<OnednnPostOp> &ops,
                           const std::vector<PostOpOperand> &operands);

}  // namespace disco
