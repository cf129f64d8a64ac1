// Activations with attributes: Elu, Selu, Celu, LeakyRelu, ThresholdedRelu,
// HardSigmoid, HardSwish, Softplus, Softsign, Shrink, Mish, Gelu, and PRelu
// with its slope broadcast to the input. Half types compute in float32.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// Shrink takes every numeric type; integers compute in float64, where their
// values and the float thresholds compare exactly.
void lower_shrink(LowerContext &c) {
  const HTensor &in = c.in(0);
  auto v = c.vars(in.rank());
  Halide::Type t = dtype_is_float(in.dtype) ? acc_type(in.dtype) : Halide::Float(64);
  Expr x = Halide::cast(t, in.at(c.exprs(v)));
  Expr lambd = Halide::cast(t, c.attrs().get_float("lambd", 0.5f));
  Expr bias = Halide::cast(t, c.attrs().get_float("bias", 0.0f));
  c.define_output(0, v, Halide::select(x < -lambd, x + bias, x > lambd, x - bias, Halide::cast(t, 0)));
}

// ---- PRelu -------------------------------------------------------------------

// The slope broadcasts to X (unidirectionally): the output keeps X's shape.
// X's first dim that the slope's dims line up with: X's last dims from
// opset 7 (numpy's rule); before, a one-dim slope of several values is per
// channel, X's dim 1 (what the exporters of the time wrote for [N, C, ...]).
size_t prelu_slope_axis(const NodeContext &c, const Shape &x, const Shape &s) {
  if (s.size() > x.size()) c.fail("slope ", shape_str(s), " has more dims than X ", shape_str(x));
  if (c.opset() < 7 && s.size() == 1 && x.size() >= 2 && !c.store().canonical(s[0]).is_const(1)) return 1;
  return x.size() - s.size();
}

void infer_prelu(InferContext &c) {
  if (c.dtype(1) != c.dtype(0))
    c.fail("slope has dtype ", dtype_name(c.dtype(1)), ", X has ", dtype_name(c.dtype(0)));
  const Shape &x = c.shape(0), &s = c.shape(1);
  const size_t axis = prelu_slope_axis(c, x, s);
  for (size_t i = 0; i < s.size(); ++i) {
    const Dim &d = s[i], &o = x[axis + i];
    if (c.store().canonical(d).is_const(1) || c.store().same_dim(d, o)) continue;
    c.require_equal(d, o, "slope dim " + std::to_string(i) + " must be 1 or X's");
  }
  c.set_output(0, c.dtype(0), x);
}

void lower_prelu(LowerContext &c) {
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto idx = c.exprs(v);
  // The slope's dims against X's [axis, axis + rank): numpy's rule over X's
  // first axis + rank dims.
  const size_t end = prelu_slope_axis(c, os, c.in(1).shape) + c.in(1).rank();
  Expr x = c.in(0).at(idx);
  Expr slope = c.broadcast_read(1, {idx.begin(), idx.begin() + end}, Shape(os.begin(), os.begin() + end));
  c.define_output(0, v, Halide::select(x < Halide::cast(x.type(), 0), slope * x, x));
}

}  // namespace

void register_activation_ops(OpRegistry &r) {
  // Each gets x in a float type and the node's attributes; constants are cast to x's type.
  using Args = const UnaryArgs &;
  add_float_unary(r, "Elu", {[](const Expr &x, Args u) {
                    Expr alpha = Halide::cast(x.type(), u.attrs.get_float("alpha", 1.0f));
                    return Halide::select(x < 0, alpha * math::expm1(x), x);
                  }});
  add_float_unary(r, "Selu", {[](const Expr &x, Args u) {
                    Expr alpha = Halide::cast(x.type(), u.attrs.get_float("alpha", 1.67326319217681884765625f));
                    Expr gamma = Halide::cast(x.type(), u.attrs.get_float("gamma", 1.05070102214813232421875f));
                    return gamma * Halide::select(x <= 0, alpha * math::expm1(x), x);
                  }});
  add_float_unary(r, "Celu", {[](const Expr &x, Args u) {
                    Expr alpha = Halide::cast(x.type(), u.attrs.get_float("alpha", 1.0f));
                    Expr zero = Halide::cast(x.type(), 0);
                    return math::max(x, zero) + math::min(alpha * math::expm1(x / alpha), zero);
                  }});
  add_float_unary(r, "LeakyRelu", {[](const Expr &x, Args u) {
                    return Halide::select(x < 0, Halide::cast(x.type(), u.attrs.get_float("alpha", 0.01f)) * x, x);
                  }});
  add_float_unary(r, "ThresholdedRelu", {[](const Expr &x, Args u) {
                    Expr alpha = Halide::cast(x.type(), u.attrs.get_float("alpha", 1.0f));
                    return Halide::select(x > alpha, x, Halide::cast(x.type(), 0));
                  }});
  add_float_unary(r, "HardSigmoid", {[](const Expr &x, Args u) {
                    Expr alpha = Halide::cast(x.type(), u.attrs.get_float("alpha", 0.2f));
                    Expr beta = Halide::cast(x.type(), u.attrs.get_float("beta", 0.5f));
                    return math::clamp(alpha * x + beta, Halide::cast(x.type(), 0), Halide::cast(x.type(), 1));
                  }});
  add_float_unary(r, "HardSwish", {[](const Expr &x, Args) {
                    Expr alpha = Halide::cast(x.type(), 1.0f / 6.0f), beta = Halide::cast(x.type(), 0.5f);
                    return x * Halide::clamp(alpha * x + beta, Halide::cast(x.type(), 0), Halide::cast(x.type(), 1));
                  }});
  add_float_unary(r, "Softplus", {[](const Expr &x, Args) { return math::softplus(x); }});
  add_float_unary(r, "Softsign", {[](const Expr &x, Args) { return x / (1 + Halide::abs(x)); }});
  add_float_unary(r, "Mish", {[](const Expr &x, Args) { return math::mish(x); }});
  add_float_unary(r, "Gelu", {[](const Expr &x, Args u) {
                    return u.attrs.get_string("approximate", "none") == "tanh" ? math::gelu_tanh(x) : math::gelu_erf(x);
                  }},
                  20);
  r.add("Shrink", 9, OpKind::Elementwise, infer_numeric_unary, lower_shrink);
  r.add("PRelu", 1, OpKind::Elementwise, infer_prelu, lower_prelu);
}

}  // namespace disco
