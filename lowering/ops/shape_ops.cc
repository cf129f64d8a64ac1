// Ops whose outputs are shapes or are made from attributes and shapes alone:
// Shape, Size, Constant, ConstantOfShape, Range.
//
// Inference keeps shapes symbolic: shape values flowing through
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape are folded to dims, so a
// model's `x.reshape(b, s, 12, 64)` gets a symbolic target. Shape and Size
// start those chains; their outputs are always folded and never lowered.
#include <algorithm>
#include <cmath>

#include "lowering/constant_folding.h"
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

Expr constant_expr(const TensorData &t, int64_t i, Halide::Type ty) {
  if (dtype_is_float(t.dtype)) return Halide::cast(ty, Expr(t.float_at(i)));
  return Halide::cast(ty, Expr(t.int_at(i)));
}

// ---- Shape, Size ------------------------------------------------------------

void infer_shape(InferContext &c) {
  const Shape &s = c.shape(0);
  int64_t r = static_cast<int64_t>(s.size()), start = 0, end = r;
  if (c.opset() >= 15) {
    // Opset 15's start/end are clamped, never rejected.
    start = c.attrs().get_int("start", 0);
    end = c.attrs().get_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
  }
  std::vector<Dim> dims(s.begin() + start, s.begin() + end);
  c.set_output(0, DType::I64, {Dim(static_cast<int64_t>(dims.size()))});
  c.set_dims_value(0, dims);
}

void infer_size(InferContext &c) {
  c.set_output(0, DType::I64, {});
  c.set_dims_value(0, {num_elements(c.shape(0))});
}

// ---- Constant, ConstantOfShape, Range ---------------------------------------

void infer_constant(InferContext &c) {
  const AttrReader &a = c.attrs();
  if (a.has("sparse_value")) c.fail("sparse_value constants are not supported");
  if (a.has("value_string") || a.has("value_strings")) c.fail("string constants are not supported");
  int given = a.has("value") + a.has("value_float") + a.has("value_floats") + a.has("value_int") + a.has("value_ints");
  if (given != 1) c.fail("needs exactly one of value, value_float(s), value_int(s); got ", given);
  if (a.has("value")) return c.set_constant(0, a.get_tensor("value"));
  if (a.has("value_int")) return c.set_constant(0, TensorData::from_int64({a.get_int("value_int")}, {}));
  if (a.has("value_ints")) {
    auto v = a.get_ints("value_ints");
    return c.set_constant(0, TensorData::from_int64(v, {static_cast<int64_t>(v.size())}));
  }
  if (a.has("value_float")) return c.set_constant(0, TensorData::scalar_f32(a.get_float("value_float", 0)));
  auto f = a.get_floats("value_floats");
  TensorData t(DType::F32, {static_cast<int64_t>(f.size())});
  std::copy(f.begin(), f.end(), t.mutable_as<float>());
  c.set_constant(0, t);
}

TensorData fill_value(const AttrReader &a) {
  if (!a.has("value")) return TensorData::scalar_f32(0);
  return a.get_tensor("value");
}

void infer_constant_of_shape(InferContext &c) {
  TensorData value = fill_value(c.attrs());
  if (value.num_elements() != 1) c.fail("value must have one element, has ", value.num_elements());
  auto dims = std::optional<std::vector<Dim>>(c.required_dims(0, "the shape input"));
  Shape out;
  for (const auto &d : *dims) {
    Dim x = c.store().canonical(d);
    if (x.is_const() && x.as_const() < 0) c.fail("shape has a negative dim ", x.as_const());
    out.push_back(x);
  }
  c.set_output(0, value.dtype, out);
  // Constant results up to constant folding's bound fold here, a fill, so
  // Where/Equal chains over them keep folding, without a JIT compile each.
  Dim n = c.store().canonical(num_elements(out));
  if (!n.is_const() || n.as_const() > kMaxFoldedElements) return;
  // No elements is a constant count with symbolic dims beside a 0: [0, height] (maskrcnn's empty masks).
  for (const auto &d : out)
    if (!d.is_const()) return;
  std::vector<int64_t> shape;
  for (const auto &d : out) shape.push_back(d.as_const());
  TensorData t(value.dtype, shape);
  size_t es = dtype_size(value.dtype);
  for (int64_t i = 0; i < n.as_const(); ++i) std::copy(value.data(), value.data() + es, t.mutable_data() + i * es);
  c.set_constant(0, t);
}

