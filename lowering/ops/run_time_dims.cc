// disco::RunTimeDims: a small integer tensor computed from shape values
// through float arithmetic, its elements bound to fresh symbols at run time
// (see run_time_dims.h for when shape inference inserts it).
//
// Outputs: 0, the tensor itself, whose elements are the symbols (a shape
// value: ops downstream read it as dims); 1..n, one uint8 tensor of extent
// s_i per element i. The runtime binds a host op's symbols from the extents
// of its outputs (runtime/host_op_bind_dims.cc makes them), so each element
// gets an output of its own whose extent is that element: n small buffers
// (the elements' sum in bytes) rather than one of their product.
#include "lowering/ops/run_time_dims.h"

#include <algorithm>
#include <map>
#include <optional>

#include "frontend/checked_size.h"
#include "lowering/constant_folding.h"
#include "lowering/infer_context.h"
#include "lowering/known_values.h"
#include "lowering/op_registry.h"

namespace disco {
namespace {

constexpr const char *kDomain = "disco";
constexpr const char *kOp = "RunTimeDims";
// As dims_value's bound (known_values.cc): a shape value has a few elements.
constexpr int64_t kMaxElements = 64;

bool is_integer(DType t) { return t != DType::Undefined && t != DType::Bool && !dtype_is_float(t); }

// Whether value `v` is computed from constants and shape values alone: no
// graph input's data, no host op's (data-dependent) output, no op without
// inputs (random generators).
bool from_shapes(const Graph &g, int v, std::map<int, bool> &memo) {
  if (v < 0) return true;  // an omitted optional input
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  memo[v] = false;  // no cycles in a sorted graph; a guard all the same
  const Value &val = g.value(v);
  bool ok = false;
  if (val.constant || val.sym_value) {
    ok = true;
  } else if (val.producer >= 0 && std::find(g.inputs.begin(), g.inputs.end(), v) == g.inputs.end()) {
    const Node &p = g.nodes.at(static_cast<size_t>(val.producer));
    const OpDef *def = OpRegistry::global().find(p.domain, p.op_type, p.opset);
    ok = def && def->kind != OpKind::Host;
    bool any_input = false;
    for (int in : p.inputs) {
      if (!ok) break;
      any_input = any_input || in >= 0;
      ok = from_shapes(g, in, memo);
    }
    ok = ok && any_input;
  }
  return memo[v] = ok;
}

bool already_routed(const Graph &g, int v) {
  for (const Node &n : g.nodes)
    if (n.domain == kDomain && n.op_type == kOp && !n.inputs.empty() && n.inputs[0] == v) return true;
  return false;
}

void infer_run_time_dims(InferContext &c) {
  if (!is_integer(c.dtype(0))) c.fail("input must be an integer tensor");
  const Shape &s = c.shape(0);
  std::vector<int64_t> input_dims;
  for (const Dim &d : s) {
    Dim k = c.store().canonical(d);
    if (!k.is_const()) c.fail("input must have a constant shape, got dim ", k.str());
    input_dims.push_back(k.as_const());
  }
  const std::optional<int64_t> count = element_count(input_dims);
  if (!count) c.fail("input of shape ", dims_text(input_dims), " has more than 2^63 elements");
  const int64_t n = *count;
  if (n > kMaxElements || c.num_outputs() != n + 1)
    c.fail("has ", c.num_outputs(), " outputs for ", n, " elements (at most ", kMaxElements, ")");
  std::vector<Dim> dims;
  for (int64_t i = 0; i < n; ++i) {
    Dim d = c.store().fresh_symbol(c.node().name + "_" + std::to_string(i),
                                   c.where() + " element " + std::to_string(i) + " (computed at run time)");
    c.set_output(static_cast<int>(i) + 1, DType::U8, {d});
    dims.push_back(d);
  }
  c.set_output(0, c.dtype(0), s);
  c.set_dims_value(0, dims);
}

// The constant shape of value v if it has one and at most kMaxElements elements.
std::optional<std::vector<int64_t>> small_static_shape(const Value &v, const ShapeStore &store) {
  if (!v.shape) return std::nullopt;
  std::optional<std::vector<int64_t>> shape = constant_dims(*v.shape, store);
  if (!shape) return std::nullopt;
  const std::optional<int64_t> n = element_count(*shape);  // none past 2^63: not small either
  if (!n || *n > kMaxElements) return std::nullopt;
  return shape;
}

}  // namespace

bool fold_view_of_dims(Graph &g, size_t index, const ShapeStore &store) {
  const Node &node = g.nodes.at(index);
  const OpDef *def = OpRegistry::global().find(node.domain, node.op_type, node.opset);
  if (!def || def->kind != OpKind::View || node.inputs.empty() || node.inputs[0] < 0) return false;
  if (node.outputs.size() != 1 || node.outputs[0] < 0) return false;
  const Value &x = g.value(node.inputs[0]), &y = g.value(node.outputs[0]);
  if (!x.sym_value || x.constant || y.sym_value || y.constant || !is_integer(y.dtype)) return false;
  for (size_t i = 1; i < node.inputs.size(); ++i)
    if (node.inputs[i] >= 0 && !g.value(node.inputs[i]).constant) return false;
  auto xs = small_static_shape(x, store), ys = small_static_shape(y, store);
  // Rank 0 and 1 are folded by the ops themselves (op_helpers.h: fold_dims).
  if (!xs || !ys || (xs->size() <= 1 && ys->size() <= 1)) return false;
  // The op on the element numbers of x, folded as a constant: which of x's
  // elements lands where.
  Graph mini;
  std::vector<int64_t> numbers(x.sym_value->size());
  for (size_t i = 0; i < numbers.size(); ++i) numbers[i] = static_cast<int64_t>(i);
  Node op = node;
  op.inputs[0] = mini.add_constant("numbers", TensorData::from_ints(DType::I64, numbers, *xs));
  for (size_t i = 1; i < op.inputs.size(); ++i)
    if (op.inputs[i] >= 0) op.inputs[i] = mini.add_constant(g.value(node.inputs[i]).name, *g.value(node.inputs[i]).constant);
  op.outputs = {mini.add_value("picked")};
  mini.nodes.push_back(op);
  mini.value(op.outputs[0]).producer = 0;
  mini.outputs = op.outputs;
  try {
    ShapeStore mini_store;
    infer_shapes(mini, mini_store);
  } catch (const std::exception &) {
    return false;  // the op's own inference reports it on the real graph
  }
  const Value &picked = mini.value(op.outputs[0]);
  const int64_t count = *element_count(*ys);  // at most kMaxElements: small_static_shape
  if (!picked.constant || picked.constant->num_elements() != count) return false;
  std::vector<Dim> dims;
  for (int64_t k : picked.constant->to_int64()) {
    if (k < 0 || k >= static_cast<int64_t>(numbers.size())) return false;
    dims.push_back((*x.sym_value)[static_cast<size_t>(k)]);
  }
  g.value(node.outputs[0]).sym_value = std::move(dims);
  return true;
}

bool route_run_time_dims(Graph &g, size_t index, const ShapeStore &store) {
  const Node &cast = g.nodes.at(index);
  if (!cast.domain.empty() || cast.op_type != "Cast" || cast.inputs.size() != 1 || cast.outputs.size() != 1) return false;
  const int in = cast.inputs[0], out = cast.outputs[0];
  if (in < 0 || out < 0 || !dtype_is_float(g.value(in).dtype)) return false;
  const Value &v = g.value(out);
  if (v.constant || v.sym_value || !is_integer(v.dtype)) return false;
  const std::optional<std::vector<int64_t>> dims = small_static_shape(v, store);
  if (!dims) return false;
  const int64_t n = *element_count(*dims);  // at most kMaxElements: small_static_shape
  if (n < 1) return false;
  std::map<int, bool> memo;
  if (!from_shapes(g, in, memo) || already_routed(g, out)) return false;

  // The Cast writes a new value; RunTimeDims takes over `out`.
  const std::string name = v.name;
  const int computed = g.add_value(name + "/computed", v.dtype);
  Node bind;
  bind.name = g.nodes[index].name + "/run_time_dims";
  bind.domain = kDomain;
  bind.op_type = kOp;
  bind.opset = 1;
  bind.inputs = {computed};
  bind.outputs = {out};
  for (int64_t i = 0; i < n; ++i) bind.outputs.push_back(g.add_value(name + "/extent" + std::to_string(i), DType::U8));
  g.nodes[index].outputs[0] = computed;
  g.value(computed).shape = g.value(out).shape;
  g.nodes.insert(g.nodes.begin() + static_cast<long>(index) + 1, std::move(bind));
  for (size_t i = index; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o >= 0) g.value(o).producer = static_cast<int>(i);
  return true;
}

void register_run_time_dims_ops(OpRegistry &r) {
  r.add(OpDef(kDomain, kOp, 1, kAnyLaterOpset, OpKind::Host, infer_run_time_dims, nullptr));
}

}  // namespace disco
