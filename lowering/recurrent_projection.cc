#include "lowering/recurrent_projection.h"

#include <cstring>
#include <map>
#include <string>

#include "frontend/attributes.h"

namespace disco {
namespace {

int gates_of(const std::string &op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

bool f32_constant(const Graph &g, int vid, size_t rank) {
  if (vid < 0) return false;
  const Value &v = g.value(vid);
  return v.constant && v.dtype == DType::F32 && v.constant->shape.size() == rank;
}

// A name no value has yet: `base`, else base_2, base_3, ...
std::string fresh_value_name(const Graph &g, const std::string &base) {
  std::string name = base;
  for (int k = 2; g.find_value(name) >= 0; ++k) name = base + "_" + std::to_string(k);
  return name;
}

// W [D, G*H, I] as [I, D*G*H]: column d*G*H + r is W[d, r, :].
TensorData by_input(const TensorData &w) {
  const int64_t dirs = w.shape[0], rows = w.shape[1], cols = w.shape[2];
  TensorData out(DType::F32, {cols, dirs * rows});
  const float *src = w.as<float>();
  float *dst = out.mutable_as<float>();
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < cols; ++i) dst[i * dirs * rows + d * rows + r] = src[(d * rows + r) * cols + i];
  return out;
}

// B [D, 2*G*H] as the projections' bias [D*G*H]: Wb + Rb, Rb of the last
// gate (GRU's h) left out where `skip_last_rb` (linear_before_reset).
TensorData projection_bias(const TensorData &b, int64_t gates, bool skip_last_rb) {
  const int64_t dirs = b.shape[0], rows = b.shape[1] / 2, hidden = rows / gates;
  TensorData out(DType::F32, {dirs * rows});
  const float *src = b.as<float>();
  float *dst = out.mutable_as<float>();
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t r = 0; r < rows; ++r) {
      const float rb = skip_last_rb && r >= (gates - 1) * hidden ? 0.0f : src[d * 2 * rows + rows + r];
      dst[d * rows + r] = src[d * 2 * rows + r] + rb;
    }
  return out;
}

}  // namespace

bool has_projected_recurrent_input(const AttrReader &attrs) {
  return attrs.get_int(kRecurrentProjectedInputAttr, 0) != 0;
}

int split_recurrent_projections(Graph &g) {
  int count = 0;
  const size_t original = g.nodes.size();
  // A W (or B) several nodes read is laid out once: W^T by W, the bias by
  // (B, whether GRU's Rb of gate h stays out).
  std::map<int, int> by_input_of;
  std::map<std::pair<int, bool>, int> bias_of;
  for (size_t id = 0; id < original; ++id) {
    // Copies, not references: nodes and values are appended below.
    const Node n = g.nodes[id];
    if (!n.domain.empty() || (n.op_type != "RNN" && n.op_type != "GRU" && n.op_type != "LSTM")) continue;
    const AttrReader attrs(n.attrs, n.where());
    if (has_projected_recurrent_input(attrs) || n.inputs.size() < 3 || n.inputs[0] < 0) continue;
    const Value &x = g.value(n.inputs[0]);
    if (x.dtype != DType::F32 || !x.shape || x.shape->size() != 3 || !(*x.shape)[2].is_const()) continue;
    if (!f32_constant(g, n.inputs[1], 3)) continue;
    const bool has_bias = n.inputs.size() > 3 && n.inputs[3] >= 0;
    if (has_bias && !f32_constant(g, n.inputs[3], 2)) continue;
    const TensorData &w = *g.value(n.inputs[1]).constant;
    const int64_t gates = gates_of(n.op_type), rows = w.shape[1];
    // Malformed weights stay with the node, whose own checks name them.
    if (w.shape[2] != (*x.shape)[2].as_const() || rows % gates != 0) continue;
    if (has_bias) {
      const auto &b = g.value(n.inputs[3]).constant->shape;
      if (b[0] != w.shape[0] || b[1] != 2 * rows) continue;
    }
    const bool lbr = n.op_type == "GRU" && attrs.get_int("linear_before_reset", 0) != 0;
    const Shape projected = {(*x.shape)[0], (*x.shape)[1], Dim(w.shape[0] * rows)};

    auto add_node = [&](const std::string &op, std::vector<int> inputs, const std::string &suffix) {
      const int out = g.add_value(fresh_value_name(g, n.name + suffix), DType::F32);
      g.value(out).shape = projected;
      Node m;
      m.name = n.name + suffix;
      m.op_type = op;
      m.opset = n.opset;
      m.inputs = std::move(inputs);
      m.outputs = {out};
      g.nodes.push_back(std::move(m));
      return out;
    };
    auto [wt, w_first] = by_input_of.emplace(n.inputs[1], -1);
    if (w_first) wt->second = g.add_constant(fresh_value_name(g, g.value(n.inputs[1]).name + "/by_input"), by_input(w));
    int p = add_node("MatMul", {n.inputs[0], wt->second}, "/input_projection");
    if (has_bias) {
      auto [bias, b_first] = bias_of.emplace(std::make_pair(n.inputs[3], lbr), -1);
      if (b_first) {
        const Value &b = g.value(n.inputs[3]);  // dangles after add_constant
        const std::string name = fresh_value_name(g, b.name + "/projection_bias");
        bias->second = g.add_constant(name, projection_bias(*b.constant, gates, lbr));
      }
      p = add_node("Add", {p, bias->second}, "/input_projection_bias");
    }
    Node &node = g.nodes[id];
    node.inputs[0] = p;
    node.inputs[1] = -1;
    Attribute mark;
    mark.i = 1;
    node.attrs[kRecurrentProjectedInputAttr] = mark;
    ++count;
  }
  if (count > 0) g.sort_nodes();
  return count;
}

}  // namespace disco