void lower_constant_of_shape(LowerContext &c) {
  TensorData value = fill_value(c.attrs());
  auto v = c.vars(static_cast<int>(c.out_shape(0).size()));
  c.define_output(0, v, constant_expr(value, 0, halide_type(value.dtype)));
}

// The element count of a Range whose inputs are constants: ONNX's
// max(ceil((limit - start) / delta), 0), without overflow.
int64_t range_count(InferContext &c) {
  const TensorData &s = *c.constant(0), &l = *c.constant(1), &d = *c.constant(2);
  if (dtype_is_float(c.dtype(0))) {
    const double delta = d.float_at(0);
    if (delta == 0) c.fail("delta is 0");
    const double n = std::max(std::ceil((l.float_at(0) - s.float_at(0)) / delta), 0.0);
    if (!(n < 0x1p62)) c.fail("the range has ", n, " elements, more than 2^62");
    return static_cast<int64_t>(n);
  }
  const __int128 start = s.int_at(0), delta = d.int_at(0), span = static_cast<__int128>(l.int_at(0)) - start;
  if (delta == 0) c.fail("delta is 0");
  const __int128 n = delta > 0 ? (span > 0 ? (span + delta - 1) / delta : 0) : (span < 0 ? (-span - delta - 1) / -delta : 0);
  if (n > INT64_MAX) c.fail("the range has more than 2^63 elements");
  return static_cast<int64_t>(n);
}

// Fills a Range of `n` elements whose inputs are constants.
TensorData range_constant(InferContext &c, int64_t n) {
  DType t = c.dtype(0);
  const TensorData &s = *c.constant(0), &d = *c.constant(2);
  if (dtype_is_float(t)) {
    double start = s.float_at(0), delta = d.float_at(0);
    TensorData out(t, {n});
    for (int64_t i = 0; i < n; ++i) {
      double x = start + static_cast<double>(i) * delta;
      if (t == DType::F32) out.mutable_as<float>()[i] = static_cast<float>(x);
      else if (t == DType::F64) out.mutable_as<double>()[i] = x;
      else c.fail("Range of dtype ", dtype_name(t), " is not supported");
    }
    return out;
  }
  int64_t start = s.int_at(0), delta = d.int_at(0);
  std::vector<int64_t> vals;
  for (int64_t i = 0; i < n; ++i) vals.push_back(start + i * delta);
  TensorData i64 = TensorData::from_int64(vals, {n});
  if (t == DType::I64) return i64;
  TensorData out(t, {n});
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case DType::I32: out.mutable_as<int32_t>()[i] = static_cast<int32_t>(vals[i]); break;
      case DType::I16: out.mutable_as<int16_t>()[i] = static_cast<int16_t>(vals[i]); break;
      default: c.fail("Range of dtype ", dtype_name(t), " is not supported");
    }
  }
  return out;
}

// Integers above it are not all float32s.
constexpr int64_t kExactF32 = int64_t{1} << 24;

// A Range's start, limit and delta as whole numbers. Integer Ranges take them
// from constants and shape values. A float Range whose inputs are not all
// constants (torch.arange(seq, dtype=float): Range(0.0, Cast(seq), 1.0)) is
// the integer Range converted, where start and delta are whole constants and
// the limit a shape value cast to float (elementwise.cc: infer_cast) or a
// whole constant; any other (delta 0.5, a limit from float arithmetic) still
// needs every input at compile time. The run-time checks in infer_range keep
// float32 elements exact.
struct WholeRange {
  Dim start, limit;
  int64_t delta;
};

WholeRange whole_range(const NodeContext &c) {
  static const char *kNames[] = {"start", "limit", "delta"};
  if (!dtype_is_float(c.dtype(0)))
    return {c.required_dims(0, kNames[0]).at(0), c.required_dims(1, kNames[1]).at(0),
            c.required_ints(2, kNames[2]).at(0)};
  Dim d[3];
  for (int i = 0; i < 3; ++i) {
    if (auto f = c.floats_value(i)) {
      const double x = f->at(0);
      if (std::floor(x) == x && std::fabs(x) <= static_cast<double>(kExactF32)) {
        d[i] = Dim(static_cast<int64_t>(x));
        continue;
      }
    } else if (auto v = c.dims_value(i); v && i < 2) {
      d[i] = v->at(0);
      continue;
    }
    // As for any value needed at compile time: ValueRequired, naming the
    // first input that is not a constant (a session then compiles the graph
    // inputs it comes from in).
    for (int j = 0; j < 3; ++j)
      if (!c.constant(j)) c.require_value(j, kNames[j]);
    c.fail("internal: a Range of constants was not folded");
  }
  return {d[0], d[1], d[2].as_const()};
}

