#include "lowering/recurrent_weight_layout.h"

#include <cstring>
#include <map>

#include "frontend/errors.h"
#include "lowering/recurrent_projection.h"

namespace disco {

int recurrent_state_rows(int f32_lanes) { return f32_lanes >= 16 ? 8 : 4; }

bool has_transposed_recurrent_weights(const AttrReader &attrs) { return recurrent_panel_width(attrs) > 0; }

int recurrent_panel_width(const AttrReader &attrs) {
  return static_cast<int>(attrs.get_int(kRecurrentWeightsTransposedAttr, 0));
}

TensorData transpose_gate_blocks(const TensorData &r) {
  DISCO_CHECK(r.shape.size() == 3 && r.shape[2] > 0 && r.shape[1] % r.shape[2] == 0,
              "internal: transpose_gate_blocks needs a 3-D weight of whole [H, H] gate blocks");
  const int64_t dirs = r.shape[0], hidden = r.shape[2], gates = r.shape[1] / hidden;
  const int64_t width = hidden % kRecurrentStateLanes == 0 ? kRecurrentStateLanes : hidden;
  const size_t size = dtype_size(r.dtype);
  TensorData out(r.dtype, {dirs, gates, hidden / width, hidden, width});
  for (int64_t dg = 0; dg < dirs * gates; ++dg)
    for (int64_t j = 0; j < hidden; ++j)
      for (int64_t k = 0; k < hidden; ++k)
        std::memcpy(out.mutable_data() + static_cast<size_t>(((dg * hidden + j / width * width) * hidden + k * width) +
                                                             j % width) *
                                             size,
                    r.data() + static_cast<size_t>((dg * hidden + j) * hidden + k) * size, size);
  return out;
}

TensorData pack_gate_panels(const TensorData &w, int64_t width) {
  DISCO_CHECK(w.shape.size() == 3 && width > 0 && w.shape[1] % width == 0,
              "internal: pack_gate_panels needs a 3-D weight and a width dividing its rows");
  const int64_t dirs = w.shape[0], rows = w.shape[1], cols = w.shape[2];
  const size_t size = dtype_size(w.dtype);
  TensorData out(w.dtype, {dirs, rows / width, cols, width});
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(out.mutable_data() +
                        static_cast<size_t>(((d * (rows / width) + r / width) * cols + c) * width + r % width) * size,
                    w.data() + static_cast<size_t>((d * rows + r) * cols + c) * size, size);
  return out;
}

std::vector<int> transpose_recurrent_weights(Graph &g, const std::vector<int> &nodes, int panel) {
  std::vector<int> fresh;
  std::map<std::pair<int, int64_t>, int>
      transposed_of;  // (weight, panel width): a weight several nodes read is laid out once
  auto constant_weight = [&](int vid) {
    if (vid < 0) return false;
    const Value &v = g.value(vid);
    return v.constant && v.dtype == DType::F32 && v.constant->shape.size() == 3;
  };
  for (int id : nodes) {
    Node &n = g.nodes[id];
    if (!n.domain.empty() || (n.op_type != "RNN" && n.op_type != "GRU" && n.op_type != "LSTM")) continue;
    // A node that reads X's projections has no W (recurrent_projection.h).
    const bool projected = has_projected_recurrent_input(AttrReader(n.attrs, n.where()));
    if (n.inputs.size() < 3 || !(projected || constant_weight(n.inputs[1])) || !constant_weight(n.inputs[2])) continue;
    if (has_transposed_recurrent_weights(AttrReader(n.attrs, n.where()))) continue;
    const std::vector<int64_t> &r = g.value(n.inputs[2]).constant->shape;
    if (r[2] == 0 || r[1] % r[2] != 0) continue;  // not whole gate blocks: the op's checks will say so
    const int64_t rows = r[1];                    // G*H, W's rows too
    const int64_t width = panel > 0 && rows % panel == 0 ? panel : rows;
    for (int i : {1, 2}) {
      if (i == 1 && projected) continue;
      auto [it, first] = transposed_of.emplace(std::make_pair(n.inputs[i], i == 1 ? width : 0), -1);
      if (first) {
        const Value &w = g.value(n.inputs[i]);  // dangles after add_constant
        const std::string name = w.name + (i == 1 ? "/panels" + std::to_string(width) : "/by_gate");
        it->second =
            g.add_constant(name, i == 1 ? pack_gate_panels(*w.constant, width) : transpose_gate_blocks(*w.constant));
        fresh.push_back(it->second);
      }
      n.inputs[i] = it->second;
    }
    Attribute mark;
    mark.i = width;
    n.attrs[kRecurrentWeightsTransposedAttr] = mark;
  }
  return fresh;
}

}  // namespace disco
