// Elementwise ops: unary math, binary arithmetic with numpy broadcasting,
// Cast, Identity, Clip and the variadic Min, Max, Sum and Mean. Binary ops on
// folded shape values (Shape -> Mul -> Reshape) are folded to dims at
// inference time. Comparisons, logical ops and Where are in compare_ops.cc.
#include <cmath>
#include <iterator>

#include "lowering/infer_context.h"
#include "lowering/known_values.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"
#include "lowering/shape_store.h"

namespace disco {
namespace {

using Halide::Expr;

// ---- inference -------------------------------------------------------------

void infer_unary(InferContext &c) {
  c.set_output(0, c.dtype(0), c.shape(0));
  // Negated shape values appear in exported functions (LayerNormalization's expansion).
  const UnaryMath &m = c.math<UnaryMath>();
  auto v = c.dims_value(0);
  if (v && m.dims && !dtype_is_float(c.dtype(0))) {
    for (auto &d : *v) d = m.dims(d);
    c.set_dims_value(0, *v);
  }
}

void infer_binary(InferContext &c) {
  const BinaryMath &m = c.math<BinaryMath>();
  if (c.dtype(0) != c.dtype(1) && m.same_dtypes)
    c.fail("inputs have different dtypes: ", dtype_name(c.dtype(0)), " and ", dtype_name(c.dtype(1)));
  Shape out = infer_binary_shape(c);
  c.set_output(0, c.dtype(0), out);
  // Fold arithmetic on shape values.
  if (m.dims) fold_binary_dims(c, out, [&](const Dim &x, const Dim &y) { return m.dims(x, y, c.store()); });
}

// Cast's `to`: a TensorProto code from opset 6, the code's name before.
DType cast_target(const InferContext &c) {
  if (c.opset() >= 6) return dtype_from_onnx(static_cast<int>(c.attrs().get_int("to")));
  static const char *names[] = {"",      "FLOAT",  "UINT8", "INT8",    "UINT16", "INT16",  "INT32",
                                "INT64", "STRING", "BOOL",  "FLOAT16", "DOUBLE", "UINT32", "UINT64"};
  const std::string to = c.attrs().get_string("to", "");
  for (int code = 1; code < static_cast<int>(std::size(names)); ++code)
    if (to == names[code]) return dtype_from_onnx(code);
  c.fail("unknown 'to' type '", to, "'");
}

void infer_cast(InferContext &c) {
  DType to = cast_target(c);
  c.set_output(0, to, c.shape(0));
  auto v = c.dims_value(0);
  if (!v || dtype_is_float(c.dtype(0)) || c.dtype(0) == DType::Bool) return;
  if (!dtype_is_float(to) && to != DType::Bool) return c.set_dims_value(0, *v);
  // A shape value as float32 or float64 keeps its dims, for a float Range up
  // to it (torch.arange(seq, dtype=float) of rotary and sinusoidal position
  // tables). Only symbolic ones: constants fold as float tensors. The value
  // itself is computed as the Cast's kernel would, by lowering's
  // folded_tensor; a Range reads the dims and checks they are exact floats.
  if (to != DType::F32 && to != DType::F64) return;
  for (const Dim &d : *v)
    if (!c.store().canonical(d).is_const()) return c.set_dims_value(0, *v);
}

void infer_identity(InferContext &c) {
  c.set_output(0, c.dtype(0), c.shape(0));
  if (auto v = c.dims_value(0)) c.set_dims_value(0, *v);
}

// ---- lowering --------------------------------------------------------------

// A function of math_library.h as an op's expression (float16 computes in
// float32 there).
template <Expr (*fn)(const Expr &)>
Expr library(const Expr &x, const UnaryArgs &) {
  return fn(x);
}

// Halide's floor and ceil want float32 or float64; other types compute in
// float32.
template <Expr (*fn)(Expr)>
Expr in_float(const Expr &x, const UnaryArgs &u) {
  if (u.dtype == DType::F32 || u.dtype == DType::F64) return fn(x);
  return Halide::cast(x.type(), fn(Halide::cast(Halide::Float(32), x)));
}

void lower_unary(LowerContext &c) {
  auto v = c.vars(c.in(0).rank());
  c.define_output(0, v, c.math<UnaryMath>().expr(c.in(0).at(c.exprs(v)), {c.in(0).dtype, c.attrs()}));
}

// ---- element folds of constants (op_math.h) ----------------------------------

// int64 arithmetic that wraps, as the dtypes' own does, where C++'s overflows (UB).
int64_t wrapped(uint64_t x) { return static_cast<int64_t>(x); }
std::optional<int64_t> add_ints(int64_t a, int64_t b) { return wrapped(uint64_t(a) + uint64_t(b)); }
std::optional<int64_t> sub_ints(int64_t a, int64_t b) { return wrapped(uint64_t(a) - uint64_t(b)); }
std::optional<int64_t> mul_ints(int64_t a, int64_t b) { return wrapped(uint64_t(a) * uint64_t(b)); }
std::optional<int64_t> neg_int(int64_t x) { return wrapped(0 - uint64_t(x)); }
std::optional<int64_t> abs_int(int64_t x) { return x < 0 ? neg_int(x) : x; }

// C's / truncates, as ONNX and `divide` do. A division by 0 (0 in the kernel)
// and the one quotient past int64 are left to the kernel.
std::optional<int64_t> div_ints(int64_t a, int64_t b) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) return std::nullopt;
  return a / b;
}

