// Ops that run along an axis: CumSum, a sequential scan, and Hardmax, the
// one-hot of the first maximum. Both build a stage the scheduler
// materializes; CumSum's axis is needed at compile time.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;

// ---- CumSum -----------------------------------------------------------------------

int64_t cumsum_axis(const NodeContext &c, int64_t rank) {
  auto a = c.required_ints(1, "axis");
  if (a.size() != 1) c.fail("axis must hold one element, got ", a.size());
  return normalize_axis(c, a[0], rank);
}

void infer_cumsum(InferContext &c) {
  if (c.rank(0) == 0) c.fail("input must have rank >= 1");
  if (c.dtype(0) == DType::Bool) c.fail("CumSum needs a numeric input");
  cumsum_axis(c, c.rank(0));
  c.set_output(0, c.dtype(0), c.shape(0));
}

// s(j) = s(j -/+ 1) + term(j), a scan along the axis in the summing direction;
// `term` is x(j), or for `exclusive` the element before j (0 at the start).
void lower_cumsum(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t axis = cumsum_axis(c, x.rank());
  bool exclusive = c.attrs().get_int("exclusive", 0) != 0, reverse = c.attrs().get_int("reverse", 0) != 0;
  const Dim &n = x.shape[axis];
  Halide::Type t = acc_type(x.dtype);
  int step = reverse ? 1 : -1;  // from j, the previous position in summing order
  auto term = [&](std::vector<Expr> idx) {
    if (!exclusive) return Halide::cast(t, x.at(idx));
    Expr p = idx[axis] + step;
    Expr in_range = p >= 0 && p < c.dim(n);
    idx[axis] = clamp_index(c, p, n);
    return Halide::select(in_range, Halide::cast(t, x.at(idx)), Halide::cast(t, 0));
  };
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  Func s = c.func("scan");
  s(reversed(v)) = term(idx);
  Halide::RDom r(1, Halide::max(c.dim(n) - 1, 0));
  std::vector<Expr> at = idx, prev = idx;
  at[axis] = reverse ? c.dim(n) - 1 - r.x : Expr(r.x);
  prev[axis] = at[axis] + step;
  s(reversed(at)) = s(reversed(prev)) + term(at);
  c.add_stage(s, StageKind::Other, x.rank());
  c.define_output(0, v, s(reversed(idx)));
}

// ---- Hardmax ------------------------------------------------------------------------

// Before opset 13 the input is coerced to 2-D at `axis` (default 1), and the
// one-hot spans the whole trailing block; from 13 on it spans `axis` (default -1).
std::pair<int64_t, int64_t> hardmax_axes(const NodeContext &c, int64_t rank) {
  if (rank == 0) c.fail("input must have rank >= 1");
  bool coerce = c.opset() < 13;
  int64_t axis = normalize_axis(c, c.attrs().get_int("axis", coerce ? 1 : -1), rank);
  return {axis, coerce ? rank : axis + 1};
}

void infer_hardmax(InferContext &c) {
  if (!dtype_is_float(c.dtype(0))) c.fail("input must be a float tensor, got ", dtype_name(c.dtype(0)));
  hardmax_axes(c, c.rank(0));
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_hardmax(LowerContext &c) {
  const HTensor &x = c.in(0);
  const auto axes = hardmax_axes(c, x.rank());
  const int64_t first = axes.first, last = axes.second;  // not a structured binding: clang 14 lambdas cannot capture one
  // The row-major position of the reduced indices within the block.
  auto linear = [&](const std::vector<Expr> &red) {
    Expr l = 0;
    for (int64_t a = first; a < last; ++a) l = l * c.dim(x.shape[a]) + red[a - first];
    return l;
  };
  auto full = [&](const std::vector<Expr> &kept, const std::vector<Expr> &red) {
    std::vector<Expr> i(kept.begin(), kept.begin() + first);
    i.insert(i.end(), red.begin(), red.end());
    i.insert(i.end(), kept.begin() + first, kept.end());
    return i;
  };
  int kept_rank = x.rank() - static_cast<int>(last - first);
  auto kv = c.vars(kept_rank);
  auto kept = c.exprs(kv);
  Func best = c.func("argmax");
  // Replaced only by a strictly larger value, so the first maximum wins, as
  // ONNX's reference picks it (position 0 when all are the lowest value).
  Shape block(x.shape.begin() + first, x.shape.begin() + last);
  best(reversed(kv)) = Halide::Tuple(lowest_of(x.dtype), 0);
  std::vector<Expr> r = rdom_vars(make_rdom(c, block));
  Expr val = x.at(full(kept, r));
  Expr better = val > best(reversed(kv))[0];
  best(reversed(kv)) = Halide::Tuple(Halide::select(better, val, best(reversed(kv))[0]),
                                     Halide::select(better, linear(r), best(reversed(kv))[1]));
  c.add_stage(best, last == x.rank() ? StageKind::RowReduction : StageKind::Reduction, kept_rank);
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  std::vector<Expr> k(idx.begin(), idx.begin() + first), red(idx.begin() + first, idx.begin() + last);
  k.insert(k.end(), idx.begin() + last, idx.end());
  Expr hit = best(reversed(k))[1] == linear(red);
  c.define_output(0, v, Halide::select(hit, 1, 0));
}

}  // namespace

void register_axis_ops(OpRegistry &r) {
  r.add("CumSum", 11, OpKind::Reduction, infer_cumsum, lower_cumsum);
  r.add("Hardmax", 1, OpKind::Reduction, infer_hardmax, lower_hardmax);
}

}  // namespace disco
