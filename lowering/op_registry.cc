#include "lowering/op_registry.h"

#include "frontend/errors.h"

namespace disco {

const OpRegistry &OpRegistry::global() {
  static const OpRegistry r = [] {
    OpRegistry reg;
    register_elementwise_ops(reg);
    register_shape_ops(reg);
    register_view_ops(reg);
    register_index_ops(reg);
    register_compare_ops(reg);
    register_dot_ops(reg);
    register_reduction_ops(reg);
    register_conv_ops(reg);
    register_gather_scatter_ops(reg);
    register_rearrange_ops(reg);
    register_resize_ops(reg);
    register_topk_ops(reg);
    register_sampling_ops(reg);
    register_loss_ops(reg);
    register_unary_math_ops(reg);
    register_activation_ops(reg);
    register_integer_ops(reg);
    register_dropout_castlike_ops(reg);
    register_quantize_ops(reg);
    register_mask_ops(reg);
    register_axis_ops(reg);
    register_einsum_ops(reg);
    register_linalg_ops(reg);
    register_normalization_ops(reg);
    register_data_dependent_ops(reg);
    register_quantized_conv_ops(reg);
    register_conv_transpose_ops(reg);
    register_spectral_ops(reg);
    register_recurrent_ops(reg);
    register_control_flow_ops(reg);
    register_run_time_dims_ops(reg);
    return reg;
  }();
  return r;
}

void OpRegistry::add(OpDef def) {
  auto &v = defs_[{def.domain, def.op_type}];
  for (const auto &d : v)
    DISCO_CHECK(def.until < d.since || def.since > d.until, "op ", def.op_type, " registered twice for opset ",
                def.since);
  v.push_back(def);
}

const OpDef *OpRegistry::find(const std::string &domain, const std::string &op, int opset, std::string *why) const {
  auto it = defs_.find({domain, op});
  if (it == defs_.end()) {
    if (why) *why = "unknown op '" + (domain.empty() ? op : domain + "." + op) + "'";
    return nullptr;
  }
  for (const auto &d : it->second)
    if (opset >= d.since && opset <= d.until) return &d;
  if (why) {
    *why = "op '" + op + "' is not supported at opset " + std::to_string(opset) + " (supported:";
    for (const auto &d : it->second)
      *why += " " + std::to_string(d.since) + (d.until >= kAnyLaterOpset ? "+" : "-" + std::to_string(d.until));
    *why += ")";
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::op_names() const {
  std::vector<std::string> out;
  for (const auto &[k, v] : defs_) out.push_back(k.first.empty() ? k.second : k.first + "." + k.second);
  return out;
}

}  // namespace disco