std::optional<double> add_reals(double a, double b) { return a + b; }
std::optional<double> sub_reals(double a, double b) { return a - b; }
std::optional<double> mul_reals(double a, double b) { return a * b; }
std::optional<double> div_reals(double a, double b) { return a / b; }
std::optional<double> neg_real(double x) { return -x; }
std::optional<double> abs_real(double x) { return std::fabs(x); }

Expr divide(const Expr &a, const Expr &b, DType t) {
  if (dtype_is_float(t)) return a / b;
  // ONNX integer division truncates toward zero (C's /). Halide's is
  // Euclidean: its remainder is never negative, so where a < 0 leaves one the
  // truncated quotient is one step toward zero: +1 for b > 0 (-7 / 2: -4 ->
  // -3), -1 for b < 0 (-7 / -2: 4 -> 3); a >= 0 needs none (7 / -2 is -3).
  Expr zero = Halide::cast(a.type(), 0), q = a / b;
  if (a.type().is_uint()) return Halide::select(b == zero, zero, q);
  Expr step = Halide::select(b > zero, Halide::cast(a.type(), 1), Halide::cast(a.type(), -1));
  return Halide::select(b == zero, zero, Halide::select(a < zero && a % b != zero, q + step, q));
}

// ONNX integer Div truncates toward zero, symbolic shape values too (where
// the static compile's constants did, the dynamic compile's floor_div once
// floored: (seq - 8) / 2 at seq 5 gave -2, not -1). Floor and truncation agree
// where the quotient is not negative; otherwise the quotient is
// floor(max(x, 0) / y) - floor(max(-x, 0) / y) for y > 0, whose max()s the
// store drops where it knows x's sign. A divisor that may be negative or
// positive does not fold (nor a zero one).
std::optional<Dim> divide_dims(const Dim &x, const Dim &y, const ShapeStore &st) {
  if (y.is_const(0)) return std::nullopt;
  if (x.is_const() && y.is_const()) {
    auto q = div_ints(x.as_const(), y.as_const());
    return q ? std::optional<Dim>(Dim(*q)) : std::nullopt;
  }
  const std::optional<bool> positive = divisor_is_positive(y, st);
  if (!positive) return std::nullopt;
  const Dim d = *positive ? y : -y;
  Dim q;
  if (st.is_nonnegative(x))
    q = floor_div(x, d);
  else if (st.is_nonnegative(-x))
    q = -floor_div(-x, d);
  else
    q = floor_div(st.simplify_max(x, Dim(0)), d) - floor_div(st.simplify_max(-x, Dim(0)), d);
  return *positive ? q : -q;
}

