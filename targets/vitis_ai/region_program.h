// A vitis_ai region as the runtime runs it: int8 ops over numbered tensor
// slots, each slot with its fix position. Slots 0..num_inputs-1 are the
// region's float inputs, quantized on entry; `outputs` are dequantized on
// exit. Conv and Gemm ops name their float constants by step-input index:
// the runtime folds and quantizes them once (quantize.h), with the fix
// positions chosen at compile time, exactly as the compiler did.
// The program travels in the plan step's params as text.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "targets/vitis_ai/int8_ops.h"
#include "targets/vitis_ai/quantize.h"
#include "targets/vitis_ai/unit_kind.h"

namespace disco::vitis_ai {

struct QOp {
  UnitKind kind = UnitKind::Conv;
  std::string label;       // the unit's node names
  std::vector<int> in;     // slots
  int out = -1;            // slot
  // Conv: W, B, then BatchNormalization's scale, bias, mean, var; Gemm: B, C.
  // Step-input indices, -1 when absent.
  std::vector<int> consts;
  // Conv: strides (2), pads (4: top, left, bottom, right), dilations (2), group.
  // Pools: kernel (2), strides (2), pads (4). Resize: scales (2). Gemm: transB.
  // Concat: axis.
  std::vector<int64_t> geom;
  double eps = 1e-5, alpha = 1, beta = 1;  // BatchNormalization epsilon; Gemm alpha, beta
  Activation act;
  int wfix = 0, bfix = 0;  // Conv, Gemm
};

struct QProgram {
  int num_inputs = 0;
  std::vector<int> fix;  // per slot
  std::vector<QOp> ops;
  std::vector<int> outputs;  // slots, in the step's output order
};

std::string serialize_program(const QProgram &p);
// Throws naming `label` when the text is malformed.
QProgram parse_program(const std::string &text, const std::string &label);

// The folded weights of a conv or gemm op, from the step's constant tensors
// (views indexed like QOp::consts): the compiler (fix choice, XIR) and the
// runtime (the reference executor) both fold through it.
FoldedWeights fold_op_weights(const QOp &op, const std::function<ConstView(int step_input)> &constant);

}  // namespace disco::vitis_ai
