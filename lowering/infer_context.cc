#include "lowering/infer_context.h"

#include <set>

#include "lowering/constant_folding.h"
#include "lowering/control_flow.h"
#include "lowering/op_registry.h"
#include "lowering/ops/data_dependent_ops.h"
#include "lowering/ops/run_time_dims.h"

namespace disco {

InferContext::InferContext(Graph &g, int node_index, ShapeStore &store, const OpDef &def)
    : NodeContext(g, g.nodes.at(node_index), store, def), writable_graph_(g), writable_store_(store) {}

void InferContext::set_output(int i, DType t, Shape s) {
  if (!has_output(i)) return;
  Value &v = writable_graph_.value(node_.outputs[i]);
  v.dtype = t;
  v.shape = store_.canonical(s);
}

void InferContext::set_dims_value(int i, std::vector<Dim> vals) {
  if (!has_output(i)) return;
  Value &v = writable_graph_.value(node_.outputs[i]);
  for (auto &d : vals) d = store_.canonical(d);
  bool all_const = true;
  for (const auto &d : vals) all_const = all_const && d.is_const();
  if (all_const && v.shape) {
    std::vector<int64_t> ints;
    for (const auto &d : vals) ints.push_back(d.as_const());
    std::vector<int64_t> shp;
    for (const auto &d : *v.shape) shp.push_back(d.as_const());
    v.constant = TensorData::from_ints(v.dtype, ints, shp);
  }
  v.sym_value = std::move(vals);
}

void InferContext::set_constant(int i, TensorData t) {
  if (!has_output(i)) return;
  Value &v = writable_graph_.value(node_.outputs[i]);
  v.dtype = t.dtype;
  Shape s;
  for (auto d : t.shape) s.emplace_back(d);
  v.shape = s;
  if (!dtype_is_float(t.dtype) && t.num_elements() <= 64) {
    std::vector<Dim> dims;
    for (auto x : t.to_int64()) dims.emplace_back(x);
    v.sym_value = dims;
  }
  v.constant = std::move(t);
}

void InferContext::require_equal(const Dim &a, const Dim &b, const std::string &what) {
  writable_store_.assert_equal(a, b, where() + ": " + what);
}

Dim InferContext::broadcast_dim(const Dim &a0, const Dim &b0, const std::string &what) {
  Dim a = store_.canonical(a0), b = store_.canonical(b0);
  if (a == b) return a;
  if (a.is_const(1)) return b;
  if (b.is_const(1)) return a;
  if (a.is_const() && b.is_const()) fail("cannot broadcast ", what);  // `what` names both extents
  // A side that cannot be 1 fixes the result; the other must match it or be 1.
  std::string msg = where() + ": " + what + " must be equal or 1";
  writable_store_.add_check({RuntimeCheck::Broadcastable, a, b, msg});
  if (!store_.can_be_one(a)) return a;
  if (!store_.can_be_one(b)) return b;
  return max(a, b);
}

Shape InferContext::broadcast(const Shape &a, const Shape &b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    bool ha = i + a.size() >= r, hb = i + b.size() >= r;
    Dim da = ha ? a[i + a.size() - r] : Dim(1), db = hb ? b[i + b.size() - r] : Dim(1);
    out[i] = broadcast_dim(da, db,
                           "dim " + std::to_string(i) + " (" + da.str() + " vs " + db.str() + ") of " + shape_str(a) +
                               " and " + shape_str(b));
  }
  return out;
}

void infer_shapes(Graph &g, ShapeStore &store) {
  for (int id : g.inputs) {
    Value &v = g.value(id);
    DISCO_CHECK(v.shape, "graph input '", v.name, "' has no shape; disco needs at least its rank");
    for (size_t d = 0; d < v.shape->size(); ++d) {
      std::set<std::string> syms;
      (*v.shape)[d].collect_symbols(syms);
      for (const auto &s : syms) store.declare_symbol(s, "input '" + v.name + "' dim " + std::to_string(d));
    }
  }
  const auto &reg = OpRegistry::global();
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (is_control_flow(g.nodes[n])) {
      expand_control_flow(g, n, store);
      --n;  // infer the nodes that took its place
      continue;
    }
    route_data_dependent_topk(g, g.nodes[n]);
    route_if_select_of_differing_shapes(g, g.nodes[n], store);
    const Node &node = g.nodes[n];
    std::string why;
    const OpDef *def = reg.find(node.domain, node.op_type, node.opset, &why);
    if (!def) fail(node.where(), ": ", why);
    InferContext ctx(g, static_cast<int>(n), store, *def);
    def->infer(ctx);
    fold_constant_node(g, n, store);
    for (int out : node.outputs)
      if (out >= 0 && !g.value(out).shape) fail(node.where(), ": output '", g.value(out).name, "' got no shape");
    fold_view_of_dims(g, n, store);
    route_run_time_dims(g, n, store);  // may insert a node at n + 1 (invalidates `node`), inferred next
  }
  // Later merges can refine earlier shapes. Graph inputs keep their declared
  // shapes: the run-time binder reads symbols from them.
  std::set<int> inputs(g.inputs.begin(), g.inputs.end());
  for (size_t id = 0; id < g.values.size(); ++id) {
    Value &v = g.values[id];
    if (v.shape && !inputs.count(static_cast<int>(id))) v.shape = store.canonical(*v.shape);
    if (v.sym_value)
      for (auto &d : *v.sym_value) d = store.canonical(d);
  }
}

}  // namespace disco
