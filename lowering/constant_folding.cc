#include "lowering/constant_folding.h"
#include "lowering/host_target.h"

#include <cstring>
#include <optional>
#include <string>

#include "lowering/constant_arithmetic.h"
#include "lowering/constant_copies.h"
#include "lowering/lower_graph.h"
#include "lowering/op_registry.h"

namespace disco {

namespace {

bool qualifies(const Graph &g, const Node &n, const ShapeStore &store) {
  const OpDef *def = OpRegistry::global().find(n.domain, n.op_type, n.opset);
  if (!def || !def->lower || def->kind == OpKind::Host) return false;
  bool any_input = false;
  for (int in : n.inputs) {
    if (in < 0) continue;
    if (!g.value(in).constant) return false;
    any_input = true;
  }
  if (!any_input) return false;
  for (int o : n.outputs) {
    if (o < 0) continue;
    const Value &v = g.value(o);
    if (v.constant || !v.shape) return false;
    Dim count = store.canonical(num_elements(*v.shape));
    if (!count.is_const() || count.as_const() > kMaxFoldedElements) return false;
    for (const auto &d : *v.shape)
      if (!store.canonical(d).is_const()) return false;
  }
  return true;
}

// Ops whose output holds the input's elements in the same order, only under
// another shape. Folding them is a copy; going through lowering and Halide's
// JIT instead cost 80-100 ms a node (convnext_tiny's 108 constant Identity
// nodes took 9 s of its compile).
bool is_view_op(const std::string &op) {
  return op == "Identity" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}

// The output of a view op on a constant, or nothing where the sizes disagree
// (the kernel path then reports it).
std::optional<TensorData> fold_view(const Graph &g, const Node &n, const ShapeStore &store) {
  if (n.domain != "" && n.domain != "ai.onnx") return std::nullopt;
  if (n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs.empty() || n.inputs[0] < 0) return std::nullopt;
  const TensorData &in = *g.value(n.inputs[0]).constant;
  const Value &out = g.value(n.outputs[0]);
  if (out.dtype != in.dtype) return std::nullopt;
  std::vector<int64_t> shape;
  for (const auto &d : *out.shape) shape.push_back(store.canonical(d).as_const());
  TensorData t(in.dtype, shape);
  if (t.num_bytes() != in.num_bytes()) return std::nullopt;
  if (t.num_bytes()) std::memcpy(t.mutable_data(), in.data(), t.num_bytes());
  return t;
}

// Makes `t` the constant value of value `vid`; small integer tensors also
// become shape values, which is what lets them feed Reshape and Expand.
void set_constant(Graph &g, int vid, TensorData t) {
  Value &v = g.value(vid);
  if (!dtype_is_float(v.dtype) && t.num_elements() <= 64) {
    std::vector<Dim> dims;
    for (auto x : t.to_int64()) dims.emplace_back(x);
    v.sym_value = dims;
  }
  v.constant = std::move(t);
}

}  // namespace

bool fold_constant_node(Graph &g, size_t index, const ShapeStore &store) {
  const Node &n = g.nodes.at(index);
  if (!qualifies(g, n, store)) return false;
  if (is_view_op(n.op_type))
    if (auto t = fold_view(g, n, store)) {
      set_constant(g, n.outputs[0], std::move(*t));
      return true;
    }
  if (auto t = fold_by_copy(g, n, store)) {
    set_constant(g, n.outputs[0], std::move(*t));
    return true;
  }
  if (auto t = fold_by_arithmetic(g, n, store)) {
    set_constant(g, n.outputs[0], std::move(*t));
    return true;
  }
  try {
    std::vector<int> outs;
    for (int o : n.outputs)
      if (o >= 0) outs.push_back(o);
    LoweredKernel k = lower_nodes(g, store, {static_cast<int>(index)}, outs);
    if (!k.syms.used().empty() || !k.input_params.empty()) return false;
    for (auto &s : k.stages) s.f.compute_root();
    std::vector<TensorData> results;
    std::vector<Halide::Buffer<>> bufs;
    for (int o : outs) {
      const Value &v = g.value(o);
      std::vector<int64_t> shape;
      for (const auto &d : *v.shape) shape.push_back(store.canonical(d).as_const());
      results.emplace_back(v.dtype, shape);
    }
    for (auto &t : results) {
      std::vector<int> sizes(t.shape.rbegin(), t.shape.rend());
      static uint8_t empty[16];
      bufs.emplace_back(halide_type(t.dtype), t.num_bytes() ? t.mutable_data() : empty, sizes);
    }
    Halide::Pipeline(k.outputs).realize(Halide::Realization(bufs), usable_jit_target());
    for (size_t i = 0; i < outs.size(); ++i) set_constant(g, outs[i], std::move(results[i]));
    return true;
  } catch (const std::exception &) {
    return false;
  }
}

}  // namespace disco
