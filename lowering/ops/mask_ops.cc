// Ops whose output is a mask over index positions: Trilu (keeps one side of a
// diagonal), EyeLike (ones on a diagonal) and OneHot (ones where the index
// along a new axis equals the input). Trilu's diagonal offset k may be a
// shape value; OneHot's depth is needed at compile time.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// ---- Trilu ------------------------------------------------------------------------

// The diagonal offset: a constant, or a shape value (a causal mask over a
// KV cache, tril(past + 1) = s - t, kept symbolic so that one compile
// serves every length).
Dim trilu_k(const NodeContext &c) {
  if (!c.has_input(1)) return Dim(0);
  auto k = c.required_dims(1, "k");
  if (k.size() != 1) c.fail("k must hold one element, got ", k.size());
  return c.store().canonical(k[0]);
}

void infer_trilu(InferContext &c) {
  if (c.rank(0) < 2) c.fail("input must have rank >= 2, got ", shape_str(c.shape(0)));
  trilu_k(c);
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_trilu(LowerContext &c) {
  const HTensor &x = c.in(0);
  const Dim k = trilu_k(c);
  bool upper = c.attrs().get_int("upper", 1) != 0;
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  Expr diff = idx.back() - idx[idx.size() - 2];  // column - row
  // k beyond any int32 extent keeps or drops everything; clamp it so the Expr
  // fits. A symbolic k is a difference of extents, which fits.
  Expr kk = k.is_const() ? Expr(static_cast<int32_t>(
                               std::max<int64_t>(std::min<int64_t>(k.as_const(), INT32_MAX / 2), -(INT32_MAX / 2))))
                         : c.dim(k);
  Expr keep = upper ? diff >= kk : diff <= kk;
  c.define_output(0, v, Halide::select(keep, x.at(idx), zero_of(x.dtype)));
}

// ---- EyeLike ----------------------------------------------------------------------

DType eyelike_dtype(const AttrReader &a, DType input) {
  return a.has("dtype") ? dtype_from_onnx(static_cast<int>(a.get_int("dtype"))) : input;
}

void infer_eyelike(InferContext &c) {
  if (c.rank(0) != 2) c.fail("input must be 2-D, got ", shape_str(c.shape(0)));
  c.set_output(0, eyelike_dtype(c.attrs(), c.dtype(0)), c.shape(0));
}

void lower_eyelike(LowerContext &c) {
  int64_t k = c.attrs().get_int("k", 0);
  auto v = c.vars(2);
  Expr kk = static_cast<int32_t>(std::max<int64_t>(std::min<int64_t>(k, INT32_MAX / 2), -(INT32_MAX / 2)));
  c.define_output(0, v, Halide::select(v[1] - v[0] == kk, 1, 0));
}

// ---- OneHot -----------------------------------------------------------------------

// depth may have any numeric dtype (the ONNX tests use float).
int64_t onehot_depth(const NodeContext &c) {
  auto ds = c.required_floats(1, "depth");
  if (ds.size() != 1) c.fail("depth must hold one element, got ", ds.size());
  if (ds[0] < 1) c.fail("depth must be positive, got ", ds[0]);
  return static_cast<int64_t>(ds[0]);
}

int64_t onehot_axis(const NodeContext &c, int64_t indices_rank) {
  return normalize_axis(c, c.attrs().get_int("axis", -1), indices_rank + 1);
}

void infer_onehot(InferContext &c) {
  if (c.rank(2) != 1) c.fail("values must be 1-D [off, on], got ", shape_str(c.shape(2)));
  c.require_equal(c.shape(2)[0], Dim(2), "values must hold two elements [off, on]");
  int64_t depth = onehot_depth(c);
  Shape out = c.shape(0);
  out.insert(out.begin() + onehot_axis(c, c.rank(0)), Dim(depth));
  c.set_output(0, c.dtype(2), out);
}

void lower_onehot(LowerContext &c) {
  const HTensor &ind = c.in(0), &values = c.in(2);
  int64_t depth = onehot_depth(c);
  int64_t axis = onehot_axis(c, ind.rank());
  auto v = c.vars(ind.rank() + 1);
  auto idx = c.exprs(v);
  std::vector<Expr> ii = idx;
  ii.erase(ii.begin() + axis);
  // Float indices truncate; negative ones count from the end.
  Expr i = ind.at(ii);
  if (i.type().is_float()) i = Halide::trunc(Halide::cast(Halide::Float(64), i));
  i = Halide::cast(Halide::Int(64), i);
  i = Halide::select(i < 0, i + Halide::cast(Halide::Int(64), Expr(depth)), i);
  Expr on = values.at({1}), off = values.at({0});
  c.define_output(0, v, Halide::select(i == Halide::cast(Halide::Int(64), idx[axis]), on, off));
}

}  // namespace

void register_mask_ops(OpRegistry &r) {
  r.add("Trilu", 14, OpKind::Elementwise, infer_trilu, lower_trilu);
  r.add("EyeLike", 9, OpKind::Elementwise, infer_eyelike, lower_eyelike);
  r.add("OneHot", 9, OpKind::View, infer_onehot, lower_onehot);
}

}  // namespace disco
