// Unary math beyond elementwise.cc's: trigonometric and hyperbolic functions
// and their inverses, Round, Sign, IsInf and IsNaN.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// Halide's function as an op's expression (Round: one vector instruction).
template <Expr (*fn)(Expr)>
Expr halide_math(const Expr &x, const UnaryArgs &) {
  return fn(x);
}

// math_library.h's function as an op's expression.
template <Expr (*fn)(const Expr &)>
Expr library(const Expr &x, const UnaryArgs &) {
  return fn(x);
}

void require_float_input(InferContext &c) {
  if (!dtype_is_float(c.dtype(0))) c.fail("input must be a float tensor, got ", dtype_name(c.dtype(0)));
}

void lower_sign(LowerContext &c) {
  const HTensor &in = c.in(0);
  auto v = c.vars(in.rank());
  Expr x = in.at(c.exprs(v));
  Halide::Type t = x.type();
  if (t.is_uint()) return c.define_output(0, v, Halide::select(x > 0, Halide::cast(t, 1), Halide::cast(t, 0)));
  // NaN compares false both ways and falls through unchanged, as numpy's sign.
  Expr s = Halide::select(x > 0, Halide::cast(t, 1), x < 0, Halide::cast(t, -1), x == 0, Halide::cast(t, 0), x);
  c.define_output(0, v, s);
}

// ---- IsInf, IsNaN ------------------------------------------------------------

// Halide compiles with LLVM's no-NaNs flag, under which x != x may fold to
// false; the bit pattern cannot be folded away.
struct FloatBits {
  Halide::Type uint;
  uint64_t exponent, mantissa, sign;
};

FloatBits float_bits(const LowerContext &c, DType t) {
  switch (t) {
    case DType::F32: return {Halide::UInt(32), 0x7f800000u, 0x007fffffu, 0x80000000u};
    case DType::F64: return {Halide::UInt(64), 0x7ff0000000000000ull, 0x000fffffffffffffull, 0x8000000000000000ull};
    case DType::F16: return {Halide::UInt(16), 0x7c00u, 0x03ffu, 0x8000u};
    case DType::BF16: return {Halide::UInt(16), 0x7f80u, 0x007fu, 0x8000u};
    default: c.fail("input must be a float tensor, got ", dtype_name(t));
  }
}

void infer_float_test(InferContext &c) {
  require_float_input(c);
  c.set_output(0, DType::Bool, c.shape(0));
}

void lower_float_test(LowerContext &c) {
  const HTensor &in = c.in(0);
  FloatBits fb = float_bits(c, in.dtype);
  auto v = c.vars(in.rank());
  Expr b = Halide::reinterpret(fb.uint, in.at(c.exprs(v)));
  auto k = [&](uint64_t m) { return Halide::cast(fb.uint, Expr(m)); };
  Expr exp_ones = (b & k(fb.exponent)) == k(fb.exponent);
  Expr mant_zero = (b & k(fb.mantissa)) == k(0);
  if (c.node().op_type == "IsNaN") return c.define_output(0, v, exp_ones && !mant_zero);
  bool pos = c.attrs().get_int("detect_positive", 1) != 0, neg = c.attrs().get_int("detect_negative", 1) != 0;
  Expr negative = (b & k(fb.sign)) != k(0);
  Expr inf = exp_ones && mant_zero;
  if (!pos) inf = inf && negative;
  if (!neg) inf = inf && !negative;
  c.define_output(0, v, inf);
}

}  // namespace

void register_unary_math_ops(OpRegistry &r) {
  // Halide's round, like ONNX's Round, rounds halves to even.
  const std::pair<const char *, UnaryMath> fns[] = {
      {"Tan", {library<math::tan>}},     {"Sinh", {library<math::sinh>}},
      {"Cosh", {library<math::cosh>}},   {"Asin", {library<math::asin>}},
      {"Acos", {library<math::acos>}},   {"Atan", {library<math::atan>}},
      {"Asinh", {library<math::asinh>}}, {"Acosh", {library<math::acosh>}},
      {"Atanh", {library<math::atanh>}}, {"Round", {halide_math<Halide::round>}},
  };
  for (const auto &[op, m] : fns) add_float_unary(r, op, m);
  r.add("Sign", 9, OpKind::Elementwise, infer_numeric_unary, lower_sign);
  for (const char *op : {"IsInf", "IsNaN"}) r.add(op, 9, OpKind::Elementwise, infer_float_test, lower_float_test);
}

}  // namespace disco
