// The one op registry: (domain, op_type, opset range) -> shape inference and
// Halide lowering. Each op family registers itself in one file under
// lowering/ops/; OpRegistry::global() calls each family explicitly.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lowering/op_math.h"

namespace disco {

class InferContext;
class LowerContext;

// The `until` of an entry that covers every opset from `since` on.
constexpr int kAnyLaterOpset = 1 << 30;

// How an op touches memory; fusion decisions start from this.
enum class OpKind {
  Elementwise,  // out[i] depends on in[i] (with broadcasting): loop fusion
  View,         // pure index remapping: Reshape, Transpose, Slice, Concat, Gather...
  Reduction,    // row or axis reductions: Softmax, LayerNorm, Reduce*, pools
  Dot,          // MatMul, Gemm, Conv
  ShapeOnly,    // Shape, Size: outputs are always folded at compile time
  Host,         // data-dependent output sizes (NonZero, Unique): run by the runtime on the host
  Opaque,       // anything else: a kernel of its own
};

struct OpDef {
  using InferFn = void (*)(InferContext &);
  using LowerFn = void (*)(LowerContext &);
  OpDef(std::string domain, std::string op_type, int since, int until, OpKind kind, InferFn infer, LowerFn lower,
        OpMath math = {})
      : domain(std::move(domain)),
        op_type(std::move(op_type)),
        since(since),
        until(until),
        kind(kind),
        infer(infer),
        lower(lower),
        math(math) {}

  std::string domain;  // "" for ai.onnx
  std::string op_type;
  int since;  // first opset this entry covers
  int until;  // last opset it covers; kAnyLaterOpset: no end
  OpKind kind;
  InferFn infer;
  LowerFn lower;  // null: outputs are always folded
  // What the op computes, for families whose infer and lower are shared by
  // all their ops (unary, binary, compare, reduce): they read it here, so an
  // op's name stands only at its registration.
  OpMath math;
};

class OpRegistry {
 public:
  static const OpRegistry &global();
  void add(OpDef def);
  // The common case: an ai.onnx op covered from opset `since` on.
  void add(const std::string &op, int since, OpKind kind, OpDef::InferFn infer, OpDef::LowerFn lower,
           OpMath math = {}) {
    add(OpDef("", op, since, kAnyLaterOpset, kind, infer, lower, math));
  }
  // Null when no entry covers this opset; `why` then says what exists.
  const OpDef *find(const std::string &domain, const std::string &op, int opset, std::string *why = nullptr) const;
  std::vector<std::string> op_names() const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<OpDef>> defs_;
};

// One per family, in lowering/ops/*.cc.
void register_elementwise_ops(OpRegistry &r);
void register_shape_ops(OpRegistry &r);
void register_view_ops(OpRegistry &r);
void register_index_ops(OpRegistry &r);
void register_compare_ops(OpRegistry &r);
void register_dot_ops(OpRegistry &r);
void register_reduction_ops(OpRegistry &r);
void register_conv_ops(OpRegistry &r);
void register_gather_scatter_ops(OpRegistry &r);
void register_rearrange_ops(OpRegistry &r);
void register_resize_ops(OpRegistry &r);
void register_topk_ops(OpRegistry &r);
void register_sampling_ops(OpRegistry &r);
void register_loss_ops(OpRegistry &r);
void register_unary_math_ops(OpRegistry &r);
void register_activation_ops(OpRegistry &r);
void register_integer_ops(OpRegistry &r);
void register_dropout_castlike_ops(OpRegistry &r);
void register_quantize_ops(OpRegistry &r);
void register_mask_ops(OpRegistry &r);
void register_axis_ops(OpRegistry &r);
void register_einsum_ops(OpRegistry &r);
void register_linalg_ops(OpRegistry &r);
void register_normalization_ops(OpRegistry &r);
void register_data_dependent_ops(OpRegistry &r);
void register_quantized_conv_ops(OpRegistry &r);
void register_conv_transpose_ops(OpRegistry &r);
void register_spectral_ops(OpRegistry &r);
void register_recurrent_ops(OpRegistry &r);
void register_control_flow_ops(OpRegistry &r);  // lowering/control_flow.cc: IfSelect
void register_run_time_dims_ops(OpRegistry &r);  // lowering/ops/run_time_dims.cc: RunTimeDims

}  // namespace disco
