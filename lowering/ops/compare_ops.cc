// Comparisons, logical ops and Where: elementwise ops that shape arithmetic
// leans on (exported `expand` calls compare shape values with -1 and select).
// When the shape store can decide a comparison of folded shape values, the
// result is folded too, so the chain stays symbolic.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// ---- Where, comparisons, logical ops ----------------------------------------

// Compares folded shape values when the answer is known at compile time,
// e.g. Equal(shape, -1) in exported `expand` calls.
std::optional<bool> compare_dims(const ShapeStore &st, const CompareMath &m, const Dim &a, const Dim &b) {
  Dim d = st.canonical(a - b);
  auto lo = st.lower_bound(d), hi = st.upper_bound(d);
  return m.dims({d.is_const(0), lo && *lo > 0, hi && *hi < 0, lo && *lo >= 0, hi && *hi <= 0});
}

// true when `yes` holds, false when `no` does, else unknown.
std::optional<bool> decided(bool yes, bool no) {
  if (yes) return true;
  if (no) return false;
  return std::nullopt;
}

void fold_compare(InferContext &c, const Shape &out) {
  auto a = c.dims_value(0), b = c.dims_value(1);
  if (!a || !b || out.size() > 1 || dtype_is_float(c.dtype(0))) return;
  Dim n = c.store().canonical(num_elements(out));
  if (!n.is_const()) return;
  std::vector<int64_t> shape(out.size());
  if (!out.empty()) shape[0] = n.as_const();
  TensorData t(DType::Bool, shape);
  for (int64_t i = 0; i < n.as_const(); ++i) {
    const Dim &x = (*a)[a->size() == 1 ? 0 : i], &y = (*b)[b->size() == 1 ? 0 : i];
    auto r = compare_dims(c.store(), c.math<CompareMath>(), x, y);
    if (!r) return;
    t.mutable_as<uint8_t>()[i] = *r;
  }
  c.set_constant(0, t);
}

void infer_compare(InferContext &c) {
  if (c.dtype(0) != c.dtype(1))
    c.fail("inputs have different dtypes: ", dtype_name(c.dtype(0)), " and ", dtype_name(c.dtype(1)));
  bool logical = !c.math<CompareMath>().dims;
  if (logical && c.dtype(0) != DType::Bool) c.fail("inputs must be bool, not ", dtype_name(c.dtype(0)));
  Shape out = infer_binary_shape(c);
  c.set_output(0, DType::Bool, out);
  if (!logical) fold_compare(c, out);
}

void lower_compare(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  Expr a = read_binary_operand(c, 0, oi, os), b = read_binary_operand(c, 1, oi, os);
  Expr r = c.math<CompareMath>().expr(a, b);
  // Halide compiles floats under LLVM's no-NaNs flags, where a compare with a
  // NaN may come out either way (Equal(NaN, NaN) and LessOrEqual(NaN, 1) were
  // true); ONNX's, IEEE's, are all false. math::is_nan tests the bits.
  if (a.type().is_float() && a.type().bits() >= 32) r = r && !math::is_nan(a) && !math::is_nan(b);
  c.define_output(0, v, r);
}

void infer_where(InferContext &c) {
  if (c.dtype(0) != DType::Bool) c.fail("condition must be bool, not ", dtype_name(c.dtype(0)));
  if (c.dtype(1) != c.dtype(2))
    c.fail("X and Y have different dtypes: ", dtype_name(c.dtype(1)), " and ", dtype_name(c.dtype(2)));
  Shape out = c.broadcast(c.broadcast(c.shape(0), c.shape(1)), c.shape(2));
  c.set_output(0, c.dtype(1), out);
  auto cond = c.ints_value(0);
  auto x = c.dims_value(1), y = c.dims_value(2);
  Dim n = c.store().canonical(num_elements(out));
  if (!cond || !x || !y || out.size() > 1 || !n.is_const()) return;
  std::vector<Dim> vals;
  auto at = [](const auto &v, int64_t i) { return v[v.size() == 1 ? 0 : i]; };
  for (int64_t i = 0; i < n.as_const(); ++i) vals.push_back(at(*cond, i) ? at(*x, i) : at(*y, i));
  fold_dims(c, 0, out, c.dtype(1), vals);
}

void lower_where(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  c.define_output(0, v,
                  Halide::select(c.broadcast_read(0, oi, os), c.broadcast_read(1, oi, os), c.broadcast_read(2, oi, os)));
}

void add_compare(OpRegistry &r, const char *op, int since, CompareMath m) {
  r.add(op, since, OpKind::Elementwise, infer_compare, lower_compare, m);
}

}  // namespace

void register_compare_ops(OpRegistry &r) {
  using E = const Expr &;
  using Sign = const DimSign &;
  r.add("Where", 9, OpKind::Elementwise, infer_where, lower_where);
  add_compare(r, "Equal", 1,
              {[](E a, E b) { return a == b; }, [](Sign d) { return decided(d.zero, d.pos || d.neg); },
               [](int64_t a, int64_t b) { return a == b; }, [](double a, double b) { return a == b; }});
  add_compare(r, "Less", 1,
              {[](E a, E b) { return a < b; }, [](Sign d) { return decided(d.neg, d.nonneg); },
               [](int64_t a, int64_t b) { return a < b; }, [](double a, double b) { return a < b; }});
  add_compare(r, "Greater", 1,
              {[](E a, E b) { return a > b; }, [](Sign d) { return decided(d.pos, d.nonpos); },
               [](int64_t a, int64_t b) { return a > b; }, [](double a, double b) { return a > b; }});
  add_compare(r, "LessOrEqual", 12,
              {[](E a, E b) { return a <= b; }, [](Sign d) { return decided(d.nonpos, d.pos); },
               [](int64_t a, int64_t b) { return a <= b; }, [](double a, double b) { return a <= b; }});
  add_compare(r, "GreaterOrEqual", 12,
              {[](E a, E b) { return a >= b; }, [](Sign d) { return decided(d.nonneg, d.neg); },
               [](int64_t a, int64_t b) { return a >= b; }, [](double a, double b) { return a >= b; }});
  // Logical ops take bools and fold no shape values.
  add_compare(r, "And", 1, {[](E a, E b) { return a && b; }, nullptr, [](int64_t a, int64_t b) { return a && b; }});
  add_compare(r, "Or", 1, {[](E a, E b) { return a || b; }, nullptr, [](int64_t a, int64_t b) { return a || b; }});
  add_compare(r, "Xor", 1, {[](E a, E b) { return a != b; }, nullptr, [](int64_t a, int64_t b) { return a != b; }});
}

}  // namespace disco
