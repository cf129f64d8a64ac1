#include "lowering/node_context.h"

#include "lowering/known_values.h"

namespace disco {

NodeContext::NodeContext(const Graph &g, const Node &node, const ShapeStore &store, const OpDef &def)
    : graph_(g), node_(node), store_(store), def_(def), attrs_(node.attrs, node.where()) {}

const Value &NodeContext::input(int i) const {
  if (!has_input(i)) fail("input ", i, " is missing");
  return graph_.value(node_.inputs[i]);
}

const Shape &NodeContext::shape(int i) const {
  const Value &v = input(i);
  if (!v.shape) fail("input '", v.name, "' has no known shape");
  return *v.shape;
}

void NodeContext::note_input(int i) const {
  if (notes_ && has_input(i)) note("in" + std::to_string(i) + "=" + value_digest(input(i)));
}

const TensorData *NodeContext::constant(int i) const {
  const Value &v = input(i);
  note_input(i);
  return v.constant ? &*v.constant : nullptr;
}

std::optional<std::vector<Dim>> NodeContext::dims_value(int i) const {
  note_input(i);
  return disco::dims_value(input(i));
}

std::optional<std::vector<int64_t>> NodeContext::ints_value(int i) const {
  note_input(i);
  return disco::ints_value(input(i), store_);
}

std::vector<Dim> NodeContext::required_dims(int i, const std::string &what) const {
  input(i);  // names the node when the input is missing
  note_input(i);
  return disco::required_dims(graph_, node_, i, what);
}

void NodeContext::require_value(int i, const std::string &what) const {
  input(i);
  value_required(graph_, node_, i, what);
}

std::vector<int64_t> NodeContext::required_ints(int i, const std::string &what) const {
  input(i);
  note_input(i);
  return disco::required_ints(graph_, node_, i, what, store_);
}

std::vector<double> NodeContext::required_floats(int i, const std::string &what) const {
  auto v = floats_value(i);
  if (!v) value_required(graph_, node_, i, what);
  return *v;
}

std::optional<std::vector<double>> NodeContext::floats_value(int i) const {
  note_input(i);
  return disco::floats_value(input(i));
}

std::optional<std::vector<int64_t>> NodeContext::ints_input_or_attr(int input, const std::string &attr) const {
  note_input(input);
  return disco::ints_input_or_attr(graph_, node_, input, attr, store_);
}

}  // namespace disco
