#include "lowering/constant_folding.h"

#include <cstring>

#include "lowering/lower_graph.h"
#include "lowering/op_registry.h"

namespace disco {

namespace {

constexpr int64_t kMaxFoldedElements = 1 << 16;

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

}  // namespace

bool fold_constant_node(Graph &g, size_t index, const ShapeStore &store) {
  const Node &n = g.nodes.at(index);
  if (!qualifies(g, n, store)) return false;
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
    Halide::Pipeline(k.outputs).realize(Halide::Realization(bufs), Halide::get_jit_target_from_environment());
    for (size_t i = 0; i < outs.size(); ++i) {
      Value &v = g.value(outs[i]);
      if (!dtype_is_float(v.dtype) && results[i].num_elements() <= 64) {
        std::vector<Dim> dims;
        for (auto x : results[i].to_int64()) dims.emplace_back(x);
        v.sym_value = dims;
      }
      v.constant = std::move(results[i]);
    }
    return true;
  } catch (const std::exception &) {
    return false;
  }
}

}  // namespace disco
