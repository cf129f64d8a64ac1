#include "lowering/constant_copies.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/attributes.h"
#include "lowering/element_walk.h"
#include "lowering/known_values.h"

namespace disco {

namespace {

using Dims = std::vector<int64_t>;
using element_walk::strides_of;

// out[i] = in[base + sum_d i_d * step[d]] over out's elements in order (steps in elements, may be 0 or negative).
void strided_copy(const TensorData &in, TensorData &out, int64_t base, const Dims &step) {
  const size_t es = dtype_size(in.dtype);
  uint8_t *to = out.mutable_data();
  element_walk::for_each_position(out.shape, {base}, {step}, [&](const int64_t *at) {
    std::memcpy(to, in.data() + static_cast<size_t>(at[0]) * es, es);
    to += es;
    return true;
  });
}

int64_t normalized_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

std::optional<TensorData> transpose(const Node &n, const TensorData &in, TensorData out) {
  const size_t rank = in.shape.size();
  Dims perm = AttrReader(n.attrs, n.where()).get_ints_opt("perm").value_or(Dims{});
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  if (perm.size() != rank) return std::nullopt;
  const Dims in_strides = strides_of(in.shape);
  Dims step(rank);
  for (size_t j = 0; j < rank; ++j) {
    if (perm[j] < 0 || perm[j] >= static_cast<int64_t>(rank) || out.shape[j] != in.shape[perm[j]]) return std::nullopt;
    step[j] = in_strides[perm[j]];
  }
  strided_copy(in, out, 0, step);
  return out;
}

// ONNX Slice from opset 10: starts, ends, axes and steps as inputs; the
// output extents are shape inference's, so only each axis's first element
// and step are needed (negative starts count from the end, then clamp to
// [0, dim] for positive steps and [0, dim - 1] for negative ones).
std::optional<TensorData> slice(const Graph &g, const Node &n, const TensorData &in, TensorData out) {
  if (n.opset < 10) return std::nullopt;
  const TensorData *starts = constant_input(g, n, 1), *axes_t = constant_input(g, n, 3),
                   *steps_t = constant_input(g, n, 4);
  if (!starts || (n.inputs.size() > 3 && n.inputs[3] >= 0 && !axes_t) ||
      (n.inputs.size() > 4 && n.inputs[4] >= 0 && !steps_t))
    return std::nullopt;
  const size_t rank = in.shape.size();
  const Dims first = starts->to_int64();
  Dims axes = axes_t ? axes_t->to_int64() : Dims{};
  if (!axes_t)
    for (size_t i = 0; i < first.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const Dims steps = steps_t ? steps_t->to_int64() : Dims(first.size(), 1);
  if (axes.size() != first.size() || steps.size() != first.size()) return std::nullopt;
  const Dims in_strides = strides_of(in.shape);
  Dims step = in_strides;
  int64_t base = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalized_axis(axes[i], rank);
    if (a < 0 || a >= static_cast<int64_t>(rank) || steps[i] == 0) return std::nullopt;
    const int64_t dim = in.shape[a];
    int64_t s = first[i] < 0 ? first[i] + dim : first[i];
    s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    const int64_t last = s + (out.shape[a] - 1) * steps[i];
    if (out.shape[a] > 0 && (s < 0 || s >= dim || last < 0 || last >= dim))
      return std::nullopt;  // shape inference and these bounds disagree: leave it to the kernel
    base += s * in_strides[a];
    step[a] = steps[i] * in_strides[a];
  }
  for (size_t d = 0; d < rank; ++d)
    if (out.shape[d] > in.shape[d]) return std::nullopt;
  if (out.num_elements() > 0) strided_copy(in, out, base, step);
  return out;
}

// numpy broadcasting of the input into the output's shape: aligned on the
// right, each input dim 1 (read again) or the output's.
std::optional<TensorData> expand(const TensorData &in, TensorData out) {
  const std::optional<Dims> step = element_walk::broadcast_steps(in.shape, out.shape);
  if (!step) return std::nullopt;
  if (out.num_elements() > 0) strided_copy(in, out, 0, *step);
  return out;
}

std::optional<TensorData> concat(const Graph &g, const Node &n, TensorData out) {
  const size_t rank = out.shape.size();
  const int64_t axis = normalized_axis(AttrReader(n.attrs, n.where()).get_int("axis"), rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return std::nullopt;
  const size_t es = dtype_size(out.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out.shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < rank; ++d) inner *= out.shape[d];
  int64_t at = 0;  // the first output index along the axis of the next input
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const TensorData *in = constant_input(g, n, i);
    if (!in || in->dtype != out.dtype || in->shape.size() != rank) return std::nullopt;
    for (size_t d = 0; d < rank; ++d)
      if (static_cast<int64_t>(d) != axis && in->shape[d] != out.shape[d]) return std::nullopt;
    const int64_t run = in->shape[axis] * inner;
    if (at + in->shape[axis] > out.shape[axis]) return std::nullopt;
    for (int64_t o = 0; o < outer && run > 0; ++o)
      std::memcpy(out.mutable_data() + static_cast<size_t>((o * out.shape[axis] + at) * inner) * es,
                  in->data() + static_cast<size_t>(o * run) * es, static_cast<size_t>(run) * es);
    at += in->shape[axis];
  }
  if (at != out.shape[axis]) return std::nullopt;
  return out;
}

// ScatterND without a reduction: data's elements, then each index tuple's
// slice of updates written over them in order (of duplicates the last wins,
// as in the kernel and ONNX's reference). Negative indices count from the
// end; one still out of range is left to the kernel, which clamps it.
std::optional<TensorData> scatter_nd(const Graph &g, const Node &n, const TensorData &data, TensorData out) {
  if (AttrReader(n.attrs, n.where()).get_string("reduction", "none") != "none") return std::nullopt;
  const TensorData *ind = constant_input(g, n, 1), *upd = constant_input(g, n, 2);
  if (!ind || !upd || upd->dtype != data.dtype || ind->shape.empty() || out.shape != data.shape) return std::nullopt;
  const size_t rank = data.shape.size(), q = ind->shape.size();
  const int64_t depth = ind->shape.back();
  if (depth < 1 || depth > static_cast<int64_t>(rank) || upd->shape.size() != q - 1 + rank - depth) return std::nullopt;
  for (size_t d = 0; d + 1 < q; ++d)
    if (upd->shape[d] != ind->shape[d]) return std::nullopt;
  int64_t slice = 1;
  for (size_t d = static_cast<size_t>(depth); d < rank; ++d) {
    if (upd->shape[q - 1 + d - depth] != data.shape[d]) return std::nullopt;
    slice *= data.shape[d];
  }
  const size_t es = dtype_size(data.dtype);
  if (out.num_bytes()) std::memcpy(out.mutable_data(), data.data(), out.num_bytes());
  const Dims strides = strides_of(data.shape);
  const int64_t tuples = ind->num_elements() / depth;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t j = 0; j < depth; ++j) {
      int64_t i = ind->int_at(t * depth + j);
      if (i < 0) i += data.shape[j];
      if (i < 0 || i >= data.shape[j]) return std::nullopt;
      at += i * strides[j];
    }
    std::memcpy(out.mutable_data() + static_cast<size_t>(at) * es, upd->data() + static_cast<size_t>(t * slice) * es,
                static_cast<size_t>(slice) * es);
  }
  return out;
}

}  // namespace

std::optional<TensorData> fold_by_copy(const Graph &g, const Node &n, const ShapeStore &store) {
  if (n.domain != "" && n.domain != "ai.onnx") return std::nullopt;
  const std::string &op = n.op_type;
  if (op != "Transpose" && op != "Slice" && op != "Concat" && op != "Expand" && op != "ScatterND") return std::nullopt;
  const std::optional<Dims> shape = constant_output_shape(g, n, store);
  const TensorData *in = constant_input(g, n, 0);
  if (!shape || !in || g.value(n.outputs[0]).dtype != in->dtype) return std::nullopt;
  TensorData out(in->dtype, *shape);
  if (op == "Concat") return concat(g, n, std::move(out));
  if (in->num_elements() == 0 && out.num_elements() > 0) return std::nullopt;
  if (op == "Transpose") return in->shape.size() == shape->size() ? transpose(n, *in, std::move(out)) : std::nullopt;
  if (op == "Slice") return in->shape.size() == shape->size() ? slice(g, n, *in, std::move(out)) : std::nullopt;
  if (op == "ScatterND") return scatter_nd(g, n, *in, std::move(out));
  return expand(*in, std::move(out));
}

}  // namespace disco
