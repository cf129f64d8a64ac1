#include "lowering/ops/op_helpers.h"

namespace disco {

using Halide::Expr;

Halide::RDom make_rdom(LowerContext &c, const std::vector<Dim> &extents) {
  std::vector<Halide::Range> ranges;
  for (auto it = extents.rbegin(); it != extents.rend(); ++it) ranges.emplace_back(0, c.dim(*it));
  return Halide::RDom(ranges);
}

std::vector<Expr> rdom_vars(const Halide::RDom &r) {
  std::vector<Expr> v;
  for (int i = r.dimensions() - 1; i >= 0; --i) v.push_back(r[i]);
  return v;
}

Expr clamp_index(LowerContext &c, const Expr &i, const Dim &extent) {
  return Halide::clamp(i, 0, Halide::max(c.dim(extent) - 1, 0));
}

Expr scalar_read(const HTensor &t) { return t.at(std::vector<Expr>(t.rank(), Expr(0))); }

Halide::Type acc_type(DType t) {
  if (t == DType::F16 || t == DType::BF16) return Halide::Float(32);
  return halide_type(t);
}

void fold_dims(InferContext &c, int out, const Shape &shape, DType t, const std::vector<Dim> &vals) {
  if ((t != DType::I64 && t != DType::I32) || shape.size() > 1) return;
  if (static_cast<int64_t>(vals.size()) > kMaxFolded) return;
  c.set_dims_value(out, vals);
}

void fold_passthrough(InferContext &c, const Shape &out) {
  if (auto v = c.dims_value(0)) fold_dims(c, 0, out, c.dtype(0), *v);
}

}  // namespace disco
