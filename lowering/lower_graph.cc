#include "lowering/lower_graph.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "lowering/op_registry.h"

namespace disco {

namespace {

std::string sanitize(const std::string &s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

HTensor constant_tensor(const Value &v) {
  const TensorData &t = *v.constant;
  if (t.num_elements() == 0) {  // nothing to embed, and nothing will be read
    HTensor h{Halide::Func("const_" + sanitize(v.name)), t.dtype, *v.shape};
    std::vector<Halide::Var> vars(t.shape.size());
    h.f(vars) = Halide::cast(halide_type(t.dtype), 0);
    return h;
  }
  std::vector<int> sizes;
  for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) sizes.push_back(static_cast<int>(*it));
  Halide::Buffer<> buf(halide_type(t.dtype), sizes, "c_" + sanitize(v.name));
  if (t.num_bytes()) std::memcpy(buf.data(), t.data(), t.num_bytes());
  HTensor h;
  h.dtype = t.dtype;
  h.shape = *v.shape;
  h.f = Halide::Func("const_" + sanitize(v.name));
  std::vector<Halide::Var> vars;
  for (size_t i = 0; i < sizes.size(); ++i) vars.emplace_back("c" + std::to_string(i));
  std::vector<Halide::Expr> args(vars.begin(), vars.end());
  h.f(vars) = buf(args);
  h.buffer = true;
  return h;
}

HTensor folded_tensor(const Value &v, SymbolParams &syms, const ShapeStore &store) {
  HTensor h;
  h.dtype = v.dtype;
  h.shape = *v.shape;
  h.f = Halide::Func("folded_" + sanitize(v.name));
  const auto &vals = *v.sym_value;
  Halide::Type t = halide_type(v.dtype);
  if (h.shape.empty()) {
    h.f() = Halide::cast(t, syms.expr(store.canonical(vals.at(0))));
    return h;
  }
  // Any rank (lowering/ops/run_time_dims.h: fold_view_of_dims): the elements
  // row-major, the shape constant.
  std::vector<Halide::Var> vars;
  Halide::Expr i = 0;
  for (size_t d = 0; d < h.shape.size(); ++d) {
    vars.emplace_back("i" + std::to_string(d));
    i = i * static_cast<int>(store.canonical(h.shape[d]).as_const()) + vars.back();
  }
  Halide::Expr e = Halide::cast(t, 0);
  for (size_t k = vals.size(); k-- > 0;)
    e = Halide::select(i == static_cast<int>(k), Halide::cast(t, syms.expr(store.canonical(vals[k]))), e);
  h.f(vars) = e;
  return h;
}

}  // namespace

LoweredKernel lower_nodes(const Graph &g, const ShapeStore &store, const std::vector<int> &nodes,
                          const std::vector<int> &outputs, bool constants_as_inputs, int f32_lanes) {
  LoweredKernel k;
  std::set<int> produced;
  for (int n : nodes)
    for (int o : g.nodes[n].outputs)
      if (o >= 0) produced.insert(o);
  auto tensor_for = [&](int vid) -> HTensor {
    auto it = k.tensors.find(vid);
    if (it != k.tensors.end()) return it->second;
    const Value &v = g.value(vid);
    HTensor h;
    if (v.constant && (!constants_as_inputs || v.constant->num_elements() == 0)) {
      h = constant_tensor(v);
    } else if (v.sym_value && v.producer >= 0 && !v.constant) {
      h = folded_tensor(v, k.syms, store);
    } else {
      DISCO_CHECK(!produced.count(vid), "internal: value '", v.name, "' used before it is defined");
      Halide::ImageParam p(halide_type(v.dtype), static_cast<int>(v.shape->size()), "in_" + sanitize(v.name));
      // A constant's shape is known, and the runtime passes it dense: its
      // extents and strides are compile-time numbers, so a kernel addresses
      // a weight tile from one base register with constant offsets (with
      // symbolic strides, convnet's stem conv kept one index register per
      // output channel of its micro-tile and spilled them).
      int64_t stride = 1;
      for (int d = 0; d < p.dimensions(); ++d) {
        p.dim(d).set_min(0);
        if (!v.constant) continue;
        const int64_t extent = v.constant->shape[v.shape->size() - 1 - d];
        p.dim(d).set_extent(static_cast<int>(extent));
        if (stride <= INT32_MAX) p.dim(d).set_stride(static_cast<int>(stride));
        stride *= std::max<int64_t>(extent, 1);
      }
      k.input_values.push_back(vid);
      k.input_params.push_back(p);
      h.f = Halide::Func(p);
      h.dtype = v.dtype;
      h.shape = *v.shape;
      h.buffer = true;
    }
    k.tensors[vid] = h;
    return h;
  };
  // Outputs of the kernel that are folded or constant still need a Func.
  for (int n : nodes) {
    const Node &node = g.nodes[n];
    const OpDef *def = OpRegistry::global().find(node.domain, node.op_type, node.opset);
    DISCO_CHECK(def, node.where(), ": no lowering registered");
    bool all_folded = true;
    for (int o : node.outputs) all_folded = all_folded && (o < 0 || g.value(o).constant || g.value(o).sym_value);
    if (all_folded || !def->lower) {
      for (int o : node.outputs)
        if (o >= 0) {
          DISCO_CHECK(g.value(o).constant || g.value(o).sym_value, node.where(),
                      ": output is neither folded nor lowered");
          tensor_for(o);
        }
      continue;
    }
    std::vector<std::optional<HTensor>> ins;
    for (int in : node.inputs) ins.push_back(in >= 0 ? std::optional<HTensor>(tensor_for(in)) : std::nullopt);
    LowerContext ctx(g, node, store, *def, k.syms, std::move(ins), f32_lanes);
    k.value_notes += "|";  // one section per node, in order
    ctx.record_reads(&k.value_notes);
    def->lower(ctx);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      int o = node.outputs[i];
      if (o < 0) continue;
      const HTensor &t = ctx.outputs()[i];
      DISCO_CHECK(t.f.defined(), node.where(), ": lowering did not define output ", i);
      k.tensors[o] = t;
      k.node_of_value[o] = n;
    }
    for (const auto &s : ctx.stages()) k.stages.push_back(s);
    for (const auto &d : ctx.maybe_broadcast())
      if (std::find(k.maybe_broadcast.begin(), k.maybe_broadcast.end(), d) == k.maybe_broadcast.end())
        k.maybe_broadcast.push_back(d);
  }
  for (int o : outputs) {
    HTensor t = tensor_for(o);
    // An output must be a Func of its own: wrap inputs, constants and aliases.
    bool is_param = std::find(k.input_values.begin(), k.input_values.end(), o) != k.input_values.end();
    bool reused = std::count(outputs.begin(), outputs.end(), o) > 1;
    for (const auto &f : k.outputs) reused = reused || f.name() == t.f.name();
    if (is_param || reused || !t.f.defined() || g.value(o).constant || g.value(o).sym_value ||
        k.node_of_value.count(o) == 0 || t.f.name().rfind("in_", 0) == 0) {
      Halide::Func w("out_" + sanitize(g.value(o).name));
      w(Halide::_) = t.f(Halide::_);
      t.f = w;
    }
    k.output_values.push_back(o);
    k.outputs.push_back(t.f);
  }
  return k;
}

}  // namespace disco