void infer_range(InferContext &c) {
  for (int i = 1; i < 3; ++i)
    if (c.dtype(i) != c.dtype(0)) c.fail("start, limit and delta must share a dtype");
  for (int i = 0; i < 3; ++i)
    if (num_elements(c.shape(i)) != Dim(1)) c.fail("input ", i, " must be a scalar");
  if (c.constant(0) && c.constant(1) && c.constant(2)) {
    const int64_t n = range_count(c);
    // Larger ranges are left to the kernel: folding Range(0, 2^40, 1) filled
    // 8 TiB at compile time. The memory limit then speaks for the output.
    const bool is_float = dtype_is_float(c.dtype(0));
    if (is_float ? n <= kMaxFoldedBytes / static_cast<int64_t>(dtype_size(c.dtype(0))) : n <= kMaxFoldedElements)
      return c.set_constant(0, range_constant(c, n));
    if (is_float)
      c.fail("a float Range of ", n, " elements is above the constant-folding bound of ", kMaxFoldedBytes >> 20,
             " MiB (kMaxFoldedBytes in lowering/constant_folding.h), and float Ranges are only folded");
    return c.set_output(0, c.dtype(0), {Dim(n)});
  }
  const WholeRange w = whole_range(c);
  if (w.delta == 0) c.fail("delta is 0");
  Dim span = w.delta > 0 ? w.limit - w.start : w.start - w.limit;
  int64_t k = w.delta > 0 ? w.delta : -w.delta;
  Dim n = c.store().simplify_max(floor_div(span + (k - 1), Dim(k)), 0);
  c.set_output(0, c.dtype(0), {n});
  if (c.dtype(0) == DType::F32) {
    // Elements and count as float32 computes them only while its integers are exact.
    for (int i = 0; i < 2; ++i) {
      const Dim &e = i == 0 ? w.start : w.limit;
      if (c.store().canonical(e).is_const()) continue;
      const std::string msg = c.where() + ": float32 holds every integer only in [-2^24, 2^24], and this Range's " +
                              (i == 0 ? "start (" : "limit (") + e.str() + ") must lie there";
      c.store().add_check({RuntimeCheck::AtLeast, Dim(kExactF32), e, msg});
      c.store().add_check({RuntimeCheck::AtLeast, e, Dim(-kExactF32), msg});
    }
  }
  const Dim cn = c.store().canonical(n);
  if (!cn.is_const() || cn.as_const() > kMaxFolded) return;
  std::vector<Dim> vals;
  for (int64_t i = 0; i < cn.as_const(); ++i) vals.push_back(w.start + Dim(i * w.delta));
  fold_dims(c, 0, {n}, c.dtype(0), vals);
}

void lower_range(LowerContext &c) {
  const WholeRange w = whole_range(c);
  auto v = c.vars(1);
  Expr x = Halide::cast(Halide::Int(64), c.dim(w.start)) + Halide::cast(Halide::Int(64), v[0]) * Expr(w.delta);
  c.define_output(0, v, Halide::cast(halide_type(c.dtype(0)), x));
}

}  // namespace

void register_shape_ops(OpRegistry &r) {
  r.add("Shape", 1, OpKind::ShapeOnly, infer_shape, nullptr);
  r.add("Size", 1, OpKind::ShapeOnly, infer_size, nullptr);
  // Constant outputs are always folded.
  r.add("Constant", 1, OpKind::ShapeOnly, infer_constant, nullptr);
  // Generators: out[i] depends on i alone, so they fuse like elementwise ops.
  r.add("ConstantOfShape", 9, OpKind::Elementwise, infer_constant_of_shape, lower_constant_of_shape);
  r.add("Range", 11, OpKind::Elementwise, infer_range, lower_range);
}

}  // namespace disco
