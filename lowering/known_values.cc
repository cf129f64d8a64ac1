#include "lowering/known_values.h"

#include <algorithm>
#include <set>

#include "frontend/attributes.h"
#include "frontend/content_hash.h"
#include "frontend/errors.h"

namespace disco {

namespace {

// Integer constants are read as dims only up to this many elements. Dims serve
// shapes and shape arithmetic (a shape, Slice starts, Pad's pads: a few
// elements per axis, and Halide has far fewer than 32 axes); shape inference
// folds elementwise ops over them symbolically, one Dim each. A large integer
// tensor is data, not a shape: a 2^20-element int64 initializer feeding an Add
// was turned into a million Dims first. Above this its consumers get no value
// and the op is left to its kernel.
constexpr int64_t kMaxDimsValueElements = 64;

}  // namespace

std::optional<std::vector<Dim>> dims_value(const Value &v) {
  if (v.sym_value) return v.sym_value;
  if (v.constant && !dtype_is_float(v.constant->dtype) && v.constant->num_elements() <= kMaxDimsValueElements) {
    std::vector<Dim> out;
    for (auto x : v.constant->to_int64()) out.emplace_back(x);
    return out;
  }
  return std::nullopt;
}

const TensorData *constant_input(const Graph &g, const Node &node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] < 0) return nullptr;
  const Value &v = g.value(node.inputs[i]);
  return v.constant ? &*v.constant : nullptr;
}

std::optional<std::vector<double>> floats_value(const Value &v) {
  if (!v.constant) return std::nullopt;
  std::vector<double> out;
  for (int64_t i = 0; i < v.constant->num_elements(); ++i) out.push_back(v.constant->float_at(i));
  return out;
}

std::optional<std::vector<int64_t>> ints_value(const Value &v, const ShapeStore &store) {
  // A constant's integers at any size, without making Dims: Gather checks
  // constant indices against their axis, however many there are.
  if (!v.sym_value && v.constant && !dtype_is_float(v.constant->dtype)) return v.constant->to_int64();
  auto d = dims_value(v);
  if (!d) return std::nullopt;
  return constant_dims(*d, store);
}

std::optional<std::vector<int64_t>> constant_dims(const std::vector<Dim> &dims, const ShapeStore &store) {
  std::vector<int64_t> out;
  for (const Dim &d : dims) {
    const Dim c = store.canonical(d);
    if (!c.is_const()) return std::nullopt;
    out.push_back(c.as_const());
  }
  return out;
}

std::optional<std::vector<int64_t>> constant_output_shape(const Graph &g, const Node &node, const ShapeStore &store) {
  if (node.outputs.size() != 1 || node.outputs[0] < 0 || !g.value(node.outputs[0]).shape) return std::nullopt;
  auto shape = constant_dims(*g.value(node.outputs[0]).shape, store);
  if (!shape || std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d < 0; })) return std::nullopt;
  return shape;
}

std::optional<std::vector<int64_t>> ints_input_or_attr(const Graph &g, const Node &node, int input,
                                                       const std::string &attr, const ShapeStore &store) {
  bool present = input < static_cast<int>(node.inputs.size()) && node.inputs[input] >= 0;
  if (!present) return AttrReader(node.attrs, node.where()).get_ints_opt(attr);
  const Value &v = g.value(node.inputs[input]);
  auto ints = ints_value(v, store);
  if (!ints) value_required(g, node, input, "input " + std::to_string(input));
  return ints;
}

std::vector<Dim> required_dims(const Graph &g, const Node &node, int input, const std::string &what) {
  auto d = dims_value(g.value(node.inputs.at(static_cast<size_t>(input))));
  if (!d) value_required(g, node, input, what);
  return *d;
}

std::vector<int64_t> required_ints(const Graph &g, const Node &node, int input, const std::string &what,
                                   const ShapeStore &store) {
  auto v = ints_value(g.value(node.inputs.at(static_cast<size_t>(input))), store);
  if (!v) value_required(g, node, input, what);
  return *v;
}

namespace {
void upstream_inputs(const Graph &g, int v, std::set<int> &seen, std::vector<int> &out) {
  if (v < 0 || !seen.insert(v).second) return;
  const Value &val = g.value(v);
  if (val.constant) return;
  if (std::find(g.inputs.begin(), g.inputs.end(), v) != g.inputs.end()) {
    out.push_back(v);
    return;
  }
  if (val.producer < 0) return;
  for (int in : g.nodes.at(static_cast<size_t>(val.producer)).inputs) upstream_inputs(g, in, seen, out);
}
}  // namespace

void value_required(const Graph &g, const Node &node, int input, const std::string &what) {
  const int id = node.inputs.at(static_cast<size_t>(input));
  std::set<int> seen;
  std::vector<int> from;
  upstream_inputs(g, id, seen, from);
  throw ValueRequired(id, from, node.where() + ": " + what + " ('" + g.value(id).name +
                              "') must be known at compile time (a constant, Shape arithmetic, or a graph input)");
}

std::string tensor_digest(const TensorData &t) {
  std::string s = std::to_string(static_cast<int>(t.dtype)) + " [";
  for (int64_t d : t.shape) s += std::to_string(d) + ",";
  return s + "] " + ContentHash().add(t.data(), t.num_bytes()).hex();
}

std::string value_digest(const Value &v) {
  if (v.constant) return "const " + tensor_digest(*v.constant);
  if (v.sym_value) {
    std::string s = "dims [";
    for (const auto &d : *v.sym_value) s += d.str() + ",";
    return s + "]";
  }
  return "?";
}

}  // namespace disco
