// Binary ops with integer semantics that Halide's operators do not match
// one to one: Mod (Python's sign rule, or C's fmod), BitShift (shifts past the
// width give 0, not UB) and BitwiseAnd/Or/Xor/Not.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"
#include "lowering/shape_store.h"

namespace disco {
namespace {

using Halide::Expr;

bool is_unsigned_int(DType t) { return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64; }

// Sets output 0 and returns its shape.
Shape infer_same_dtype_binary(InferContext &c) {
  if (c.dtype(0) != c.dtype(1))
    c.fail("inputs have different dtypes: ", dtype_name(c.dtype(0)), " and ", dtype_name(c.dtype(1)));
  Shape out = c.broadcast(c.shape(0), c.shape(1));
  c.set_output(0, c.dtype(0), out);
  return out;
}

// Defines output 0 as op(a, b) over the broadcast operands.
template <class Op>
void lower_broadcast_binary(LowerContext &c, const Op &op) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto idx = c.exprs(v);
  c.define_output(0, v, op(c.broadcast_read(0, idx, os), c.broadcast_read(1, idx, os)));
}

// ---- Mod ------------------------------------------------------------------------

// Mod of two shape values, where the store knows the signs it needs: with
// the divisor's sign (fmod=0) that is floor_mod, for either sign of x; with
// the dividend's (fmod=1) it is floor_mod where x >= 0 and minus that of -x
// where x <= 0. Anything else does not fold (nor a divisor of 0). Swin's
// pad to whole windows, (7 - W % 7) % 7, stays symbolic so, not a value
// that one input's shape compiles in.
std::optional<Dim> mod_dims(const Dim &x, const Dim &y, bool fmod, const ShapeStore &st) {
  if (y.is_const(0)) return std::nullopt;
  const std::optional<bool> positive = divisor_is_positive(y, st);
  if (!positive) return std::nullopt;
  if (!fmod) return floor_mod(x, y);
  const Dim d = *positive ? y : -y;  // C's remainder ignores the divisor's sign
  if (st.is_nonnegative(x)) return floor_mod(x, d);
  if (st.is_nonnegative(-x)) return -floor_mod(-x, d);
  return std::nullopt;
}

void infer_mod(InferContext &c) {
  const Shape out = infer_same_dtype_binary(c);
  bool fmod = c.attrs().get_int("fmod", 0) != 0;
  if (dtype_is_float(c.dtype(0)) && !fmod) c.fail("float inputs need fmod=1");
  if (c.dtype(0) == DType::Bool) c.fail("Mod needs numeric inputs");
  fold_binary_dims(c, out, [&](const Dim &x, const Dim &y) { return mod_dims(x, y, fmod, c.store()); });
}

// C's fmod: the remainder takes the dividend's sign. Computed in float64, where
// the quotient of two float32 values truncates exactly.
Expr float_fmod(const Expr &a, const Expr &b) {
  Expr x = Halide::cast(Halide::Float(64), a), y = Halide::cast(Halide::Float(64), b);
  return x - y * Halide::trunc(x / y);
}

// Halide's integer % is Euclidean (never negative; x % 0 is 0). ONNX wants the
// divisor's sign (fmod=0, Python) or the dividend's (fmod=1, C). Narrow types
// compute in int64 so that |b| of the most negative value cannot overflow.
Expr int_mod(const Expr &a, const Expr &b, bool fmod) {
  Halide::Type t = a.type();
  if (t.is_uint()) return a % b;
  Halide::Type w = t.bits() < 64 ? Halide::Int(64) : t;
  Expr x = Halide::cast(w, a), y = Halide::cast(w, b);
  Expr r = x % y;  // in [0, |y|)
  Expr zero = Halide::cast(w, 0);
  Expr ay = Halide::select(y < 0, -y, y);
  if (fmod) return Halide::select(x < 0 && r != zero, r - ay, r);
  return Halide::select(y < 0 && r != zero, r + y, r);
}

void lower_mod(LowerContext &c) {
  bool fmod = c.attrs().get_int("fmod", 0) != 0;
  bool is_float = dtype_is_float(c.in(0).dtype);
  lower_broadcast_binary(c, [&](const Expr &a, const Expr &b) {
    return is_float ? float_fmod(a, b) : int_mod(a, b, fmod);
  });
}

// ---- BitShift, Bitwise* -----------------------------------------------------------

void infer_bitshift(InferContext &c) {
  infer_same_dtype_binary(c);
  if (!is_unsigned_int(c.dtype(0))) c.fail("BitShift needs unsigned integer inputs, got ", dtype_name(c.dtype(0)));
  std::string dir = c.attrs().get_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") c.fail("direction must be LEFT or RIGHT, got '", dir, "'");
}

void lower_bitshift(LowerContext &c) {
  bool left = c.attrs().get_string("direction", "") == "LEFT";
  lower_broadcast_binary(c, [&](const Expr &a, const Expr &b) {
    Halide::Type t = a.type();
    Expr shifted = left ? a << b : a >> b;
    return Halide::select(b >= Halide::cast(t, t.bits()), Halide::cast(t, 0), shifted);
  });
}

void infer_bitwise(InferContext &c) {
  bool is_not = c.node().op_type == "BitwiseNot";
  if (!is_not) infer_same_dtype_binary(c);
  else c.set_output(0, c.dtype(0), c.shape(0));
  if (dtype_is_float(c.dtype(0))) c.fail("needs integer or bool inputs, got ", dtype_name(c.dtype(0)));
}

void lower_bitwise(LowerContext &c) {
  const std::string &op = c.node().op_type;
  if (op == "BitwiseNot") {
    auto v = c.vars(c.in(0).rank());
    Expr x = c.in(0).at(c.exprs(v));
    return c.define_output(0, v, x.type().is_bool() ? !x : ~x);
  }
  lower_broadcast_binary(c, [&](const Expr &a, const Expr &b) {
    if (op == "BitwiseAnd") return a & b;
    if (op == "BitwiseOr") return a | b;
    return a ^ b;
  });
}

}  // namespace

void register_integer_ops(OpRegistry &r) {
  r.add("Mod", 10, OpKind::Elementwise, infer_mod, lower_mod);
  r.add("BitShift", 11, OpKind::Elementwise, infer_bitshift, lower_bitshift);
  for (const char *op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"})
    r.add(op, 18, OpKind::Elementwise, infer_bitwise, lower_bitwise);
}

}  // namespace disco
