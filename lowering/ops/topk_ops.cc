// TopK: the k largest (or smallest) elements along an axis, with their
// indices. k is needed at compile time (it is an output extent). The order is
// total: by value, then by index, so equal values keep their input order as
// ONNX specifies. Each element's rank under that order is counted over the
// axis (a stage), and output position p picks the one element whose rank is
// p; O(n^2) per row in the axis extent n, with no data-dependent control flow.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;

int64_t topk_k(const NodeContext &c) {
  int64_t k = c.opset() < 10 ? c.attrs().get_int("k") : [&] {
    auto v = c.required_ints(1, "k");
    if (v.size() != 1) c.fail("K must hold one value, got ", v.size());
    return v[0];
  }();
  if (k < 0) c.fail("k must be >= 0, got ", k);
  return k;
}

int64_t topk_axis(const NodeContext &c, int64_t rank) { return normalize_axis(c, c.attrs().get_int("axis", -1), rank); }

void infer_topk(InferContext &c) {
  if (c.rank(0) < 1) c.fail("X must have rank >= 1");
  int64_t axis = topk_axis(c, c.rank(0)), k = topk_k(c);
  Dim n = c.store().canonical(c.shape(0)[axis]);
  if (n.is_const() && n.as_const() < k) c.fail("k (", k, ") exceeds the extent ", n.as_const(), " of axis ", axis);
  if (!n.is_const())
    c.store().add_check({RuntimeCheck::AtLeast, n, Dim(k),
                         c.where() + ": axis " + std::to_string(axis) + " (" + n.str() +
                             ") must have at least k = " + std::to_string(k) + " elements"});
  Shape out = c.shape(0);
  out[axis] = k;
  c.set_output(0, c.dtype(0), out);
  c.set_output(1, DType::I64, out);
}

void lower_topk(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t axis = topk_axis(c, x.rank());
  bool largest = c.attrs().get_int("largest", 1) != 0;
  const Dim &n = x.shape[axis];
  Halide::Type t = acc_type(x.dtype);
  StageKind kind = axis + 1 == x.rank() ? StageKind::RowReduction : StageKind::Reduction;

  // rank(i) = how many j come before i: a better value, or an equal one at a lower index.
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  Halide::RDom rj(0, c.dim(n));
  auto other = idx;
  other[axis] = rj;
  Expr xi = Halide::cast(t, x.at(idx)), xj = Halide::cast(t, x.at(other));
  Expr better = largest ? xj > xi : xj < xi;
  Expr before = better || (xj == xi && Expr(rj) < idx[axis]);
  Func rank = c.func("rank");
  rank(reversed(v)) = 0;
  rank(reversed(v)) += Halide::select(before, 1, 0);
  c.add_stage(rank, kind, x.rank());

  // pos(p) = the i of rank p; ranks are a permutation, so one term is nonzero.
  auto w = c.vars(x.rank());
  auto widx = c.exprs(w);
  Halide::RDom ri(0, c.dim(n));
  auto at_i = widx;
  at_i[axis] = ri;
  Func pos = c.func("pos");
  pos(reversed(w)) = 0;
  pos(reversed(w)) += Halide::select(rank(reversed(at_i)) == widx[axis], Expr(ri), 0);
  c.add_stage(pos, kind, x.rank());

  auto o = c.vars(x.rank());
  auto oidx = c.exprs(o);
  Expr p = pos(reversed(oidx));
  auto src = oidx;
  src[axis] = clamp_index(c, p, n);
  c.define_output(0, o, x.at(src));
  if (c.has_output(1)) c.define_output(1, o, Halide::cast(Halide::Int(64), p));
}

}  // namespace

void register_topk_ops(OpRegistry &r) { r.add("TopK", 1, OpKind::Opaque, infer_topk, lower_topk); }

}  // namespace disco
