#include "targets/onednn/onednn_view.h"

#include <algorithm>
#include <cstdlib>

#include "frontend/dim.h"
#include "frontend/errors.h"

namespace disco {

namespace {

// "in3" -> 3; -1 for any other token.
int64_t input_dim(const std::string &token) {
  if (token.size() < 3 || token.compare(0, 2, "in") != 0) return -1;
  char *end = nullptr;
  const long long i = std::strtoll(token.c_str() + 2, &end, 10);
  return *end == '\0' && i >= 0 ? i : -1;
}

// A non-negative decimal constant, or -1.
int64_t constant(const std::string &token) {
  if (token.empty() || token[0] == '-' || token[0] == '+') return -1;
  char *end = nullptr;
  const long long v = std::strtoll(token.c_str(), &end, 10);
  return *end == '\0' ? v : -1;
}

}  // namespace

StridedDims dense_layout(const std::vector<int64_t> &dims) {
  StridedDims s{dims, std::vector<int64_t>(dims.size())};
  int64_t step = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    s.strides[i] = step;
    step *= dims[i] > 1 ? dims[i] : 1;
  }
  return s;
}

std::vector<int64_t> permuted(const std::vector<int64_t> &dims, const std::vector<int64_t> &perm) {
  std::vector<int64_t> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = dims.at(static_cast<size_t>(perm[i]));
  return out;
}

bool is_permutation(const std::vector<int64_t> &perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

void validate_view(const OperandView &v, const std::string &where) {
  if (!v.present()) {
    DISCO_CHECK(v.reshape.empty(), where, ": a Reshape view without a Transpose");
    return;
  }
  DISCO_CHECK(is_permutation(v.perm), where, ": view perm ", dims_str(v.perm), " is not a permutation");
  DISCO_CHECK(v.reshape.empty() || v.reshape.size() == v.perm.size(), where, ": the view's Reshape has ",
              v.reshape.size(), " dims, its Transpose ", v.perm.size());
  int rest = 0;
  for (const auto &t : v.reshape) {
    rest += t == "rest";
    DISCO_CHECK(t == "rest" || input_dim(t) >= 0 || constant(t) >= 0, where, ": bad view dim '", t, "'");
  }
  DISCO_CHECK(rest <= 1, where, ": a view's Reshape infers at most one dim");
}

StridedDims OperandView::apply(const std::vector<int64_t> &shape, const std::string &what) const {
  if (!present()) return dense_layout(shape);
  std::vector<int64_t> dims = shape;
  if (!reshape.empty()) {
    int64_t total = 1, known = 1;
    for (int64_t d : shape) total *= d;
    dims.assign(reshape.size(), 0);
    int rest = -1;
    for (size_t j = 0; j < reshape.size(); ++j) {
      const std::string &t = reshape[j];
      if (t == "rest") {
        rest = static_cast<int>(j);
        continue;
      }
      const int64_t i = input_dim(t);
      if (i >= 0)
        DISCO_CHECK(i < static_cast<int64_t>(shape.size()), what, " ", dims_str(shape), " has no dim ", i,
                    " for its view");
      dims[j] = i >= 0 ? shape[static_cast<size_t>(i)] : constant(t);
      known *= dims[j];
    }
    if (rest >= 0) dims[static_cast<size_t>(rest)] = known != 0 ? total / known : 0;
    int64_t got = 1;
    for (int64_t d : dims) got *= d;
    DISCO_CHECK(got == total, what, " ", dims_str(shape), " cannot be viewed as ", dims_str(dims));
  }
  DISCO_CHECK(dims.size() == perm.size(), what, " ", dims_str(dims), " has rank ", dims.size(),
              ", its view's Transpose ", perm.size());
  const StridedDims r = dense_layout(dims);
  return {permuted(r.dims, perm), permuted(r.strides, perm)};
}

StridedDims scattered_layout(const std::vector<int64_t> &dims, const std::vector<int64_t> &perm) {
  // The buffer holds the Transpose's result densely; dim perm[i] of the
  // matmul's result is dim i there.
  const StridedDims t = dense_layout(permuted(dims, perm));
  StridedDims s{dims, std::vector<int64_t>(dims.size())};
  for (size_t i = 0; i < perm.size(); ++i) s.strides[static_cast<size_t>(perm[i])] = t.strides[i];
  return s;
}

void copy_to_layout(const float *dense, float *dst, const StridedDims &layout) {
  const size_t rank = layout.dims.size();
  int64_t total = 1;
  for (int64_t d : layout.dims) total *= d;
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;  // of idx in dst
  for (int64_t i = 0; i < total; ++i) {
    dst[off] = dense[i];
    for (size_t d = rank; d-- > 0;) {  // the next index, row-major
      off += layout.strides[d];
      if (++idx[d] < layout.dims[d]) break;
      off -= layout.strides[d] * layout.dims[d];
      idx[d] = 0;
    }
  }
}

void broadcast_to_dense(const float *src, const std::vector<int64_t> &src_dims, const std::vector<int64_t> &dims,
                        float *dense) {
  const size_t rank = dims.size();
  DISCO_CHECK(src_dims.size() <= rank, "broadcast of ", dims_str(src_dims), " to ", dims_str(dims));
  std::vector<int64_t> sd(rank - src_dims.size(), 1);
  sd.insert(sd.end(), src_dims.begin(), src_dims.end());
  for (size_t d = 0; d < rank; ++d)
    DISCO_CHECK(sd[d] == 1 || sd[d] == dims[d], "broadcast of ", dims_str(src_dims), " to ", dims_str(dims));
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  if (rank == 0) {
    dense[0] = src[0];
    return;
  }
  // Row by row of the last dim: a copy where src has that dim, else a fill.
  const StridedDims s = dense_layout(sd);
  const int64_t inner = dims[rank - 1], rows = total / inner;
  const bool whole_rows = sd[rank - 1] == inner;
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;  // of the row's start in src
  for (int64_t row = 0; row < rows; ++row) {
    float *out = dense + row * inner;
    if (whole_rows)
      std::copy(src + off, src + off + inner, out);
    else
      std::fill(out, out + inner, src[off]);
    for (size_t d = rank - 1; d-- > 0;) {  // the next row, row-major
      const int64_t step = sd[d] == 1 ? 0 : s.strides[d];
      off += step;
      if (++idx[d] < dims[d]) break;
      off -= step * dims[d];
      idx[d] = 0;
    }
  }
}

std::string join_tokens(const std::vector<std::string> &tokens) {
  std::string s;
  for (size_t i = 0; i < tokens.size(); ++i) s += (i ? "," : "") + tokens[i];
  return s;
}

}  // namespace disco
