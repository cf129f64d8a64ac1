#include "tests/support/jit_eval.h"
#include "lowering/host_target.h"

#include <cmath>
#include <cstring>

#include "frontend/errors.h"
#include "frontend/tensor_compare.h"
#include "lowering/infer_context.h"
#include "lowering/lower_graph.h"
#include "runtime/shape_binder.h"
#include "tests/support/tensors.h"

namespace disco::testing {

namespace {
Halide::Buffer<> wrap(const TensorData &t) {
  std::vector<int> sizes;
  for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) sizes.push_back(static_cast<int>(*it));
  return Halide::Buffer<>(halide_type(t.dtype), const_cast<uint8_t *>(t.data()), sizes);
}
}  // namespace

std::vector<TensorData> jit_eval(Graph g, const std::vector<TensorData> &inputs) {
  ShapeStore store;
  infer_shapes(g, store);
  std::vector<int> nodes(g.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  LoweredKernel k = lower_nodes(g, store, nodes, g.outputs);
  for (auto &s : k.stages) s.f.compute_root();

  std::vector<InputSpec> specs;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value &v = g.value(g.inputs[i]);
    specs.push_back({v.name, v.dtype, *v.shape});
    shapes.push_back(inputs.at(i).shape);
    dtypes.push_back(inputs.at(i).dtype);
  }
  SymbolValues sv = bind_symbols(specs, shapes, dtypes, store.checks());

  Halide::ParamMap pm;
  for (size_t i = 0; i < k.input_values.size(); ++i) {
    int pos = -1;
    for (size_t j = 0; j < g.inputs.size(); ++j)
      if (g.inputs[j] == k.input_values[i]) pos = static_cast<int>(j);
    DISCO_CHECK(pos >= 0, "jit_eval: kernel reads a value that is not a graph input");
    pm.set(k.input_params[i], wrap(inputs[pos]));
  }
  for (auto &[name, p] : k.syms.used()) pm.set(p, static_cast<int32_t>(sv.at(name)));

  std::vector<TensorData> outs;
  std::vector<Halide::Buffer<>> bufs;
  for (int o : g.outputs) {
    const Value &v = g.value(o);
    outs.emplace_back(v.dtype, eval_shape(*v.shape, sv));
  }
  for (auto &t : outs) bufs.push_back(wrap(t));
  Halide::Pipeline p(k.outputs);
  p.realize(Halide::Realization(bufs), usable_jit_target(), pm);
  return outs;
}

double closeness(const TensorData &a, const TensorData &b, double rtol, double atol) {
  return disco::closeness(a, b, rtol, atol).worst;
}

void expect_run_error(Graph g, const std::vector<TensorData> &inputs, const std::string &node, const std::string &what) {
  expect_error_naming([&] { jit_eval(std::move(g), inputs); }, node, what);
}

}  // namespace disco::testing