// The exponent bits an integer Pow multiplies out (integer_power).
constexpr int kPowBits = 8;

// An integer Pow by square-and-multiply in the base's own type, so that a
// power that fits is exact (through float64, an int64 past 2^53 lost its low
// digits: (2^31 + 5)^2) and one that overflows wraps as PyTorch's does. An
// elementwise Expr has no loop, and each squaring doubles its tree, so the
// product covers the exponent's low kPowBits bits (255 multiplies before
// Halide's CSE); past those, bases -1, 0 and 1 stay exact and even bases wrap
// to 0 as they should, but an odd base of 3 or more (whose power is far past
// overflow) is not PyTorch's wrapped value. A negative exponent truncates
// 1 / a^-e: 1 for a base of 1, -1 or 1 for -1, else 0 (0 too for a base of 0,
// where C's pow gives an infinity that no integer holds).
Expr integer_power(const Expr &a, const Expr &e) {
  const Halide::Type t = a.type();
  const Expr one = Halide::cast(t, 1), zero = Halide::cast(t, 0);
  Expr product = one, square = a;
  for (int i = 0; i < kPowBits; ++i) {
    product = product * Halide::select(((e >> i) & 1) == one, square, one);
    if (i + 1 < kPowBits) square = square * square;
  }
  const Expr odd = (e & 1) == one;
  const Expr unit = Halide::select(a == -1 && odd, -one, one);  // a^e for a = +-1
  const Expr large = e >= Halide::cast(t, 1 << kPowBits);
  return Halide::select(e < zero || (large && (a & 1) == zero), Halide::select(a == one || a == -one, unit, zero),
                        large && (a == one || a == -one), unit, product);
}

// A float Pow is the math library's; an integer one integer_power's.
Expr power(const Expr &a, const Expr &b, DType t) {
  if (dtype_is_float(t)) return math::pow(a, b);
  return integer_power(a, b);
}

void lower_binary(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto idx = c.exprs(v);
  Expr a = read_binary_operand(c, 0, idx, os), b = read_binary_operand(c, 1, idx, os);
  if (b.type() != a.type()) b = Halide::cast(a.type(), b);  // Pow's exponent may differ
  c.define_output(0, v, c.math<BinaryMath>().expr(a, b, c.in(0).dtype));
}

// A float Pow by a constant integer exponent in [-2, 4] (x^2 in a variance,
// x^3 in GELU's tanh form) is that many multiplies (math::pow_int, within 2
// ulp); any other goes through math::pow.
void lower_pow(LowerContext &c) {
  std::optional<std::vector<double>> v = c.floats_value(1);
  if (dtype_is_float(c.in(0).dtype) && v && v->size() == 1 && c.out_shape(0).size() == c.shape(0).size()) {
    const double n = v->front();
    if (n == std::floor(n) && n >= -2 && n <= 4) {
      auto idx = c.vars(c.in(0).rank());
      return c.define_output(0, idx, math::pow_int(c.in(0).at(c.exprs(idx)), static_cast<int>(n)));
    }
  }
  lower_binary(c);
}

