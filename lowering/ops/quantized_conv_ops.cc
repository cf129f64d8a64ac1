// Integer convolutions: ConvInteger (int32 sums of zero-point-shifted 8-bit
// data) and QLinearConv (the same sum requantized to 8 bits). The geometry and
// the sum are Conv's (window.h); only the reads and the output differ.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"
#include "lowering/ops/window.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

bool is_8bit(DType t) { return t == DType::U8 || t == DType::I8; }

// A per-tensor (scalar or one element) or per-output-channel parameter: a
// clamped read serves both, whichever the shape turns out to be at run time.
Expr per_channel(LowerContext &c, int i, const Expr &m, Halide::Type t) {
  const HTensor &p = c.in(i);
  if (p.rank() == 0) return Halide::cast(t, scalar_read(p));
  std::vector<Expr> idx(p.rank(), Expr(0));
  idx.back() = clamp_index(c, m, p.shape.back());
  return Halide::cast(t, p.at(idx));
}

void require_param(InferContext &c, int i, const std::string &name) {
  if (!c.has_input(i)) return;
  if (c.rank(i) > 1) c.fail(name, " must be a scalar or 1-D, got ", shape_str(c.shape(i)));
}

// ---- ConvInteger -----------------------------------------------------------

void infer_conv_integer(InferContext &c) {
  if (!is_8bit(c.dtype(0)) || !is_8bit(c.dtype(1))) c.fail("x and w must be int8 or uint8");
  require_param(c, 2, "x_zero_point");
  require_param(c, 3, "w_zero_point");
  c.set_output(0, DType::I32, infer_conv_shape(c, ConvInputs{0, 1, -1}));
}

void lower_conv_integer(LowerContext &c) {
  Halide::Type acc = Halide::Int(32);
  auto v = c.vars(c.in(0).rank());
  Expr xz = c.has_input(2) ? Halide::cast(acc, scalar_read(c.in(2))) : Expr(0);
  auto read_x = [&](const std::vector<Expr> &i) { return Halide::cast(acc, c.in(0).at(i)) - xz; };
  auto read_w = [&](const std::vector<Expr> &i) {
    Expr wz = c.has_input(3) ? per_channel(c, 3, i[0], acc) : Expr(0);
    return Halide::cast(acc, c.in(1).at(i)) - wz;
  };
  define_accumulated(c, v, acc, "conv", [&](Func &f, const std::vector<Var> &) {
    define_conv_sum(c, ConvInputs{0, 1, -1}, acc, read_x, read_w, Halide::cast(acc, 0), f, output_domain(c, v));
  });
}

// ---- QLinearConv -----------------------------------------------------------

// Inputs: 0 x, 1 x_scale, 2 x_zero_point, 3 w, 4 w_scale, 5 w_zero_point,
// 6 y_scale, 7 y_zero_point, 8 B (int32, optional).
const ConvInputs kQLinear{0, 3, 8};

void infer_qlinear_conv(InferContext &c) {
  if (!is_8bit(c.dtype(0)) || !is_8bit(c.dtype(3))) c.fail("x and w must be int8 or uint8");
  if (!is_8bit(c.dtype(7))) c.fail("y_zero_point must be int8 or uint8");
  for (int i : {1, 2, 4, 5, 6, 7}) require_param(c, i, "input " + std::to_string(i));
  if (c.has_input(8) && c.dtype(8) != DType::I32) c.fail("B must be int32");
  c.set_output(0, c.dtype(7), infer_conv_shape(c, kQLinear));
}

// y = saturate(round(sum * x_scale * w_scale[m] / y_scale) + y_zero_point),
// rounding half to even.
void lower_qlinear_conv(LowerContext &c) {
  Halide::Type acc = Halide::Int(32), f32 = Halide::Float(32);
  auto v = c.vars(c.in(0).rank());
  Expr m = v[1];
  Expr xz = Halide::cast(acc, scalar_read(c.in(2)));
  auto read_x = [&](const std::vector<Expr> &i) { return Halide::cast(acc, c.in(0).at(i)) - xz; };
  auto read_w = [&](const std::vector<Expr> &i) {
    return Halide::cast(acc, c.in(3).at(i)) - per_channel(c, 5, i[0], acc);
  };
  Expr init = c.has_input(8) ? Halide::cast(acc, c.in(8).at({m})) : Halide::cast(acc, 0);
  Func sum = c.func("conv");
  define_conv_sum(c, kQLinear, acc, read_x, read_w, init, sum, output_domain(c, v));
  c.add_stage(sum, StageKind::Reduction, static_cast<int>(v.size()));
  Expr scale =
      Halide::cast(f32, scalar_read(c.in(1))) * per_channel(c, 4, m, f32) / Halide::cast(f32, scalar_read(c.in(6)));
  Expr y = Halide::round(Halide::cast(f32, sum(reversed(v))) * scale) + Halide::cast(f32, scalar_read(c.in(7)));
  Halide::Type out = halide_type(c.out_dtype(0));
  c.define_output(0, v,
                  Halide::cast(out, Halide::clamp(y, Halide::cast(f32, out.min()), Halide::cast(f32, out.max()))));
}

}  // namespace

void register_quantized_conv_ops(OpRegistry &r) {
  r.add("ConvInteger", 10, OpKind::Dot, infer_conv_integer, lower_conv_integer);
  r.add("QLinearConv", 10, OpKind::Dot, infer_qlinear_conv, lower_qlinear_conv);
}

}  // namespace disco
