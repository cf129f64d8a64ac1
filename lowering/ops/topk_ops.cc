// TopK: the k largest (or smallest) elements along an axis, with their
// indices. k is needed at compile time (it is an output extent). The order is
// total: by value, then by index, so equal values keep their input order as
// ONNX specifies.
//
// Small k over values whose order fits an int32 (float32 and narrower,
// integers up to 32 bits): one fold over the axis keeping the best k
// (order, index) pairs per kept position, each element inserted by k
// compare-and-swap steps, vectorized across the kept innermost dim.
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

// The most k the insertion fold takes (its Tuple holds 2k or 3k values per lane).
constexpr int64_t kMostInserted = 16;
// Rows at least this long keep no values in the fold's slots.
constexpr int64_t kLongRow = 1024;

bool orders_fit(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::I8 || t == DType::I16 ||
         t == DType::I32 || t == DType::U8 || t == DType::U16;
}

// An int32 whose order is TopK's order of the values (a larger one ranks
// first), by bitwise operations and min/max only: Halide's simplifier takes
// signed arithmetic not to overflow and rewrites comparisons of sums
// accordingly, which orders near INT32_MIN break. Floats: the bits, -0 as
// +0, with the negative ones' magnitude bits flipped (NaNs with the sign bit
// clear rank above +inf, with it set below -inf); integers: the value; the
// smallest first: the bitwise not. INT32_MIN marks an empty slot of the
// fold, so the order is kept above it, except for int32 values (`exact`),
// whose fold tells empty slots by their index instead: for floats only a
// NaN with every magnitude bit set, at the worst end, ties with the next one.
Expr value_order(const Expr &value, bool largest, DType t, bool *exact) {
  *exact = t == DType::I32;
  Expr ord;
  if (value.type().is_float()) {
    // -0 as +0 by its bits: Halide compiles float compares with LLVM's
    // no-NaNs flag, and `v == 0` then held for NaNs too (they ranked as 0).
    Expr bits = Halide::reinterpret(Halide::Int(32), Halide::cast(Halide::Float(32), value));
    bits = Halide::select(bits == Halide::Int(32).min(), 0, bits);
    ord = Halide::select(bits < 0, bits ^ 0x7fffffff, bits);
  } else {
    ord = Halide::cast(Halide::Int(32), value);
  }
  if (!largest) ord = ~ord;
  return value.type().is_float() ? Halide::max(ord, Halide::Int(32).min() + 1) : ord;
}

// Small k over values with an int32 order: one fold over the axis whose Tuple
// keeps the best k (order, index) pairs in rank order, each element inserted
// by k compares (StageKind::Selection: vectorized across the kept innermost
// dim). Elements arrive in index order, so a strictly better order decides,
// and an equal value stays behind the earlier ones; an empty slot (order
// INT32_MIN, index INT32_MAX) takes any element. The input is read once:
// k max-fold passes over 64-bit (order, index) keys took 0.16-0.24 of a
// copy's bandwidth (benchmarks/results/datamove-2026-12-02-c.md).
void lower_topk_by_insertion(LowerContext &c, int64_t axis, int64_t k, bool largest) {
  const HTensor &x = c.in(0);
  const Dim &n = x.shape[axis];
  auto kv = c.vars(x.rank() - 1);  // the kept dims: every axis but `axis`, in ONNX order
  auto lhs = reversed(kv);
  Halide::RDom r(0, c.dim(n));
  std::vector<Expr> at = c.exprs(kv);
  at.insert(at.begin() + axis, Expr(r.x));
  bool exact = false;
  Expr order = value_order(x.at(at), largest, x.dtype, &exact), index = r.x;

  Func best = c.func("best");
  // Slots j: order (j), index (k + j) and, for rows not known to be long,
  // value (2k + j), so the outputs read the slots alone: gathering the values
  // from the input afterwards missed the cache about once per row (a third of
  // a TopK k=2 of 262144 rows of 64). In long rows the misses are few and
  // the slots' k more selects per element cost more.
  const Expr value = x.at(at);
  const Dim extent = c.store().canonical(n);
  const bool values = !(extent.is_const() && extent.as_const() >= kLongRow);
  const int64_t slots = values ? 3 * k : 2 * k;
  std::vector<Expr> empty(slots, Expr(Halide::Int(32).min()));
  for (int64_t j = k; j < 2 * k; ++j) empty[j] = Halide::Int(32).max();
  for (int64_t j = 2 * k; j < slots; ++j) empty[j] = Halide::cast(value.type(), 0);
  best(lhs) = Halide::Tuple(empty);
  // The slots stay in rank order, so the ones the element beats are a
  // suffix: slot j takes slot j - 1's pair if the element beat that one, the
  // element if it beats only j, else keeps its own; for the orders that is
  // min(order j - 1, max(element, order j)). The k compares are independent
  // of each other (no chain through the slots).
  std::vector<Expr> beats(k), next(slots);
  for (int64_t j = 0; j < k; ++j) {
    Expr oj = best(lhs)[j], ij = best(lhs)[k + j];
    beats[j] = exact ? order > oj || index < ij : order > oj;
    next[j] = exact ? Halide::select(beats[j], order, oj) : Halide::max(order, oj);
    next[k + j] = Halide::select(beats[j], index, ij);
    if (values) next[2 * k + j] = Halide::select(beats[j], value, best(lhs)[2 * k + j]);
    if (j == 0) continue;
    next[j] = exact ? Halide::select(beats[j - 1], best(lhs)[j - 1], next[j]) : Halide::min(best(lhs)[j - 1], next[j]);
    next[k + j] = Halide::select(beats[j - 1], best(lhs)[k + j - 1], next[k + j]);
    if (values) next[2 * k + j] = Halide::select(beats[j - 1], best(lhs)[2 * k + j - 1], next[2 * k + j]);
  }
  best(lhs) = Halide::Tuple(next);
  c.add_stage(best, StageKind::Selection, x.rank() - 1);

  auto o = c.vars(x.rank());
  auto oidx = c.exprs(o);
  std::vector<Expr> kept_at = oidx;
  kept_at.erase(kept_at.begin() + axis);
  auto kept_lhs = reversed(kept_at);
  auto slot = [&](int64_t first) {  // slot (first + position) at output position oidx[axis]
    Expr e = best(kept_lhs)[first + k - 1];
    for (int64_t p = k - 1; p-- > 0;) e = Halide::select(oidx[axis] == static_cast<int>(p), best(kept_lhs)[first + p], e);
    return e;
  };
  Expr picked = slot(k);
  std::vector<Expr> src = oidx;
  src[axis] = clamp_index(c, picked, n);
  c.define_output(0, o, values ? slot(2 * k) : x.at(src));
  if (c.has_output(1)) c.define_output(1, o, Halide::cast(Halide::Int(64), picked));
}

void lower_topk(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t axis = topk_axis(c, x.rank());
  bool largest = c.attrs().get_int("largest", 1) != 0;
  const Dim &n = x.shape[axis];
  const int64_t k = topk_k(c);
  if (k >= 1 && k <= kMostInserted && orders_fit(x.dtype)) return lower_topk_by_insertion(c, axis, k, largest);
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
