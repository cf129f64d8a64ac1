#include "lowering/ops/op_helpers.h"

#include "lowering/math_library.h"
#include "lowering/shape_store.h"

namespace disco {

using Halide::Expr;

int64_t normalize_axis(const NodeContext &c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) c.fail("axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const NodeContext &c, const std::vector<int64_t> &axes, int64_t rank) {
  std::vector<int64_t> out;
  for (auto a : axes) {
    int64_t n = normalize_axis(c, a, rank);
    if (std::find(out.begin(), out.end(), n) != out.end()) c.fail("axis ", a, " is repeated");
    out.push_back(n);
  }
  return out;
}

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

Expr matmul_read(LowerContext &c, int i, const std::vector<Expr> &batch_idx, const Shape &batch_shape,
                 const std::vector<Expr> &tail) {
  const HTensor &t = c.in(i);
  if (t.rank() == 1) return t.at(tail);
  Shape shape = batch_shape;
  shape.push_back(t.shape[t.rank() - 2]);
  shape.push_back(t.shape[t.rank() - 1]);
  std::vector<Expr> idx = batch_idx;
  idx.insert(idx.end(), tail.begin(), tail.end());
  return c.broadcast_read(i, idx, shape);
}

std::function<Expr(const Expr &n, const Expr &k)> dot_operand(LowerContext &c, const std::vector<Halide::Var> &rest,
                                                             const std::function<Expr(const Expr &, const Expr &)> &read,
                                                             int panel) {
  Halide::Func rhs = c.func("rhs");
  Halide::Var n("dot_n"), k("dot_k");
  std::vector<Halide::Var> args{n, k};
  args.insert(args.end(), rest.begin(), rest.end());
  rhs(args) = read(n, k);
  c.add_stage(rhs, StageKind::DotOperand, static_cast<int>(args.size())).panel = panel;
  std::vector<Expr> tail(rest.begin(), rest.end());
  return [rhs, tail](const Expr &n, const Expr &k) {
    std::vector<Expr> at{n, k};
    at.insert(at.end(), tail.begin(), tail.end());
    return rhs(at);
  };
}

Expr scalar_read(const HTensor &t) { return t.at(std::vector<Expr>(t.rank(), Expr(0))); }

Expr sum_of(const Expr &a, const Expr &b) { return a + b; }
Expr product_of(const Expr &a, const Expr &b) { return a * b; }
Expr max_of(const Expr &a, const Expr &b) { return math::max(a, b); }
Expr min_of(const Expr &a, const Expr &b) { return math::min(a, b); }
Expr mean_of(const Expr &sum, const Expr &count) { return sum / Halide::cast(sum.type(), count); }

Halide::Type acc_type(DType t) {
  if (t == DType::F16 || t == DType::BF16) return Halide::Float(32);
  return halide_type(t);
}

namespace {

void infer_float_unary(InferContext &c) {
  if (!dtype_is_float(c.dtype(0))) c.fail("input must be a float tensor, got ", dtype_name(c.dtype(0)));
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_float_unary(LowerContext &c) {
  const HTensor &in = c.in(0);
  auto v = c.vars(in.rank());
  Expr x = Halide::cast(acc_type(in.dtype), in.at(c.exprs(v)));
  c.define_output(0, v, c.math<UnaryMath>().expr(x, {in.dtype, c.attrs()}));
}

}  // namespace

void add_float_unary(OpRegistry &r, const char *op, UnaryMath m, int since) {
  r.add(op, since, OpKind::Elementwise, infer_float_unary, lower_float_unary, m);
}

void infer_numeric_unary(InferContext &c) {
  if (c.dtype(0) == DType::Bool) c.fail(c.node().op_type, " needs a numeric input");
  c.set_output(0, c.dtype(0), c.shape(0));
}

void fold_dims(InferContext &c, int out, const Shape &shape, DType t, const std::vector<Dim> &vals) {
  if ((t != DType::I64 && t != DType::I32) || shape.size() > 1) return;
  if (static_cast<int64_t>(vals.size()) > kMaxFolded) return;
  c.set_dims_value(out, vals);
}

void fold_passthrough(InferContext &c, const Shape &out) {
  if (auto v = c.dims_value(0)) fold_dims(c, 0, out, c.dtype(0), *v);
}

std::optional<bool> divisor_is_positive(const Dim &y, const ShapeStore &st) {
  const auto lo = st.lower_bound(y), hi = st.upper_bound(y);
  if (lo && *lo >= 0) return true;
  if (hi && *hi <= 0) return false;
  return std::nullopt;
}

void fold_binary_dims(InferContext &c, const Shape &out,
                      const std::function<std::optional<Dim>(const Dim &, const Dim &)> &f) {
  auto a = c.dims_value(0), b = c.dims_value(1);
  if (!a || !b || out.size() > 1 || dtype_is_float(c.dtype(0))) return;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1)) return;
  std::vector<Dim> r;
  for (size_t i = 0; i < n; ++i) {
    std::optional<Dim> d = f((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]);
    if (!d || d->str().size() > kMaxFoldedText) return;
    r.push_back(*d);
  }
  c.set_dims_value(0, r);
}

// ---- binary broadcasting --------------------------------------------------------

namespace {

// Opset 1-6 broadcasting: B is aligned to A at `axis` (default: trailing) and
// only when broadcast=1.
struct LegacyBroadcast {
  bool on = false;
  int64_t axis = 0;
};

LegacyBroadcast legacy_broadcast(const NodeContext &c, int64_t ra, int64_t rb) {
  LegacyBroadcast lb;
  if (c.opset() >= 7 || c.attrs().get_int("broadcast", 0) == 0) return lb;
  lb.on = true;
  lb.axis = c.attrs().get_int("axis", ra - rb);
  if (lb.axis < 0 || lb.axis + rb > ra) c.fail("B of rank ", rb, " does not fit A of rank ", ra, " at axis ", lb.axis);
  return lb;
}

}  // namespace

// B's dims line up with A's [axis, axis + rank B): numpy's rule over A's
// first axis + rank B dims (B's trailing dims against that prefix's), A's
// own dims after them, so that a symbolic dim of B that is 1 at run time
// broadcasts as in any other binary op.
Shape infer_binary_shape(InferContext &c) {
  if (c.opset() >= 7) return c.broadcast(c.shape(0), c.shape(1));
  const Shape &a = c.shape(0), &b = c.shape(1);
  LegacyBroadcast lb = legacy_broadcast(c, c.rank(0), c.rank(1));
  if (!lb.on) {
    if (a.size() != b.size()) c.fail("without broadcast=1, A and B need the same rank");
    for (size_t j = 0; j < b.size(); ++j) c.require_equal(a[j], b[j], "dim " + std::to_string(j) + " of B must match A");
    return a;
  }
  const size_t end = static_cast<size_t>(lb.axis) + b.size();
  Shape out = c.broadcast(Shape(a.begin(), a.begin() + end), b);
  out.insert(out.end(), a.begin() + end, a.end());
  return out;
}

Halide::Expr read_binary_operand(LowerContext &c, int i, const std::vector<Halide::Expr> &oi, const Shape &os) {
  if (c.opset() >= 7 || i == 0) return c.broadcast_read(i, oi, os);
  LegacyBroadcast lb = legacy_broadcast(c, static_cast<int64_t>(os.size()), c.in(1).rank());
  const size_t end = static_cast<size_t>(lb.axis) + c.in(1).rank();
  return c.broadcast_read(1, {oi.begin(), oi.begin() + end}, Shape(os.begin(), os.begin() + end));
}

}  // namespace disco
