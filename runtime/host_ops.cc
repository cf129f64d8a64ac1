#include "runtime/host_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "frontend/checked_size.h"
#include "frontend/errors.h"
#include "runtime/host_op_bind_dims.h"
#include "runtime/non_max_suppression.h"

namespace disco {

namespace {

std::vector<int64_t> strides_of(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

std::vector<TensorData> nonzero(const std::vector<const TensorData *> &in, const HostAttrs &) {
  const TensorData &x = *in.at(0);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.num_elements(); ++i)
    if (x.float_at(i) != 0) hits.push_back(i);
  const int64_t rank = static_cast<int64_t>(x.shape.size()), n = static_cast<int64_t>(hits.size());
  TensorData out(DType::I64, {rank, n});
  if (n == 0) return {out};  // x may have no elements, and dims whose strides pass 2^63
  auto st = strides_of(x.shape);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t d = 0; d < rank; ++d) out.mutable_as<int64_t>()[d * n + k] = (hits[k] / st[d]) % x.shape[d];
  return {out};
}

// Elements of `x` as slices along `axis` (or single elements when flattened).
struct Slices {
  int64_t outer, count, inner;  // x viewed as [outer, count, inner]
  size_t esize;
  bool flat;     // no axis attribute: x as a flat list of elements
  int64_t axis;
};

Slices slices_of(const TensorData &x, const HostAttrs &attrs) {
  auto it = attrs.find("axis");
  Slices s{1, x.num_elements(), 1, dtype_size(x.dtype), it == attrs.end(), 0};
  if (s.flat) return s;
  s.axis = it->second < 0 ? it->second + static_cast<int64_t>(x.shape.size()) : it->second;
  DISCO_CHECK(s.axis >= 0 && s.axis < static_cast<int64_t>(x.shape.size()), "axis ", it->second, " is out of range");
  s.count = x.shape[s.axis];
  const auto axis = static_cast<size_t>(s.axis);
  s.outer = checked_dims_product(x.shape, 0, axis, "the input");
  s.inner = checked_dims_product(x.shape, axis + 1, x.shape.size(), "the input");
  return s;
}

std::vector<TensorData> compress(const std::vector<const TensorData *> &in, const HostAttrs &attrs) {
  const TensorData &x = *in.at(0), &cond = *in.at(1);
  const Slices s = slices_of(x, attrs);
  const bool flat = s.flat;
  const int64_t axis = s.axis;
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min(s.count, cond.num_elements()); ++i)
    if (cond.int_at(i)) keep.push_back(i);
  std::vector<int64_t> shape = flat ? std::vector<int64_t>{static_cast<int64_t>(keep.size())} : x.shape;
  if (!flat) shape[axis] = static_cast<int64_t>(keep.size());
  TensorData out(x.dtype, shape);
  uint8_t *dst = out.mutable_data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t k : keep) {
      const uint8_t *src = x.data() + ((o * s.count + k) * s.inner) * s.esize;
      std::memcpy(dst, src, s.inner * s.esize);
      dst += s.inner * s.esize;
    }
  return {out};
}

std::vector<TensorData> unique(const std::vector<const TensorData *> &in, const HostAttrs &attrs) {
  const TensorData &x = *in.at(0);
  const bool sorted = attrs.count("sorted") ? attrs.at("sorted") != 0 : true;
  const Slices s = slices_of(x, attrs);
  const bool flat = s.flat;
  const int64_t axis = s.axis;
  // Slice k as a list of values (doubles compare like the ONNX reference; ints fit exactly up to 2^53).
  auto slice = [&](int64_t k) {
    std::vector<double> v;
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) v.push_back(x.float_at((o * s.count + k) * s.inner + i));
    return v;
  };
  std::vector<std::vector<double>> values;
  for (int64_t k = 0; k < s.count; ++k) values.push_back(slice(k));
  std::vector<int64_t> first;        // index of the first occurrence of each unique slice, in order found
  std::vector<int64_t> inverse(s.count);
  for (int64_t k = 0; k < s.count; ++k) {
    auto f = std::find_if(first.begin(), first.end(), [&](int64_t u) { return values[u] == values[k]; });
    if (f == first.end()) {
      inverse[k] = static_cast<int64_t>(first.size());
      first.push_back(k);
    } else {
      inverse[k] = f - first.begin();
    }
  }
  std::vector<int64_t> order(first.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return values[first[a]] < values[first[b]]; });
  std::vector<int64_t> rank_of(order.size());
  for (size_t r = 0; r < order.size(); ++r) rank_of[order[r]] = static_cast<int64_t>(r);
  const int64_t u = static_cast<int64_t>(first.size());
  std::vector<int64_t> yshape = flat ? std::vector<int64_t>{u} : x.shape;
  if (!flat) yshape[axis] = u;
  TensorData y(x.dtype, yshape), idx(DType::I64, {u}), inv(DType::I64, {s.count}), counts(DType::I64, {u});
  for (int64_t r = 0; r < u; ++r) {
    int64_t k = first[order[r]];
    idx.mutable_as<int64_t>()[r] = k;
    for (int64_t o = 0; o < s.outer; ++o)
      std::memcpy(y.mutable_data() + ((o * u + r) * s.inner) * s.esize,
                  x.data() + ((o * s.count + k) * s.inner) * s.esize, s.inner * s.esize);
  }
  for (int64_t k = 0; k < s.count; ++k) {
    int64_t r = rank_of[inverse[k]];
    inv.mutable_as<int64_t>()[k] = r;
    counts.mutable_as<int64_t>()[r] += 1;
  }
  return {y, idx, inv, counts};
}

