#include "lowering/graph_rewrites.h"

#include <algorithm>

namespace disco {

namespace {

// How many node inputs and graph outputs read each value.
std::vector<int> use_counts(const Graph &g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const auto &n : g.nodes)
    for (int in : n.inputs)
      if (in >= 0) ++uses[static_cast<size_t>(in)];
  for (int out : g.outputs) ++uses[static_cast<size_t>(out)];
  return uses;
}

// The float32 constant's values along the channel axis (length `channels`),
// when it broadcasts against [..., channels] along that axis only.
std::optional<std::vector<float>> channel_values(const Value &v, int64_t channels, size_t max_rank) {
  if (!v.constant || v.constant->dtype != DType::F32) return std::nullopt;
  const TensorData &t = *v.constant;
  if (t.shape.size() > max_rank) return std::nullopt;
  const int64_t n = t.num_elements();
  for (size_t i = 0; i + 1 < t.shape.size(); ++i)
    if (t.shape[i] != 1) return std::nullopt;
  if (n != 1 && n != channels) return std::nullopt;
  std::vector<float> out(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i) out[static_cast<size_t>(i)] = t.as<float>()[n == 1 ? 0 : i];
  return out;
}

int add_constant(Graph &g, const std::string &name, const std::vector<float> &values) {
  TensorData t(DType::F32, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.mutable_as<float>());
  return g.add_constant(name, std::move(t));
}

// Folds the Mul or Add that alone reads LayerNormalization `ln`'s output;
// returns the index of the node to drop, or -1.
int fold_next(Graph &g, size_t ln, const std::vector<int> &uses) {
  Node &norm = g.nodes[ln];
  const int y = norm.outputs[0];
  if (uses[static_cast<size_t>(y)] != 1) return -1;
  for (size_t k = 1; k < norm.outputs.size(); ++k)
    if (norm.outputs[k] >= 0 && uses[static_cast<size_t>(norm.outputs[k])] > 0) return -1;
  const Value &x = g.value(norm.inputs[0]);
  if (!x.shape || x.shape->empty() || !x.shape->back().is_const() || x.dtype != DType::F32) return -1;
  const int64_t rank = static_cast<int64_t>(x.shape->size());
  int64_t axis = AttrReader(norm.attrs, norm.where()).get_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return -1;
  const int64_t channels = x.shape->back().as_const();

  for (size_t i = ln + 1; i < g.nodes.size(); ++i) {
    Node &next = g.nodes[i];
    auto reads = std::find(next.inputs.begin(), next.inputs.end(), y);
    if (reads == next.inputs.end()) continue;
    if (!next.domain.empty() || (next.op_type != "Mul" && next.op_type != "Add") || next.inputs.size() != 2) return -1;
    const int other = next.inputs[reads == next.inputs.begin() ? 1 : 0];
    auto c = channel_values(g.value(other), channels, x.shape->size());
    auto scale = channel_values(g.value(norm.inputs[1]), channels, 1);
    if (!c || !scale) return -1;
    std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
    if (norm.inputs.size() > 2 && norm.inputs[2] >= 0) {
      auto b = channel_values(g.value(norm.inputs[2]), channels, 1);
      if (!b) return -1;
      bias = *b;
    }
    for (size_t j = 0; j < bias.size(); ++j) {
      if (next.op_type == "Mul") {
        (*scale)[j] *= (*c)[j];
        bias[j] *= (*c)[j];
      } else {
        bias[j] += (*c)[j];
      }
    }
    const std::string base = norm.name + "/folded_" + next.name;
    norm.inputs[1] = add_constant(g, base + "_scale", *scale);
    const int b = add_constant(g, base + "_bias", bias);
    if (norm.inputs.size() > 2)
      norm.inputs[2] = b;
    else
      norm.inputs.push_back(b);
    norm.outputs[0] = next.outputs[0];
    return static_cast<int>(i);
  }
  return -1;
}

bool never_negative(const Node &n) {
  static const char *const kOps[] = {"Softmax", "Sigmoid", "Exp", "Relu", "Abs"};
  return n.domain.empty() && std::find_if(std::begin(kOps), std::end(kOps), [&](const char *op) {
                               return n.op_type == op;
                             }) != std::end(kOps);
}

void renumber_producers(Graph &g) {
  for (auto &v : g.values) v.producer = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int out : g.nodes[i].outputs)
      if (out >= 0) g.value(out).producer = static_cast<int>(i);
}

bool has_subgraphs(const Graph &g) {
  for (const auto &n : g.nodes)
    if (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan") return true;
  return false;
}

}  // namespace

int fold_affine_into_layernorm(Graph &g) {
  if (has_subgraphs(g)) return 0;  // a body may read a value by name
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op_type != "LayerNormalization" || !g.nodes[i].domain.empty()) continue;
    for (int drop; (drop = fold_next(g, i, use_counts(g))) >= 0; ++removed)
      g.nodes.erase(g.nodes.begin() + drop);
  }
  if (removed > 0) renumber_producers(g);
  return removed;
}

int drop_redundant_relu(Graph &g) {
  if (has_subgraphs(g)) return 0;
  // Dropping a Relu only moves its producer's output: no value gains or loses a reader.
  const std::vector<int> uses = use_counts(g);
  std::vector<bool> dropped(g.nodes.size(), false);
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node &relu = g.nodes[i];
    const int x = relu.inputs.empty() ? -1 : relu.inputs[0];
    const int p = x >= 0 ? g.value(x).producer : -1;
    if (relu.op_type != "Relu" || !relu.domain.empty() || p < 0 || !never_negative(g.nodes[p]) ||
        uses[static_cast<size_t>(x)] != 1 || g.value(x).dtype != g.value(relu.outputs[0]).dtype)
      continue;
    std::replace(g.nodes[p].outputs.begin(), g.nodes[p].outputs.end(), x, relu.outputs[0]);
    g.value(relu.outputs[0]).producer = p;  // a Relu after this one sees the op itself
    dropped[i] = true;
    ++removed;
  }
  if (removed == 0) return 0;
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dropped[i]) nodes.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(nodes);
  renumber_producers(g);
  return removed;
}

int rewrite_graph(Graph &g) { return fold_affine_into_layernorm(g) + drop_redundant_relu(g); }

}  // namespace disco
