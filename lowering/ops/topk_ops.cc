// TopK: the k largest (or smallest) elements along an axis, with their
// indices. k is needed at compile time (it is an output extent). The order is
// total: by value, then by index, so equal values keep their input order as
// ONNX specifies.
//
// Small k over values that fit 32 bits (float32 and narrower, integers up to
// 32 bits): k selection passes, each a max-fold over the axis of a 64-bit key
// that orders elements as TopK does (the value's order-preserving bits above,
// the inverted index below), pass p taking the largest key below pass p-1's.
// A max-fold vectorizes and splits into parallel rows like any row reduction:
// O(k n) per row, the row re-read from cache each pass.
// Otherwise each element's rank under that order is counted over the axis (a
// stage), and output position p picks the one element whose rank is p; O(n^2)
// per row in the axis extent n, with no data-dependent control flow.
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

// The most k the selection passes take (one stage each).
constexpr int64_t kMostSelectionPasses = 16;

bool keys_fit(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::I8 || t == DType::I16 ||
         t == DType::I32 || t == DType::U8 || t == DType::U16;
}

// A 64-bit key whose order is TopK's: a larger key ranks first. The high half
// holds the value as an int32 of the same order (float bits with the negative
// ones' magnitude bits flipped, -0 as +0; bitwise not for the smallest); the
// low half 2^32 - 1 - index, so the lower index wins a tie.
Expr topk_key(const Expr &value, const Expr &index, bool largest) {
  Expr ord;
  if (value.type().is_float()) {
    Expr v = Halide::cast(Halide::Float(32), value);
    Expr bits = Halide::reinterpret(Halide::Int(32), v);
    ord = Halide::select(v == 0.0f, 0, Halide::select(bits < 0, bits ^ 0x7fffffff, bits));
  } else {
    ord = Halide::cast(Halide::Int(32), value);
  }
  if (!largest) ord = ~ord;
  Expr low = Halide::Expr(int64_t(0xffffffff)) - Halide::cast(Halide::Int(64), index);
  return (Halide::cast(Halide::Int(64), ord) << 32) | low;
}

// The index a key holds.
Expr key_index(const Expr &key) {
  return Halide::cast(Halide::Int(32), Halide::Expr(int64_t(0xffffffff)) - (key & 0xffffffff));
}

void lower_topk_by_selection(LowerContext &c, int64_t axis, int64_t k, bool largest) {
  const HTensor &x = c.in(0);
  const Dim &n = x.shape[axis];
  const bool row = axis + 1 == x.rank();
  // The kept dims: every axis but `axis`, in ONNX order.
  auto kv = c.vars(x.rank() - 1);
  auto kept = c.exprs(kv);
  const Expr none = Halide::Int(64).min();
  std::vector<Func> picks;
  for (int64_t p = 0; p < k; ++p) {
    Halide::RDom r(0, c.dim(n));  // one per pass: each pass's fold is split on its own
    std::vector<Expr> at = kept;
    at.insert(at.begin() + axis, Expr(r.x));
    Expr key = topk_key(x.at(at), r.x, largest);
    Func f = c.func("pick" + std::to_string(p));
    auto lhs = reversed(kv);
    f(lhs) = none;
    Expr candidate = p == 0 ? key : Halide::select(key < picks.back()(lhs), key, none);
    f(lhs) = Halide::max(f(lhs), candidate);
    c.add_stage(f, row ? StageKind::RowReduction : StageKind::Reduction, x.rank() - 1, row ? c.dim(n) : Expr());
    picks.push_back(f);
  }
  auto o = c.vars(x.rank());
  auto oidx = c.exprs(o);
  std::vector<Expr> kept_at = oidx;
  kept_at.erase(kept_at.begin() + axis);
  auto lhs = reversed(kept_at);
  Expr picked = picks.back()(lhs);
  for (int64_t p = k - 1; p-- > 0;) picked = Halide::select(oidx[axis] == static_cast<int>(p), picks[p](lhs), picked);
  Expr index = clamp_index(c, key_index(picked), n);
  auto src = oidx;
  src[axis] = index;
  c.define_output(0, o, x.at(src));
  if (c.has_output(1)) c.define_output(1, o, Halide::cast(Halide::Int(64), index));
}

void lower_topk(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t axis = topk_axis(c, x.rank());
  bool largest = c.attrs().get_int("largest", 1) != 0;
  const Dim &n = x.shape[axis];
  const int64_t k = topk_k(c);
  if (k >= 1 && k <= kMostSelectionPasses && keys_fit(x.dtype)) return lower_topk_by_selection(c, axis, k, largest);
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
