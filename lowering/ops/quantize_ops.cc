// Linear quantization: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, and the integer matmuls MatMulInteger and
// QLinearMatMul. Scales and zero points are per tensor (one element) or per
// axis (1-D); a 1-D one whose extent is 1 at run time acts per tensor, so a
// `[1]` scale stays valid when every dim is symbolic.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;

// Element `i` of a per-axis parameter, element 0 of a per-tensor one.
Expr param_at(LowerContext &c, int input, const Expr &i) {
  const HTensor &t = c.in(input);
  if (t.rank() == 0) return t.at({});
  if (t.rank() > 1) return scalar_read(t);
  const Dim &n = t.shape[0];
  if (c.store().canonical(n).is_const(1)) return t.at({0});
  return t.at({Halide::select(c.dim(n) == 1, 0, clamp_index(c, i, n))});
}

// round-half-even(v) + zero point, saturated to the output type.
Expr saturate_round(const Expr &v, const Expr &zero_point, DType out) {
  Halide::Type t = halide_type(out);
  Expr q = Halide::round(v) + Halide::cast(v.type(), zero_point);
  return Halide::cast(t, Halide::clamp(q, Halide::cast(v.type(), t.min()), Halide::cast(v.type(), t.max())));
}

void require_param_shape(InferContext &c, int input, const Dim &axis_extent, const std::string &what) {
  if (!c.has_input(input)) return;
  const Shape &s = c.shape(input);
  if (s.size() > 1) c.fail(what, " must be a scalar or 1-D, got ", shape_str(s));
  if (s.size() == 1) c.broadcast_dim(s[0], axis_extent, what + " extent (" + s[0].str() + ") vs its axis");
}

// The axis a 1-D scale runs along (`axis`, since opset 13); -1 for a
// per-tensor scale (before opset 13 every scale is one, `[1]` included).
int64_t quant_axis(const NodeContext &c, int64_t rank, int64_t scale_rank) {
  if (scale_rank == 0 || c.opset() < 13) return -1;
  return normalize_axis(c, c.attrs().get_int("axis", 1), rank);
}

// ---- QuantizeLinear, DequantizeLinear -------------------------------------------

void infer_quantize(InferContext &c) {
  int64_t axis = quant_axis(c, c.rank(0), c.rank(1));
  Dim extent = axis >= 0 ? c.shape(0)[axis] : Dim(1);
  require_param_shape(c, 1, extent, "y_scale");
  require_param_shape(c, 2, extent, "y_zero_point");
  DType out = c.has_input(2) ? c.dtype(2) : DType::U8;
  if (out != DType::U8 && out != DType::I8) c.fail("y_zero_point must be uint8 or int8, got ", dtype_name(out));
  c.set_output(0, out, c.shape(0));
}

// The output's vars, x at them, and the index into the per-axis scale and
// zero point there.
struct QuantElement {
  std::vector<Halide::Var> v;
  Expr x, param_index;
};

QuantElement quant_element(LowerContext &c) {
  const HTensor &x = c.in(0);
  int64_t axis = quant_axis(c, x.rank(), c.in(1).rank());
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  return {v, x.at(idx), axis >= 0 ? idx[axis] : Expr(0)};
}

void lower_quantize(LowerContext &c) {
  QuantElement e = quant_element(c);
  Expr scale = Halide::cast(Halide::Float(32), param_at(c, 1, e.param_index));
  Expr zp = c.has_input(2) ? param_at(c, 2, e.param_index) : Expr(0);
  c.define_output(0, e.v, saturate_round(Halide::cast(Halide::Float(32), e.x) / scale, zp, c.out_dtype(0)));
}

void infer_dequantize(InferContext &c) {
  int64_t axis = quant_axis(c, c.rank(0), c.rank(1));
  Dim extent = axis >= 0 ? c.shape(0)[axis] : Dim(1);
  require_param_shape(c, 1, extent, "x_scale");
  require_param_shape(c, 2, extent, "x_zero_point");
  if (!dtype_is_float(c.dtype(1))) c.fail("x_scale must be a float tensor");
  c.set_output(0, c.dtype(1), c.shape(0));
}