void lower_cast(LowerContext &c) {
  auto v = c.vars(c.in(0).rank());
  Expr x = c.in(0).at(c.exprs(v));
  DType to = c.out_dtype(0);
  if (dtype_is_float(c.in(0).dtype) && !dtype_is_float(to) && to != DType::Bool) {
    // Float to int truncates toward zero, through a wide type to avoid UB.
    x = Halide::cast(Halide::Int(64), Halide::trunc(Halide::cast(Halide::Float(64), x)));
    // Into an 8- or 16-bit type the value wraps, as PyTorch's and
    // onnxruntime's casts do on x86 (through a 32-bit conversion: -1.0 to
    // uint8 is 255, 200.0 to int8 is -56). Written out in bits: Halide folded
    // int64-then-narrow into one float-to-narrow conversion, which saturated.
    const int bits = halide_type(to).bits();
    if (bits < 32) {
      const Expr mask = Halide::Expr((int64_t(1) << bits) - 1);
      x = x & mask;
      if (halide_type(to).is_int()) {
        const Expr sign = Halide::Expr(int64_t(1) << (bits - 1));
        x = (x ^ sign) - sign;
      }
    }
  }
  c.define_output(0, v, cast_to(to, x));
}

void lower_identity(LowerContext &c) { c.set_output(0, c.in(0).f); }

// ---- Clip, Min, Max, Sum, Mean ----------------------------------------------

void infer_clip(InferContext &c) {
  for (int i = 1; i < 3; ++i) {
    if (!c.has_input(i)) continue;
    if (c.dtype(i) != c.dtype(0)) c.fail("input ", i, " must have the input's dtype ", dtype_name(c.dtype(0)));
    if (num_elements(c.shape(i)) != Dim(1)) c.fail("input ", i, " must be a scalar");
  }
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_clip(LowerContext &c) {
  auto v = c.vars(c.in(0).rank());
  Expr x = c.in(0).at(c.exprs(v));
  Halide::Type ty = x.type();
  // Before opset 11 the bounds were float attributes; since, optional inputs.
  if (c.opset() < 11) {
    if (c.attrs().has("min")) x = math::max(x, Halide::cast(ty, c.attrs().get_float("min", 0)));
    if (c.attrs().has("max")) x = math::min(x, Halide::cast(ty, c.attrs().get_float("max", 0)));
  } else {
    if (c.has_input(1)) x = math::max(x, Halide::cast(ty, scalar_read(c.in(1))));
    if (c.has_input(2)) x = math::min(x, Halide::cast(ty, scalar_read(c.in(2))));
  }
  c.define_output(0, v, x);
}

void infer_variadic(InferContext &c) {
  if (c.num_inputs() == 0) c.fail("needs at least one input");
  Shape out = c.shape(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    if (c.dtype(i) != c.dtype(0))
      c.fail("input ", i, " has dtype ", dtype_name(c.dtype(i)), ", input 0 has ", dtype_name(c.dtype(0)));
    out = c.broadcast(out, c.shape(i));
  }
  c.set_output(0, c.dtype(0), out);
}

void lower_variadic(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  // A fold over the inputs instead of an axis: the op's ReduceMath, from input 0 on (no init).
  const ReduceMath &m = c.math<ReduceMath>();
  const int n = static_cast<int>(c.node().inputs.size());
  Expr acc = c.broadcast_read(0, oi, os);
  for (int i = 1; i < n; ++i) acc = m.update(acc, c.broadcast_read(i, oi, os));
  if (m.finalize) acc = m.finalize(acc, n);
  c.define_output(0, v, acc);
}

void add_unary(OpRegistry &r, const char *op, UnaryMath m) {
  r.add(op, 1, OpKind::Elementwise, infer_unary, lower_unary, m);
}

// A unary op that ONNX defines on floats alone refuses an integer input,
// naming the node, rather than compute in the integer type: PyTorch exports
// x / sqrt(C), with C read from a shape, as a Sqrt of int64, where
// onnxruntime has no kernel and disco gave sqrt(128) = 11.
void infer_float_only_unary(InferContext &c) {
  if (!dtype_is_float(c.dtype(0)))
    c.fail("input must be a float tensor (ONNX defines ", c.node().op_type, " on floats alone), got ",
           dtype_name(c.dtype(0)));
  infer_unary(c);
}

void add_float_only_unary(OpRegistry &r, const char *op, UnaryMath m) {
  r.add(op, 1, OpKind::Elementwise, infer_float_only_unary, lower_unary, m);
}

void add_binary(OpRegistry &r, const char *op, BinaryMath m) {
  r.add(op, 1, OpKind::Elementwise, infer_binary, lower_binary, m);
}

}  // namespace

