// Row-major walks over a result's elements for the constant folders
// (constant_copies.cc's copies, constant_arithmetic.cc's evaluation): which
// element of each operand every result element reads. An operand is a base
// and a step per result dim, in elements: a stride, 0 for a broadcast dim,
// or negative for a reversed one.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace disco::element_walk {

using Dims = std::vector<int64_t>;

// Row-major element strides of `shape`.
inline Dims strides_of(const Dims &shape) {
  Dims s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// The steps of a row-major operand of shape `in` broadcast to `out` (numpy's
// rule: aligned on the right, each dim 1, read again, or out's); nullopt when
// it does not broadcast.
inline std::optional<Dims> broadcast_steps(const Dims &in, const Dims &out) {
  if (in.size() > out.size()) return std::nullopt;
  const Dims strides = strides_of(in);
  Dims step(out.size(), 0);
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t d = out.size() - in.size() + k;
    if (in[k] == out[d])
      step[d] = in[k] == 1 ? 0 : strides[k];
    else if (in[k] != 1)
      return std::nullopt;
  }
  return step;
}

// Calls visit(at) for each element of a result of shape `out` in row-major
// order, at[k] the element operand k reads (at starts as the bases). Stops
// and returns false when visit does.
template <class Visit>
bool for_each_position(const Dims &out, Dims at, const std::vector<Dims> &steps, Visit &&visit) {
  const size_t rank = out.size(), m = at.size();
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  Dims idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (!visit(at.data())) return false;
    for (size_t d = rank; d-- > 0;) {  // the odometer: the innermost dim first
      for (size_t k = 0; k < m; ++k) at[k] += steps[k][d];
      if (++idx[d] < out[d]) break;
      for (size_t k = 0; k < m; ++k) at[k] -= steps[k][d] * out[d];
      idx[d] = 0;
    }
  }
  return true;
}

}  // namespace disco::element_walk
