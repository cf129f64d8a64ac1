#include "lowering/weight_layout.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "frontend/checked_size.h"
#include "frontend/errors.h"

namespace disco {

namespace {

TensorData transposed(const TensorData &t) {
  const int64_t rows = t.shape[0], cols = t.shape[1];
  const size_t size = dtype_size(t.dtype);
  TensorData out(t.dtype, {cols, rows});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(out.mutable_data() + static_cast<size_t>(c * rows + r) * size,
                  t.data() + static_cast<size_t>(r * cols + c) * size, size);
  return out;
}

}  // namespace

TensorData pack_panels(const TensorData &b, int width) {
  DISCO_CHECK(b.shape.size() == 2 && width > 0, "internal: pack_panels needs a 2-D weight and a width");
  const int64_t k = b.shape[0], n = b.shape[1], panels = (n + width - 1) / width;
  const size_t size = dtype_size(b.dtype);
  TensorData out(b.dtype, {panels, k, width});
  std::memset(out.mutable_data(), 0, static_cast<size_t>(out.num_elements()) * size);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c)
      std::memcpy(out.mutable_data() + static_cast<size_t>(((c / width) * k + r) * width + c % width) * size,
                  b.data() + static_cast<size_t>(r * n + c) * size, size);
  return out;
}

std::vector<int> pack_dot_weights(Graph &g, const std::vector<int> &nodes,
                                  const std::function<int(int64_t n)> &panel_width) {
  std::vector<int> fresh;
  std::map<std::pair<int, int>, int> packed_of;  // (weight, width) -> packed value
  for (int id : nodes) {
    Node &n = g.nodes[id];
    const bool matmul = n.op_type == "MatMul", gemm = n.op_type == "Gemm";
    if (!n.domain.empty() || (!matmul && !gemm) || n.inputs.size() < 2 || n.inputs[1] < 0 || n.inputs[0] < 0) continue;
    if (n.attrs.count(kPanelWidthAttr)) continue;
    if (gemm && AttrReader(n.attrs, n.where()).get_int("transB", 0) != 0) continue;
    // A 1-D A has no rows: the output has no M for the dot template to tile.
    const Value &a = g.value(n.inputs[0]);
    if (matmul && (!a.shape || a.shape->size() < 2)) continue;
    const Value &b = g.value(n.inputs[1]);
    if (!b.constant || b.dtype != DType::F32 || b.constant->shape.size() != 2) continue;
    const int64_t columns = b.constant->shape[1];
    const int width = panel_width(columns);
    if (width <= 0) continue;
    auto [it, first] = packed_of.emplace(std::make_pair(n.inputs[1], width), -1);
    if (first) {
      // a and b dangle from here on
      it->second = g.add_constant(b.name + "/panels" + std::to_string(width), pack_panels(*b.constant, width));
      fresh.push_back(it->second);
    }
    n.inputs[1] = it->second;
    Attribute w, cols;
    w.i = width;
    cols.i = columns;
    n.attrs[kPanelWidthAttr] = w;
    n.attrs[kPanelColumnsAttr] = cols;
  }
  return fresh;
}

TensorData channels_last(const TensorData &w, int axis) {
  DISCO_CHECK(w.shape.size() >= 3 && axis >= 0 && axis < 2, "internal: channels_last needs a Conv weight");
  // [outer, m, inner] -> [outer, inner, m]
  const auto at = static_cast<size_t>(axis);
  const int64_t outer = checked_dims_product(w.shape, 0, at, "a Conv weight"),
                inner = checked_dims_product(w.shape, at + 1, w.shape.size(), "a Conv weight");
  const int64_t m = w.shape[axis];
  std::vector<int64_t> shape;
  for (size_t d = 0; d < w.shape.size(); ++d)
    if (static_cast<int>(d) != axis) shape.push_back(w.shape[d]);
  shape.push_back(m);
  const size_t size = dtype_size(w.dtype);
  TensorData out(w.dtype, shape);
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(out.mutable_data() + static_cast<size_t>((a * inner + i) * m + o) * size,
                    w.data() + static_cast<size_t>((a * m + o) * inner + i) * size, size);
  return out;
}

bool has_channels_last_weight(const AttrReader &attrs) { return attrs.get_int(kChannelsLastWeightAttr, 0) != 0; }

Shape conv_weight_shape(const AttrReader &attrs, const Shape &stored, int axis) {
  if (!has_channels_last_weight(attrs) || stored.size() < 3) return stored;
  Shape s = stored;
  std::rotate(s.begin() + axis, s.end() - 1, s.end());
  return s;
}

std::vector<int> channels_last_conv_weights(Graph &g, const std::vector<int> &nodes,
                                            const std::function<bool(int64_t out_channels, int64_t in_channels)> &wanted) {
  std::vector<int> fresh;
  std::map<std::pair<int, bool>, int> moved_of;  // (weight, as a ConvTranspose's) -> stored channels-last
  for (int id : nodes) {
    Node &n = g.nodes[id];
    const bool transpose = n.op_type == "ConvTranspose";
    if (!n.domain.empty() || (n.op_type != "Conv" && !transpose) || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    if (has_channels_last_weight(AttrReader(n.attrs, n.where()))) continue;
    if (AttrReader(n.attrs, n.where()).get_int("group", 1) != 1) continue;
    const Value &w = g.value(n.inputs[1]);
    if (!w.constant || w.dtype != DType::F32 || w.constant->shape.size() < 3) continue;
    if (!wanted(w.constant->shape[transpose ? 1 : 0], w.constant->shape[transpose ? 0 : 1])) continue;
    auto [it, first] = moved_of.emplace(std::make_pair(n.inputs[1], transpose), -1);
    if (first) {
      // w dangles from here on
      it->second = g.add_constant(w.name + "/channels_last", channels_last(*w.constant, transpose ? 1 : 0));
      fresh.push_back(it->second);
    }
    n.inputs[1] = it->second;
    Attribute mark;
    mark.i = 1;
    n.attrs[kChannelsLastWeightAttr] = mark;
  }
  return fresh;
}

int transpose_constant_weights(Graph &g) {
  int count = 0;
  std::map<int, int> transposed_of;  // a weight that several Gemms read is transposed once
  for (auto &n : g.nodes) {
    if (n.op_type != "Gemm" || !n.domain.empty() || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    if (AttrReader(n.attrs, n.where()).get_int("transB", 0) == 0) continue;
    const Value &b = g.value(n.inputs[1]);
    if (!b.constant || b.constant->shape.size() != 2) continue;
    auto [it, fresh] = transposed_of.emplace(n.inputs[1], -1);
    if (fresh) {
      it->second = g.add_constant(b.name + "/transposed", transposed(*b.constant));  // b dangles from here on
      ++count;
    }
    n.inputs[1] = it->second;
    n.attrs["transB"].kind = Attribute::Int;
    n.attrs["transB"].i = 0;
  }
  return count;
}

}  // namespace disco