void register_elementwise_ops(OpRegistry &r) {
  using Args = const UnaryArgs &;
  add_unary(r, "Relu", {[](const Expr &x, Args) { return math::max(x, Halide::cast(x.type(), 0)); }});
  add_unary(r, "Neg", {[](const Expr &x, Args) { return -x; }, [](const Dim &d) { return -d; }, neg_int, neg_real});
  add_unary(r, "Abs",
            {[](const Expr &x, Args) { return x.type().is_uint() ? x : Halide::cast(x.type(), Halide::abs(x)); },
             nullptr, abs_int, abs_real});
  add_float_only_unary(r, "Exp", {library<math::exp>});
  add_float_only_unary(r, "Log", {library<math::log>});
  add_float_only_unary(r, "Sqrt", {library<math::sqrt>});
  add_float_only_unary(r, "Tanh", {library<math::tanh>});
  add_float_only_unary(r, "Sin", {library<math::sin>});
  add_float_only_unary(r, "Cos", {library<math::cos>});
  add_float_only_unary(r, "Floor", {in_float<Halide::floor>});
  add_float_only_unary(r, "Ceil", {in_float<Halide::ceil>});
  add_float_only_unary(r, "Reciprocal", {[](const Expr &x, Args) { return Halide::cast(x.type(), 1) / x; }});
  add_float_only_unary(r, "Sigmoid", {library<math::sigmoid>});
  add_unary(r, "Erf", {library<math::erf>});
  add_unary(
      r, "Not",
      {[](const Expr &x, Args) { return !x; }, nullptr, [](int64_t x) { return std::optional<int64_t>(x == 0); }});
  add_binary(r, "Add",
             {[](const Expr &a, const Expr &b, DType) { return a + b; },
              [](const Dim &x, const Dim &y, const ShapeStore &) { return std::optional<Dim>(x + y); }, true, add_ints,
              add_reals});
  add_binary(r, "Sub",
             {[](const Expr &a, const Expr &b, DType) { return a - b; },
              [](const Dim &x, const Dim &y, const ShapeStore &) { return std::optional<Dim>(x - y); }, true, sub_ints,
              sub_reals});
  add_binary(r, "Mul",
             {[](const Expr &a, const Expr &b, DType) { return a * b; },
              [](const Dim &x, const Dim &y, const ShapeStore &) { return std::optional<Dim>(x * y); }, true, mul_ints,
              mul_reals});
  add_binary(r, "Div", {divide, divide_dims, true, div_ints, div_reals});
  r.add("Pow", 1, OpKind::Elementwise, infer_binary, lower_pow, BinaryMath{power, nullptr, /*same_dtypes=*/false});
  r.add("Cast", 1, OpKind::Elementwise, infer_cast, lower_cast);
  r.add("Identity", 1, OpKind::Elementwise, infer_identity, lower_identity);
  r.add("Clip", 1, OpKind::Elementwise, infer_clip, lower_clip);
  r.add("Min", 1, OpKind::Elementwise, infer_variadic, lower_variadic, ReduceMath{"", nullptr, min_of});
  r.add("Max", 1, OpKind::Elementwise, infer_variadic, lower_variadic, ReduceMath{"", nullptr, max_of});
  r.add("Sum", 1, OpKind::Elementwise, infer_variadic, lower_variadic, ReduceMath{"", nullptr, sum_of});
  r.add("Mean", 1, OpKind::Elementwise, infer_variadic, lower_variadic,
        ReduceMath{"", nullptr, sum_of, nullptr, mean_of});
}

}  // namespace disco