void lower_dequantize(LowerContext &c) {
  QuantElement e = quant_element(c);
  Halide::Type f = Halide::Float(32);
  Expr zp = c.has_input(2) ? Halide::cast(f, param_at(c, 2, e.param_index)) : Halide::cast(f, 0);
  c.define_output(0, e.v, (Halide::cast(f, e.x) - zp) * Halide::cast(f, param_at(c, 1, e.param_index)));
}

// ---- DynamicQuantizeLinear -----------------------------------------------------------

void infer_dynamic_quantize(InferContext &c) {
  if (c.dtype(0) != DType::F32) c.fail("x must be float32, got ", dtype_name(c.dtype(0)));
  c.set_output(0, DType::U8, c.shape(0));
  c.set_output(1, DType::F32, {});
  c.set_output(2, DType::U8, {});
}

// The range always includes 0, so that 0 quantizes exactly.
void lower_dynamic_quantize(LowerContext &c) {
  const HTensor &x = c.in(0);
  Halide::Type f = Halide::Float(32);
  auto range_end = [&](const char *name, bool is_max) {
    Func r = c.func(name);
    r() = Halide::cast(f, 0);
    if (x.rank() > 0) {
      Expr e = x.at(rdom_vars(make_rdom(c, x.shape)));
      r() = is_max ? Halide::max(r(), e) : Halide::min(r(), e);
    }
    c.add_stage(r, StageKind::Reduction, 0);
    return r;
  };
  Func lo = range_end("min", false), hi = range_end("max", true);
  Func params = c.func("params");
  Expr scale = (hi() - lo()) / 255.0f;
  // An all-zero input has scale 0: every value quantizes to zero point 0.
  Expr zp = Halide::select(scale == 0, Halide::cast(f, 0), Halide::clamp(Halide::round(-lo() / scale), 0.0f, 255.0f));
  params() = Halide::Tuple(scale, zp);
  c.add_stage(params, StageKind::Other, 0);
  Expr s = params()[0], z = params()[1];
  auto v = c.vars(x.rank());
  Expr y = saturate_round(x.at(c.exprs(v)) / s, z, DType::U8);
  c.define_output(0, v, Halide::select(s == 0, Halide::cast(Halide::UInt(8), z), y));
  c.define_output(1, {}, s);
  c.define_output(2, {}, Halide::cast(Halide::UInt(8), z));
}

// ---- MatMulInteger, QLinearMatMul ----------------------------------------------------

// numpy matmul shapes, as MatMul's: a 1-D A is a row, a 1-D B a column.
Shape matmul_shape(InferContext &c, int ia, int ib) {
  const Shape &a = c.shape(ia), &b = c.shape(ib);
  if (a.empty() || b.empty()) c.fail("matmul operands must have rank >= 1");
  c.require_equal(a.back(), b.size() == 1 ? b[0] : b[b.size() - 2], "matmul inner dims must match");
  Shape out = c.broadcast(Shape(a.begin(), a.end() - std::min<size_t>(a.size(), 2)),
                          Shape(b.begin(), b.end() - std::min<size_t>(b.size(), 2)));
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  return out;
}

void require_int8(InferContext &c, int i, const char *what) {
  if (c.has_input(i) && c.dtype(i) != DType::U8 && c.dtype(i) != DType::I8)
    c.fail(what, " must be uint8 or int8, got ", dtype_name(c.dtype(i)));
}