// TopK whose k is computed from the data (lowering/ops/data_dependent_ops.cc:
// "TopKDynamic"): ONNX's TopK with k = the value of input 1, the order total
// as in lowering/ops/topk_ops.cc: by value, equal values in index order; NaN
// ranks above +inf for largest (below -inf for smallest), -0 equal to +0.
std::vector<TensorData> topk_dynamic(const std::vector<const TensorData *> &in, const HostAttrs &attrs) {
  const TensorData &x = *in.at(0);
  DISCO_CHECK(in.size() > 1 && in[1] && in[1]->num_elements() == 1, "TopK's K must hold one value");
  const int64_t k = in[1]->int_at(0), rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = attrs.count("axis") ? attrs.at("axis") : -1;
  if (axis < 0) axis += rank;
  DISCO_CHECK(axis >= 0 && axis < rank, "TopK's axis is out of range");
  const bool largest = !attrs.count("largest") || attrs.at("largest") != 0;
  const int64_t n = x.shape[axis];
  DISCO_CHECK(k >= 0 && k <= n, "TopK's k (", k, ") must be in [0, ", n, "], the extent of axis ", axis);
  const int64_t outer = checked_dims_product(x.shape, 0, static_cast<size_t>(axis), "TopK's input"),
                inner = checked_dims_product(x.shape, static_cast<size_t>(axis) + 1, x.shape.size(), "TopK's input");
  std::vector<int64_t> shape = x.shape;
  shape[axis] = k;
  TensorData values(x.dtype, shape), indices(DType::I64, shape);
  const size_t esize = x.num_elements() ? x.num_bytes() / static_cast<size_t>(x.num_elements()) : 1;
  // The top k by partial sort on a copy of the slice, ties broken by index: the
  // order a stable sort gives, in O(n log k). RetinaNet's TopK of k = 1000 over
  // 19206 anchors x 91 classes took 6.5 s as a full stable sort through float_at.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<double> vals(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) vals[static_cast<size_t>(j)] = x.float_at((o * n + j) * inner + i);
      auto before = [&](int64_t a, int64_t b) {  // a ranks before b, ties in index order
        const double va = vals[static_cast<size_t>(a)], vb = vals[static_cast<size_t>(b)];
        if (std::isnan(va) || std::isnan(vb)) {
          if (std::isnan(va) && std::isnan(vb)) return a < b;
          return std::isnan(va) ? largest : !largest;
        }
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      };
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t p = 0; p < k; ++p) {
        const int64_t src = (o * n + order[static_cast<size_t>(p)]) * inner + i, dst = (o * k + p) * inner + i;
        std::memcpy(values.mutable_data() + dst * esize, x.data() + src * esize, esize);
        indices.mutable_as<int64_t>()[dst] = order[static_cast<size_t>(p)];
      }
    }
  return {values, indices};
}

// A run-time If's output whose shape differs between the branches
// (lowering/control_flow.cc: IfSelectDynamic): a copy of the taken branch's
// tensor, inputs (condition, then, else). Both branches ran; the copy's shape
// binds the output's data-dependent dims.
std::vector<TensorData> if_select_dynamic(const std::vector<const TensorData *> &in, const HostAttrs &) {
  DISCO_CHECK(in.size() == 3 && in[0] && in[1] && in[2], "IfSelectDynamic takes a condition and two branch outputs");
  DISCO_CHECK(in[0]->num_elements() == 1, "the If's condition must hold one element, it holds ",
              in[0]->num_elements());
  return {in[0]->int_at(0) != 0 ? *in[1] : *in[2]};
}

}  // namespace

HostOpFn find_host_op(const std::string &name) {
  if (name == "NonZero") return nonzero;
  if (name == "Compress") return compress;
  if (name == "Unique") return unique;
  if (name == "NonMaxSuppression") return non_max_suppression;
  if (name == "TopKDynamic") return topk_dynamic;
  if (name == "RunTimeDims") return run_time_dims;
  if (name == "IfSelectDynamic") return if_select_dynamic;
  return nullptr;
}

}  // namespace disco