// sum_k (a[m,k] - a_zp[m]) * (b[k,n] - b_zp[n]) in int32, as a stage over the
// output's index; `ia`/`ib` and `iaz`/`ibz` are the inputs of A, B and their
// zero points (-1: none).
Func integer_matmul(LowerContext &c, int ia, int ib, int iaz, int ibz, const std::vector<Halide::Var> &v) {
  const HTensor &a = c.in(ia), &b = c.in(ib);
  const Shape &out = c.out_shape(0);
  int rank = static_cast<int>(out.size());
  int batch_rank = rank - (a.rank() >= 2) - (b.rank() >= 2);
  auto idx = c.exprs(v);
  std::vector<Expr> batch(idx.begin(), idx.begin() + batch_rank);
  Shape batch_shape(out.begin(), out.begin() + batch_rank);
  Expr m = a.rank() >= 2 ? idx[batch_rank] : Expr(0), n = b.rank() >= 2 ? idx.back() : Expr(0);
  Halide::RDom k(0, c.dim(a.shape.back()));
  Halide::Type i32 = Halide::Int(32);
  std::vector<Expr> ta = a.rank() >= 2 ? std::vector<Expr>{m, k.x} : std::vector<Expr>{k.x};
  Expr av = Halide::cast(i32, matmul_read(c, ia, batch, batch_shape, ta));
  if (iaz >= 0 && c.has_input(iaz)) av = av - Halide::cast(i32, param_at(c, iaz, m));
  // B less its zero point, through a DotOperand stage (op_helpers.h) where B is a matrix.
  auto read_b = [&](const Expr &bn, const Expr &bk) {
    std::vector<Expr> tb = b.rank() >= 2 ? std::vector<Expr>{bk, bn} : std::vector<Expr>{bk};
    Expr bv = Halide::cast(i32, matmul_read(c, ib, batch, batch_shape, tb));
    if (ibz >= 0 && c.has_input(ibz)) bv = bv - Halide::cast(i32, param_at(c, ibz, bn));
    return bv;
  };
  Expr bv;
  if (b.rank() >= 2) {
    const std::vector<Halide::Var> rest(v.begin(), v.begin() + batch_rank);  // the batch vars, outermost first
    bv = dot_operand(c, reversed(rest), read_b)(n, k.x);
  } else {
    bv = read_b(n, k.x);
  }
  Func sum = c.func("acc");
  auto lhs = reversed(v);
  sum(lhs) = 0;
  sum(lhs) += av * bv;
  c.add_stage(sum, StageKind::Reduction, rank);
  return sum;
}

void infer_matmul_integer(InferContext &c) {
  require_int8(c, 0, "A");
  require_int8(c, 1, "B");
  require_int8(c, 2, "a_zero_point");
  require_int8(c, 3, "b_zero_point");
  c.set_output(0, DType::I32, matmul_shape(c, 0, 1));
}

void lower_matmul_integer(LowerContext &c) {
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  Func sum = integer_matmul(c, 0, 1, 2, 3, v);
  c.define_output(0, v, sum(reversed(c.exprs(v))));
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
void infer_qlinear_matmul(InferContext &c) {
  for (int i : {0, 2, 3, 5, 7}) require_int8(c, i, "quantized input");
  c.set_output(0, c.dtype(7), matmul_shape(c, 0, 3));
}

void lower_qlinear_matmul(LowerContext &c) {
  const Shape &out = c.out_shape(0);
  auto v = c.vars(static_cast<int>(out.size()));
  auto idx = c.exprs(v);
  Func sum = integer_matmul(c, 0, 3, 2, 5, v);
  Expr m = c.in(0).rank() >= 2 ? idx[idx.size() - (c.in(3).rank() >= 2 ? 2 : 1)] : Expr(0);
  Expr n = c.in(3).rank() >= 2 ? idx.back() : Expr(0);
  Halide::Type f = Halide::Float(32);
  Expr scale = Halide::cast(f, param_at(c, 1, m)) * Halide::cast(f, param_at(c, 4, n)) /
               Halide::cast(f, param_at(c, 6, Expr(0)));
  Expr y = Halide::cast(f, sum(reversed(idx))) * scale;
  c.define_output(0, v, saturate_round(y, param_at(c, 7, Expr(0)), c.out_dtype(0)));
}

}  // namespace

void register_quantize_ops(OpRegistry &r) {
  r.add("QuantizeLinear", 10, OpKind::Elementwise, infer_quantize, lower_quantize);
  r.add("DequantizeLinear", 10, OpKind::Elementwise, infer_dequantize, lower_dequantize);
  r.add("DynamicQuantizeLinear", 11, OpKind::Reduction, infer_dynamic_quantize, lower_dynamic_quantize);
  r.add("MatMulInteger", 10, OpKind::Dot, infer_matmul_integer, lower_matmul_integer);
  r.add("QLinearMatMul", 10, OpKind::Dot, infer_qlinear_matmul, lower_qlinear_matmul);
}

}  // namespace disco
